import { ADMIN_SCOPE, type Principal } from '../core/principal.js';
import { TokenOperations, type TokenView } from '../core/token-operations.js';
import { DatabaseNotFoundError } from '../errors.js';
import { ApiKeyStore } from '../store/api-key-store.js';
import { recordedSchema } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';
import { chooseSchema, databaseToOpen, sameCommandWith } from './schema-and-database.js';

/** The CLI works on its own database file, so it acts as admin. */
const OPERATOR: Principal = { kind: 'admin-token', scopes: new Set([ADMIN_SCOPE]), credentialId: 'cli' };

export interface TokenFlags {
  /** Selects the default database (the schema's own); the database itself records its schema. */
  schemaFile?: string | undefined;
  databaseUrl?: string;
}

/**
 * Opens the database (never creating one) and works on its keys. Changes no schema: the database
 * must have been migrated by `serve` or `migrate` (restgraph's own tables are brought up to date).
 */
async function withTokens<T>(flags: TokenFlags, work: (tokens: TokenOperations) => Promise<T>): Promise<T> {
  const schema = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToOpen(flags.databaseUrl, process.env, schema, sameCommandWith);
  const { db, description } = await openDatabase(database.url, { existing: true });
  try {
    if ((await recordedSchema(db)) === undefined) {
      throw new DatabaseNotFoundError(
        `The database ${description} holds no restgraph schema (only \`restgraph serve\` and \`restgraph migrate\` create one): ` +
          `npx restgraph migrate${schema.argument === undefined ? ' <schema-file>' : ` ${schema.argument}`} -d ${description}`,
      );
    }
    // Which database the keys are in (a key made in another schema's database is unknown to the
    // server): on stderr, so that stdout stays the command's own (the key alone on its last line).
    process.stderr.write(`Database: ${description}\n`);
    return await work(new TokenOperations(new ApiKeyStore(db)));
  } finally {
    await db.close();
  }
}

/** `token create`: prints the key's details, then the key alone on the last line of stdout. */
export async function runTokenCreate(flags: TokenFlags & { scopes: string; name?: string; subject?: string; expires?: string }): Promise<void> {
  await withTokens(flags, async (tokens) => {
    const { key, token } = await tokens.create(OPERATOR, {
      name: flags.name ?? 'cli',
      scopes: flags.scopes.split(',').map((s) => s.trim()).filter((s) => s !== ''),
      ...(flags.subject === undefined ? {} : { subject: flags.subject }),
      ...(flags.expires === undefined ? {} : { expires: flags.expires }),
    });
    const out = (line: string): boolean => process.stdout.write(`${line}\n`);
    out(`Created token ${token.id} "${token.name}" (${token.prefix}…) with scopes ${token.scopes.join(' ')}${token.subject === null ? '' : `, subject ${token.subject}`}${token.expiresAt === null ? '' : `, expires ${token.expiresAt}`}.`);
    out('This is the only time the key is shown; store it now:');
    out(key);
  });
}

export async function runTokenList(flags: TokenFlags & { json?: boolean }): Promise<void> {
  await withTokens(flags, async (tokens) => {
    const list = await tokens.list(OPERATOR);
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      return;
    }
    const rows = [['ID', 'NAME', 'PREFIX', 'SCOPES', 'SUBJECT', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES'], ...list.map(row)];
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    for (const r of rows) process.stdout.write(`${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
  });
}

export async function runTokenRevoke(flags: TokenFlags & { idOrPrefix: string }): Promise<void> {
  await withTokens(flags, async (tokens) => {
    const token = await tokens.revoke(OPERATOR, flags.idOrPrefix);
    process.stdout.write(`Revoked token ${token.id} "${token.name}" (${token.prefix}…). Servers stop accepting it within their key cache time (10 s by default).\n`);
  });
}

function row(token: TokenView): string[] {
  return [String(token.id), token.name, token.prefix, token.scopes.join(','), token.subject ?? '-', token.state, token.createdAt, token.lastUsedAt ?? '-', token.expiresAt ?? '-'];
}
