import { existsSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { defaultDatabaseUrl } from '../app/default-database.js';
import { ConfigError, DbJsonError } from '../errors.js';
import { inferredSchemaText } from '../schema/inferred-schema-text.js';
import { readDbJson } from './db-json-file.js';
import { inferDbJson } from './db-json-serve.js';
import { namesDatabase, runInitFromDatabase, type InitFromDatabaseFlags } from './init-from-database.js';

export interface InitFlags extends InitFromDatabaseFlags {
  from: string;
  output?: string;
  force?: boolean;
  /** Fields every item has a value for are required (otherwise every field is optional). */
  strict?: boolean;
}

/**
 * `restgraph init --from db.json [-o db.yaml]`: writes the schema `serve db.json` infers, with
 * comments saying what was inferred and why, for editing. The default output is the data file's
 * name with `.yaml` (db.json → db.yaml), whose default database is the one `serve db.json` filled
 * (./data/db.db): `serve db.yaml --compat json-server` then serves the same data with the edited
 * schema, and json-server's query language as `serve db.json` had it. Fields are optional, as
 * `serve db.json` infers them, unless `--strict`.
 */
export async function runInit(flags: InitFlags): Promise<void> {
  if (namesDatabase(flags.from)) {
    await runInitFromDatabase(flags);
    return;
  }
  if (!existsSync(flags.from)) {
    throw new ConfigError('--from', `${flags.from}: there is no such file (--from takes a SQLite file, a postgres:// URL or a json-server .json file)`);
  }
  const source = readDbJson(flags.from);
  if (source === undefined) {
    throw new DbJsonError(`${flags.from} is not a json-server database (a .json file whose top level is collections, {"posts": [...]}); it may already be a restgraph schema.`);
  }
  const { inferred } = inferDbJson(source, { strict: flags.strict === true });
  const output = flags.output ?? join(dirname(flags.from), `${basename(flags.from, extname(flags.from))}.yaml`);
  if (existsSync(output) && flags.force !== true) {
    throw new ConfigError('-o', `${output} exists; restgraph init does not overwrite it. Name another file with -o, or add --force to replace it.`);
  }
  const dataDatabase = defaultDatabaseUrl(flags.from);
  const sameDatabase = defaultDatabaseUrl(output) === dataDatabase;
  // json-server's query language stays on: a front end written against it keeps working.
  const serve = `npx restgraph serve ${output}${sameDatabase ? '' : ` -d ${dataDatabase}`} --compat json-server`;
  const usage = [
    `Serve it with the data \`npx restgraph serve ${flags.from}\` imported into ${dataDatabase.slice('sqlite:'.length)} (and the changes made since):`,
    `  ${serve}`,
  ];
  try {
    writeFileSync(output, inferredSchemaText(inferred, { source: flags.from, usage }));
  } catch (error) {
    throw new ConfigError('-o', `cannot write ${output} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const resources = inferred.resources.map((r) => r.name).join(', ');
  process.stdout.write(`Wrote ${output} (${resources}): the schema inferred from ${flags.from}, with what was inferred and why in comments.\nEdit it, then serve it with the data of ${flags.from}:\n  ${serve}\n`);
}
