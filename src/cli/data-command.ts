import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { exportLines } from '../core/bulk-export.js';
import { DatabaseNotFoundError, SchemaError } from '../errors.js';
import { compileSchema } from '../schema/compile-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { BulkRows } from '../store/bulk-rows.js';
import { recordedSchema } from '../store/migrate.js';
import { openDatabase, type OpenedDatabase } from '../store/open-database.js';
import { chooseSchema, databaseToOpen, sameCommandWith } from './schema-and-database.js';

export interface ExportDataFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  output?: string;
}

/**
 * `restgraph export data [-o file]`: every record of the database as NDJSON (see core/bulk-export.ts),
 * to the file or stdout. The resources are those the database was last migrated to.
 */
export async function runExportData(flags: ExportDataFlags): Promise<void> {
  const schemaChoice = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToOpen(flags.databaseUrl, process.env, schemaChoice, sameCommandWith);
  const opened = await openDatabase(database.url, { existing: true });
  try {
    const schema = await schemaOfDatabase(opened, schemaChoice.argument);
    const out: Writable = flags.output === undefined ? process.stdout : createWriteStream(flags.output);
    let count = 0;
    let chunk = '';
    for await (const line of exportLines(schema, new BulkRows(opened.db))) {
      chunk += `${line}\n`;
      count++;
      if (chunk.length >= 64 * 1024) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    if (chunk !== '') out.write(chunk);
    if (out !== process.stdout) {
      out.end();
      await once(out, 'finish');
      process.stderr.write(`Exported ${count} record${count === 1 ? '' : 's'} to ${flags.output ?? ''}.\n`);
    }
  } finally {
    await opened.db.close();
  }
}

/** The schema the database was last migrated to (what its tables hold). */
async function schemaOfDatabase({ db, description }: OpenedDatabase, schemaArgument: string | undefined): Promise<SchemaModel> {
  const definition = await recordedSchema(db);
  if (definition === undefined) {
    throw new DatabaseNotFoundError(
      `The database ${description} holds no restgraph schema (only \`restgraph serve\` and \`restgraph migrate\` create one): ` +
        `npx restgraph migrate${schemaArgument === undefined ? ' <schema-file>' : ` ${schemaArgument}`} -d ${description}`,
    );
  }
  const { model, problems } = compileSchema(definition);
  if (model === undefined) throw new SchemaError(description, problems);
  return model;
}
