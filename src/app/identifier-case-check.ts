import { foldsIdentifierCase } from '../schema/identifier-case.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { auditIdentifierCase } from '../store/identifier-case-audit.js';
import type { SqlDatabase } from '../store/sql-database.js';

/** Where the start-up check of email identifiers says what it found. */
export interface IdentifierCaseLog {
  warn(fields: object, message: string): void;
}

/**
 * At start-up, with an email identifier (compared ignoring case, stored lower-cased): warns of
 * accounts stored before that, whose identifier has upper-case letters. Sign-in, the email links
 * and OpenID Connect look identifiers up lower-cased, so these accounts are not found until their
 * identifier is lower-cased (docs/accounts.md#identifiers-stored-before-case-folding); identifiers
 * that then clash must be merged by hand. Nothing is changed here: the fix is the operator's.
 */
export async function checkIdentifierCase(schema: SchemaModel, db: SqlDatabase, log: IdentifierCaseLog): Promise<void> {
  const accounts = schema.accounts;
  if (accounts === undefined || !foldsIdentifierCase(accounts, schema.resources)) return;
  const { notFolded, clashes } = await auditIdentifierCase(db, accounts.resource, accounts.identifier);
  if (notFolded === 0) return;
  const field = `${accounts.resource}.${accounts.identifier}`;
  log.warn(
    { resource: accounts.resource, field: accounts.identifier, notLowerCase: notFolded, clashes },
    `${notFolded} ${field} value(s) have upper-case letters: email identifiers are compared ignoring case and looked up lower-cased, so these accounts cannot sign in until they are lower-cased` +
      (clashes > 0 ? `; ${clashes} lower-cased value(s) are shared by several accounts, merge those first` : '') +
      ' (docs/accounts.md#identifiers-stored-before-case-folding)',
  );
}
