import { ADMIN_SCOPE, type Principal } from '../core/principal.js';
import { TokenOperations, type TokenView } from '../core/token-operations.js';
import { DatabaseNotFoundError, ValidationError } from '../errors.js';
import { ApiKeyStore, type TokenClaims } from '../store/api-key-store.js';
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
export async function runTokenCreate(flags: TokenFlags & { scopes: string; name?: string; subject?: string; claims?: string; expires?: string }): Promise<void> {
  // Malformed pairs are told before the database is opened.
  const claims = flags.claims === undefined ? undefined : parseClaimPairs(flags.claims);
  await withTokens(flags, async (tokens) => {
    const { key, token } = await tokens.create(OPERATOR, {
      name: flags.name ?? 'cli',
      scopes: flags.scopes.split(',').map((s) => s.trim()).filter((s) => s !== ''),
      ...(flags.subject === undefined ? {} : { subject: flags.subject }),
      ...(claims === undefined ? {} : { claims }),
      ...(flags.expires === undefined ? {} : { expires: flags.expires }),
    });
    const out = (line: string): boolean => process.stdout.write(`${line}\n`);
    const claimsText = token.claims === undefined ? '' : `, claims ${formatClaims(token.claims)}`;
    out(`Created token ${token.id} "${token.name}" (${token.prefix}…) with scopes ${token.scopes.join(' ')}${token.subject === null ? '' : `, subject ${token.subject}`}${claimsText}${token.expiresAt === null ? '' : `, expires ${token.expiresAt}`}.`);
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
    // The CLAIMS column only when some key has claims.
    const withClaims = list.some((token) => token.claims !== undefined);
    const header = ['ID', 'NAME', 'PREFIX', 'SCOPES', 'SUBJECT', ...(withClaims ? ['CLAIMS'] : []), 'STATE', 'CREATED', 'LAST USED', 'EXPIRES'];
    const rows = [header, ...list.map((token) => row(token, withClaims))];
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

function row(token: TokenView, withClaims: boolean): string[] {
  const claims = withClaims ? [token.claims === undefined ? '-' : formatClaims(token.claims)] : [];
  return [String(token.id), token.name, token.prefix, token.scopes.join(','), token.subject ?? '-', ...claims, token.state, token.createdAt, token.lastUsedAt ?? '-', token.expiresAt ?? '-'];
}

/** Claims as `--claims` takes them: `org=acme,plan=pro`, an array as its name repeated. */
function formatClaims(claims: TokenClaims): string {
  return Object.entries(claims)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((item: string | number | boolean) => `${name}=${String(item)}`))
    .join(',');
}

/**
 * `--claims org=acme,plan=pro`: comma-separated `name=value` pairs, each value a string (rules
 * convert it to the field's type); a name given again makes an array (`orgs=a,orgs=b`). The
 * names and sizes are then checked as for `POST /v1/tokens` (src/core/token-claims.ts).
 * @throws ValidationError naming the pair that is not `name=value`
 */
export function parseClaimPairs(text: string): Record<string, string | string[]> {
  const claims: Record<string, string | string[]> = {};
  for (const piece of text.split(',')) {
    const pair = piece.trim();
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = equals < 0 ? '' : pair.slice(0, equals).trim();
    const value = equals < 0 ? '' : pair.slice(equals + 1).trim();
    if (equals < 0 || name === '' || value === '') {
      const why = equals < 0 ? 'has no =' : name === '' ? 'has no name before =' : 'has no value after =';
      throw new ValidationError(`--claims takes name=value pairs separated by commas (org=acme,plan=pro); ${JSON.stringify(pair)} ${why}.`, {
        errors: [{ parameter: '--claims', detail: `${JSON.stringify(pair)} ${why}` }],
      });
    }
    const known = claims[name];
    claims[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  if (Object.keys(claims).length === 0) {
    throw new ValidationError('--claims takes name=value pairs separated by commas (org=acme,plan=pro); it was given none.', { errors: [{ parameter: '--claims', detail: 'holds no pair' }] });
  }
  return claims;
}
