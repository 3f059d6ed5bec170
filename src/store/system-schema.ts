import { ConfigError } from '../errors.js';

/**
 * The PostgreSQL schema that holds restgraph's own tables and functions beside a mapped database
 * (docs/existing-database.md): RESTGRAPH_SYSTEM_SCHEMA, by default `restgraph`.
 *
 * @default 'restgraph'
 * @throws ConfigError naming RESTGRAPH_SYSTEM_SCHEMA when it is not a plain lower-case identifier.
 */
export function systemSchemaName(env: NodeJS.ProcessEnv | Record<string, string | undefined>): string {
  const given = env.RESTGRAPH_SYSTEM_SCHEMA;
  if (given === undefined || given === '') return DEFAULT_SYSTEM_SCHEMA;
  return checkedSystemSchema(given);
}

/**
 * A system schema's name, checked: the one check of `restgraph serve` (the `systemSchema` option)
 * and `restgraph capture`. A plain identifier reads the same quoted or not, in SQL, in messages and
 * in the names of notification channels (capture's trigger and the server's listener must agree).
 *
 * @throws ConfigError naming RESTGRAPH_SYSTEM_SCHEMA when it is not a plain lower-case identifier.
 */
export function checkedSystemSchema(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name) || name.startsWith('pg_')) {
    throw new ConfigError('RESTGRAPH_SYSTEM_SCHEMA', `"${name}" is not a schema name restgraph can use: lower-case letters, digits and _, at most 63, not starting with a digit or pg_`);
  }
  return name;
}

export const DEFAULT_SYSTEM_SCHEMA = 'restgraph';
