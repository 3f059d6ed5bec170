import type { AddressInfo } from 'node:net';
import type pino from 'pino';
import { ADMIN_SCOPE } from '../core/principal.js';
import { EXAMPLE_SCHEMA_PATH } from '../schema/example-schema-path.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { resourcesIn } from '../schema/version-view.js';
import type { ApiKeyStore } from '../store/api-key-store.js';
import type { ResolvedOptions } from './app-options.js';
import { defaultDatabaseUrl } from './default-database.js';

export interface AdminAccessInput {
  apiKeys: ApiKeyStore;
  schema: SchemaModel;
  options: Readonly<ResolvedOptions>;
  /** The database, as printed (no credentials). */
  databaseDescription: string;
  logger: pino.Logger;
  /** For a person at a terminal: shows the key in a box, with how to use it (app-logging.ts); else two warnings carry it. */
  showFirstKey?: ((key: string, usage: string) => void) | undefined;
}

/**
 * Once the server listens: makes sure the operator can get in. Without RESTGRAPH_ADMIN_TOKEN, a
 * database with no key at all gets the first admin key, shown this once with how to use it; a
 * database whose keys cannot manage keys (none active with the admin scope) gets a word on how to
 * make one, at every start (unless JWT is set). The hints fit the server: its real address, a resource of its
 * schema that takes a token and that resource's scopes, the schema file and the database (`-d`
 * when it is not the schema's own).
 */
export async function checkAdminAccess(address: string, input: AdminAccessInput): Promise<void> {
  const { apiKeys, options, logger } = input;
  if (options.adminToken !== undefined) return;
  const commands = tokenCommands(options, input.databaseDescription);
  const warn = (message: string, details: Record<string, unknown> = {}): void => {
    if (logger.isLevelEnabled('warn')) logger.warn(details, message);
    // Logging is quieter than this: the operator must still be told.
    else process.stderr.write(`restgraph: ${message}\n`);
  };
  if (options.bootstrapAdminKey && (await apiKeys.count()) === 0) {
    const { key } = await apiKeys.create({ name: 'bootstrap-admin', scopes: [ADMIN_SCOPE] });
    const sample = sampleResource(input.schema);
    const usage = (shownKey: string): string =>
      `Use it as: curl -H "Authorization: Bearer ${shownKey}" ${address}/${sample.resource}; ` +
      `create scoped keys with \`${commands.create(sample.scopes)}\`, and keep this one safe (or revoke it with \`${commands.revoke}\`).`;
    // The one time this key is ever shown: on first start, so the operator can get in at all. On
    // a terminal, in a box, and only there (not in the hint).
    if (input.showFirstKey !== undefined && logger.isLevelEnabled('warn')) input.showFirstKey(key, usage('<the key>'));
    else {
      warn(`Created the first admin API key (shown only this once): ${key}`, { adminKey: key });
      warn(usage(key));
    }
  } else if (options.jwt === undefined && !(await apiKeys.list()).some(canManageKeys)) {
    // (With JWT, an admin may come with a token of the issuer's.)
    warn(`No API key in ${input.databaseDescription} can manage keys (none is active with the admin scope): make one with \`${commands.create([ADMIN_SCOPE])}\``);
  }
  // The operator is waiting for these lines: write them out now, not with the next batch.
  logger.flush();
}

/** `http://127.0.0.1:3000` of a listening server's address. */
export function listeningAddress(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') return `http://${address ?? 'localhost'}`;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

function canManageKeys(key: { scopes: string[]; revokedAt: string | null; expiresAt: string | null }): boolean {
  return key.scopes.includes(ADMIN_SCOPE) && key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > Date.now());
}

/**
 * The token commands for this server's schema file and database (`-d` with the database as
 * printed, without credentials, when it is not the schema's own): run where the server runs, they
 * work on the database it serves. `database` stands in for the description (the admin console's
 * hint to a visitor from another machine names no database).
 */
export function tokenCommands(options: Pick<ResolvedOptions, 'schema' | 'databaseUrl'>, database: string): { create: (scopes: readonly string[]) => string; revoke: string } {
  const file = typeof options.schema === 'string' && options.schema !== EXAMPLE_SCHEMA_PATH ? options.schema : undefined;
  const schemaArgument = file === undefined ? '' : ` ${file}`;
  const ownDatabase = typeof options.schema !== 'object' && options.databaseUrl === defaultDatabaseUrl(file);
  const databaseArgument = ownDatabase ? '' : ` -d ${database}`;
  return {
    create: (scopes) => `npx restgraph token create${schemaArgument} --scopes ${scopes.join(',')}${databaseArgument}`,
    revoke: `npx restgraph token revoke <id-or-prefix>${schemaArgument}${databaseArgument}`,
  };
}

/**
 * A resource to show in the hint: the first (of the latest version) that takes a token to read,
 * else to write, with the scopes that read and write it; else the first, with the admin scope.
 */
function sampleResource(schema: SchemaModel): { resource: string; scopes: string[] } {
  const resources = resourcesIn(schema, schema.latestVersion);
  const scopesOf = (rule: (typeof resources)[number]['access']['read']): readonly string[] => (rule.kind === 'scopes' ? rule.anyOf : []);
  const chosen = resources.find((r) => r.access.read.kind === 'scopes') ?? resources.find((r) => r.access.create.kind === 'scopes');
  if (chosen === undefined) return { resource: resources[0]?.name ?? '', scopes: [ADMIN_SCOPE] };
  return { resource: chosen.name, scopes: [...new Set([...scopesOf(chosen.access.read), ...scopesOf(chosen.access.create)])] };
}
