import { prepareDbJsonDatabase, type DbJsonSource } from '../core/db-json-import.js';
import { DatabaseNotEmptyError, DestructiveMigrationError, ImportRejectedError, SchemaError } from '../errors.js';
import { compileSchema } from '../schema/compile-schema.js';
import { inferSchema, type InferOptions, type InferredSchema } from '../schema/infer-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { databaseTarget, openDatabase } from '../store/open-database.js';
import type { DatabaseChoice } from './schema-and-database.js';

/**
 * `restgraph serve db.json`: the schema inferred from a json-server database, and the database
 * it is served from (./data/db.db unless named), filled from the file on the first start only.
 * See docs/from-json-server.md.
 */

export interface InferredDbJson {
  source: DbJsonSource;
  inferred: InferredSchema;
  model: SchemaModel;
}

/**
 * The schema of a json-server database (every field optional, as `serve db.json` serves it, unless
 * `options.strict`). @throws DbJsonError, SchemaError (the inferred schema does not compile)
 */
export function inferDbJson(source: DbJsonSource, options: InferOptions = {}): InferredDbJson {
  const inferred = inferSchema(source.data, source.file, options);
  const { model, problems } = compileSchema(inferred.definition);
  if (model === undefined) throw new SchemaError(`${source.file} (the schema inferred from it)`, problems);
  return { source, inferred, model };
}

export interface DbJsonStart {
  schema: SchemaModel;
  /** Lines for the log at start, with their level. */
  lines: { level: 'info' | 'warn'; text: string; fields?: Record<string, unknown> }[];
}

/** Opens the database, imports the file into it on the first start, and says what happened. */
export async function startDbJsonDatabase({ source, inferred, model }: InferredDbJson, database: DatabaseChoice): Promise<DbJsonStart> {
  const { description, file: sqliteFile } = databaseTarget(database.url);
  const { db, rules } = await openDatabase(database.url);
  const started = performance.now();
  let prepared;
  try {
    prepared = await prepareDbJsonDatabase(db, rules, source, inferred, model);
  } catch (error) {
    if (error instanceof DestructiveMigrationError) {
      throw new DestructiveMigrationError(error.changes, {
        schema: `inferred from ${source.file}`,
        database: description,
        advice: ['Nothing was changed. This database holds another schema; serve the file from a database of its own, e.g.', `  npx restgraph serve ${source.file} -d sqlite:./data/<new name>.db`],
      });
    }
    if (error instanceof DatabaseNotEmptyError) {
      throw new DatabaseNotEmptyError(
        `The database ${description} already has rows, but no record of an import from ${source.file}: it is not where ${source.file} was imported. ` +
          `Nothing was imported. Serve the file from a database of its own, e.g. npx restgraph serve ${source.file} -d sqlite:./data/<new name>.db`,
      );
    }
    if (error instanceof ImportRejectedError) {
      process.stderr.write(error.rows.map((row) => `  "${row.resource}"[${row.line - 1}]: ${row.reason}\n`).join(''));
    }
    throw error;
  } finally {
    await db.close();
  }
  const lines: DbJsonStart['lines'] = [];
  if (prepared.imported !== undefined) {
    const counts = [...prepared.imported].map(([name, n]) => `${name} ${n}`).join(', ');
    lines.push({
      level: 'info',
      text: `Imported ${source.file} into ${description} (${counts === '' ? 'no records' : counts}). The data lives there from now on: changes made through the API are kept, and ${source.file} is neither read again nor written.`,
      fields: { durationMs: Math.round(performance.now() - started) },
    });
    const renames = inferred.resources.flatMap((r) => [
      ...(r.key === r.name ? [] : [`"${r.key}" → /${r.name}`]),
      ...r.fields.filter((f) => f.key !== f.name && !(f.key === 'id' && !r.singleton)).map((f) => `${r.key}."${f.key}" → ${r.name}.${f.name}`),
    ]);
    if (renames.length > 0) lines.push({ level: 'warn', text: `Names restgraph cannot take as they are were renamed: ${renames.join(', ')} (restgraph init --from ${source.file} writes the schema with the reasons).` });
  }
  if (prepared.changedSince !== undefined) {
    const again =
      sqliteFile !== undefined && database.argument === undefined
        ? `stop the server, move the database away (mv ${sqliteFile} ${sqliteFile}.bak) and start again`
        : `start with an empty database (-d <another database>)`;
    lines.push({
      level: 'warn',
      text: `${source.file} has changed since it was imported into ${description} on ${prepared.changedSince.importedAt}; serving the database as it is, with the changes made through the API since (${source.file} is not imported over them). To import ${source.file} again, ${again}.`,
    });
  }
  return { schema: prepared.schema, lines };
}

/**
 * The start warning about public resources: json-server has no authentication, and neither has
 * the schema inferred from its file. Undefined when no resource is public (a tightened schema).
 */
export function publicAccessWarning(file: string, schema: SchemaModel): string | undefined {
  const resources = [...schema.resources.values()];
  const readable = resources.filter((r) => r.access.read.kind === 'public').map((r) => r.name).join(', ');
  const changeable = resources.filter((r) => [r.access.create, r.access.update, r.access.delete].some((rule) => rule.kind === 'public')).map((r) => r.name).join(', ');
  if (readable === '' && changeable === '') return undefined;
  const can = readable === changeable ? `read and change ${readable}` : [readable === '' ? '' : `read ${readable}`, changeable === '' ? '' : `change ${changeable}`].filter(Boolean).join(' and ');
  return `${file} is served without authentication: anyone who can reach this port can ${can}. Run npx restgraph init --from ${file} to write a schema you can tighten.`;
}
