import { fileFieldsOf, filesIn } from '../core/file-fields.js';
import { FilesMissingError } from '../errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { BulkRows } from '../store/bulk-rows.js';
import type { SqlExecutor } from '../store/sql-database.js';
import type { FileTransfer } from './file-transfer.js';

/** The files a source's rows reference that could not be carried: the first few, named, and how many in all. */
export interface UncarriedFiles {
  first: string[];
  count: number;
}

const NAMED = 20;

/**
 * Carries every file the rows of `reader` (a snapshot) reference, resource by resource, rows by
 * id, in keyset pages (memory stays bounded): `export data` and `copy` do this before writing a
 * row. A file that cannot be carried (missing, another size) does not stop the others: all are
 * counted, and the first named as `users 7 /avatar: its file … is not in …`.
 */
export async function carryReferencedFiles(schema: SchemaModel, rows: BulkRows, reader: SqlExecutor, transfer: FileTransfer): Promise<UncarriedFiles> {
  const uncarried: UncarriedFiles = { first: [], count: 0 };
  for (const resource of schema.resources.values()) {
    const fields = fileFieldsOf(resource);
    if (fields.length === 0) continue;
    for await (const record of rows.rows(resource, 1000, reader)) {
      for (const field of fields) {
        for (const file of filesIn(record[field.name])) {
          const failed = await transfer.carry(file);
          if (failed === undefined) continue;
          uncarried.count++;
          if (uncarried.first.length < NAMED) uncarried.first.push(`${resource.name} ${String(record.id)} /${field.name}: ${failed.reason}`);
        }
      }
    }
  }
  return uncarried;
}

/** The files not carried, as lines of a message: those named, then how many more. */
export function uncarriedLines({ first, count }: UncarriedFiles): string {
  const more = count - first.length;
  return [...first.map((line) => `  ${line}`), ...(more > 0 ? [`  … and ${more} more`] : [])].join('\n');
}

/** The error refusing a command (`exported`, `copied`) because files could not be carried: it names them, then says what to do. */
export function uncarriedError(uncarried: UncarriedFiles, done: string, advice: string): FilesMissingError {
  const n = uncarried.count;
  return new FilesMissingError(`${n} file${n === 1 ? '' : 's'} the rows reference could not be ${done}, so nothing was:\n${uncarriedLines(uncarried)}\n${advice}`);
}
