import { SchemaError } from '../../errors.js';
import type { AccountsModel } from '../../schema/accounts-model.js';
import type { ResourceModel } from '../../schema/schema-model.js';
import type { StoredRecord } from '../../store/list-spec.js';
import { matchesFilter } from '../filter-expression/filter-evaluator.js';
import { readFilterExpression } from '../filter-expression/filter-parser.js';

/** Whether an account's record makes it an admin (`accounts.admin`, docs/accounts.md#admin-accounts). */
export type AdminTest = (record: StoredRecord) => boolean;

/**
 * Compiles `accounts.admin`: a filter expression over the account's own fields (no relation paths,
 * no `@auth` references: it is judged on the record alone, in memory, at sign-in and refresh).
 * Undefined when the schema names no admin accounts.
 * @throws SchemaError at `accounts.admin` naming the problem and where it is
 */
export function compileAdminTest(accounts: AccountsModel, resource: ResourceModel): AdminTest | undefined {
  const text = accounts.admin;
  if (text === undefined) return undefined;
  const reading = readFilterExpression(text, resource, undefined);
  if (reading.problem !== undefined) {
    const where = reading.problem.includes(` at ${reading.offset}`) ? '' : ` (at character ${reading.offset})`;
    throw new SchemaError('schema', [{ path: 'accounts.admin', message: `in ${JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)}: ${reading.problem}${where}` }]);
  }
  const condition = reading.condition;
  return (record) => matchesFilter(condition, record, resource);
}
