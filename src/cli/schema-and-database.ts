import { existsSync, readdirSync } from 'node:fs';
import { DATA_FOLDER, defaultDatabaseUrl, LEGACY_DATABASE_URL } from '../app/default-database.js';
import { DatabaseNotFoundError } from '../errors.js';
import { EXAMPLE_SCHEMA_PATH } from '../schema/example-schema-path.js';
import { withoutCredentials } from '../store/database-url.js';
import { databaseTarget } from '../store/open-database.js';

/**
 * Which schema and which database a command works on, chosen the same way by every command:
 * the schema from its argument, else RESTGRAPH_SCHEMA, else the built-in example; the database
 * from `-d`, else DATABASE_URL, else the schema's own (`./data/<schema file name>.db`).
 */

export interface SchemaChoice {
  /** The file to load. */
  path: string;
  /** How a printed command names it: as the user gave it; undefined for the built-in example. */
  argument: string | undefined;
}

export interface DatabaseChoice {
  url: string;
  /** How a printed command names it: `-d <url>`, or undefined when the schema alone selects it. */
  argument: string | undefined;
  /** Something the user should know about the choice (printed once, at start). */
  notice?: string;
}

export function chooseSchema(argument: string | undefined, env: NodeJS.ProcessEnv): SchemaChoice {
  const given = argument ?? (nonEmpty(env.RESTGRAPH_SCHEMA) ? env.RESTGRAPH_SCHEMA : undefined);
  return given === undefined ? { path: EXAMPLE_SCHEMA_PATH, argument: undefined } : { path: given, argument: given };
}

/**
 * The database of `serve` and `migrate`, which create it when it does not exist.
 *
 * Earlier releases kept every schema's data in ./data/restgraph.db. The built-in example goes on
 * using that file while ./data/example-schema.db does not exist (saying so); any other schema gets
 * its own new file, with a word about the old one.
 */
export function databaseToCreate(flag: string | undefined, env: NodeJS.ProcessEnv, schema: SchemaChoice): DatabaseChoice {
  const named = namedDatabase(flag, env);
  if (named !== undefined) return named;
  const url = defaultDatabaseUrl(schema.argument);
  if (sqliteFileExists(url) || !sqliteFileExists(LEGACY_DATABASE_URL)) return { url, argument: undefined };
  const legacy = sqlitePath(LEGACY_DATABASE_URL);
  if (schema.argument === undefined) {
    return {
      url: LEGACY_DATABASE_URL,
      argument: `-d ${LEGACY_DATABASE_URL}`,
      notice:
        `Using ${legacy}, where earlier releases kept the example's data. New databases are named after their schema; ` +
        `to move to the new name, stop the server and run: mv ${legacy} ${sqlitePath(url)}`,
    };
  }
  return {
    url,
    argument: undefined,
    notice:
      `Creating ${sqlitePath(url)} for ${schema.argument}: each schema now has a database of its own. ${legacy}, where earlier releases kept ` +
      `every schema's data, is left as it is; if it holds this schema's data, stop the server and run: npx restgraph serve ${schema.argument} -d ${LEGACY_DATABASE_URL}`,
  };
}

/**
 * The database of a command that only works on an existing one (the token commands): `-d` or
 * DATABASE_URL as given (checked when opened), else the schema's own, which must exist.
 *
 * @param retry the command as the user ran it, with `-d <url>` added: for the message that lists
 *   the databases there are.
 * @throws DatabaseNotFoundError naming the file looked for, and the commands that would work.
 */
export function databaseToOpen(flag: string | undefined, env: NodeJS.ProcessEnv, schema: SchemaChoice, retry: (database: string) => string): DatabaseChoice {
  const named = namedDatabase(flag, env);
  if (named !== undefined) return named;
  const url = defaultDatabaseUrl(schema.argument);
  if (sqliteFileExists(url)) return { url, argument: undefined };
  if (schema.argument === undefined && sqliteFileExists(LEGACY_DATABASE_URL)) return { url: LEGACY_DATABASE_URL, argument: `-d ${LEGACY_DATABASE_URL}` };
  const whose = schema.argument === undefined ? "the built-in example's database" : `the database of ${schema.argument}`;
  const others = databasesInDataFolder();
  if (others.length === 0) {
    const serve = `npx restgraph serve${schema.argument === undefined ? '' : ` ${schema.argument}`}`;
    throw new DatabaseNotFoundError(`There is no ${sqlitePath(url)} (${whose}) and no other database in ${DATA_FOLDER}: start the server first (${serve}), or name a database with -d.`);
  }
  throw new DatabaseNotFoundError(
    `There is no ${sqlitePath(url)} (${whose}). ${DATA_FOLDER} holds ${others.map((f) => `${DATA_FOLDER}/${f}`).join(', ')}; name the one you mean:\n` +
      others.map((f) => `  ${retry(`sqlite:${DATA_FOLDER}/${f}`)}`).join('\n'),
  );
}

/**
 * The database `-d` or DATABASE_URL names, read (not opened) at once: a URL that cannot be used is
 * told before anything else is tried. @throws ConfigError naming DATABASE_URL
 */
function namedDatabase(flag: string | undefined, env: NodeJS.ProcessEnv): DatabaseChoice | undefined {
  const url = flag ?? (nonEmpty(env.DATABASE_URL) ? env.DATABASE_URL : undefined);
  if (url === undefined) return undefined;
  return { url, argument: `-d ${databaseTarget(url).description}` };
}

/** The command line the user ran (`npx restgraph …`), with `-d <database>` added. */
export function sameCommandWith(database: string): string {
  return commandLineWith(['-d', database]);
}

/**
 * The command line the user ran (`npx restgraph …`), shell-quoted, without the options named in
 * `replaced` (and their values), and with `added` at the end. A URL in it is shown without its
 * credentials.
 */
export function commandLineWith(added: string[], replaced: string[] = []): string {
  const words: string[] = [];
  const given = process.argv.slice(2);
  for (let i = 0; i < given.length; i++) {
    const word = given[i] ?? '';
    if (replaced.includes(word)) i++;
    else if (!replaced.some((option) => word.startsWith(`${option}=`))) words.push(word);
  }
  const quoted = [...words, ...added].map(shownWord).map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`));
  return ['npx restgraph', ...quoted].join(' ');
}

/** A word of a command line as it may be shown: a URL (also in `--option=<url>`) without its credentials. */
function shownWord(word: string): string {
  const option = /^(-[^=]*=)(.*)$/s.exec(word);
  return option === null ? withoutCredentials(word) : `${option[1] ?? ''}${withoutCredentials(option[2] ?? '')}`;
}

function databasesInDataFolder(): string[] {
  try {
    return readdirSync(DATA_FOLDER)
      .filter((f) => f.endsWith('.db'))
      .sort();
  } catch {
    return [];
  }
}

/** `./data/x.db` of `sqlite:./data/x.db`. */
function sqlitePath(url: string): string {
  return url.slice('sqlite:'.length);
}

function sqliteFileExists(url: string): boolean {
  return existsSync(sqlitePath(url));
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}
