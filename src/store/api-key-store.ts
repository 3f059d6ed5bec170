import { createHash, randomBytes } from 'node:crypto';
import type { SqlDatabase, SqlRow } from './sql-database.js';

const TABLE = '_restgraph_api_keys';

/** Most key hashes one statement of {@link ApiKeyStore.activeByHashes} asks about (well within every database's parameter limit). */
const HASHES_PER_STATEMENT = 500;

/** Every API key starts with this, so keys are recognisable (and secret scanners can find leaks). */
export const API_KEY_PREFIX = 'rg_';

/** A claim's value: a string, a number, a boolean, or an array of those (src/core/token-claims.ts checks them). */
export type ClaimValue = string | number | boolean | readonly (string | number | boolean)[];
/** An API key's claims, read by access rules as `@auth.claims.<name>`. */
export type TokenClaims = Readonly<Record<string, ClaimValue>>;

/** An API key as stored: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  id: number;
  name: string;
  /** The first characters of the key (`rg_` and 8 more), enough to recognise it in a list. */
  prefix: string;
  scopes: string[];
  subject: string | null;
  /** Its claims; absent when it has none (so keys without claims read as before claims existed). */
  claims?: TokenClaims;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface NewApiKey {
  name: string;
  scopes: readonly string[];
  subject?: string | undefined;
  claims?: TokenClaims | undefined;
  expiresAt?: string | undefined;
}

/** SHA-256 of a key, hex: what is stored and looked up. A 256-bit random key needs no slow hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** API keys: created with 256 bits of randomness, shown once, stored as a hash, revocable. */
export class ApiKeyStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Creates a key; the returned `key` exists nowhere else and cannot be recovered later. */
  async create(input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const values = {
      name: input.name,
      prefix: key.slice(0, API_KEY_PREFIX.length + 8),
      hash: hashApiKey(key),
      scopes: [...new Set(input.scopes)].join(' '),
      subject: input.subject ?? null,
      // Null for none: a key made before claims existed reads the same.
      claims: input.claims === undefined || Object.keys(input.claims).length === 0 ? null : JSON.stringify(input.claims),
      createdAt: new Date().toISOString(),
      expiresAt: input.expiresAt ?? null,
    };
    const rows = await this.#db.transaction((tx) => tx.all(this.#db.builder.insertInto(TABLE).values(values).returningAll().compile()));
    return { key, record: toRecord(firstRow(rows)) };
  }

  /** The key with this hash, unless revoked. Expiry is the caller's to check (it knows the time). */
  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).selectAll().where('hash', '=', hash).where('revokedAt', 'is', null).compile());
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Of the keys with these hashes, those not revoked: each one's expiry (null: none), by hash. One
   * statement per {@link HASHES_PER_STATEMENT} hashes (the credentials of all open streams are
   * checked this way together, not one statement each).
   */
  async activeByHashes(hashes: readonly string[]): Promise<Map<string, string | null>> {
    const active = new Map<string, string | null>();
    for (let at = 0; at < hashes.length; at += HASHES_PER_STATEMENT) {
      const some = hashes.slice(at, at + HASHES_PER_STATEMENT);
      const query = this.#db.builder.selectFrom(TABLE).select(['hash', 'expiresAt']).where('hash', 'in', some).where('revokedAt', 'is', null);
      for (const row of await this.#db.all(query.compile())) active.set(String(row.hash), typeof row.expiresAt === 'string' ? row.expiresAt : null);
    }
    return active;
  }

  /** Every key, newest first (revoked ones included, marked). */
  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.all(this.#db.builder.selectFrom(TABLE).selectAll().orderBy('id', 'desc').compile());
    return rows.map(toRecord);
  }

  async get(id: number): Promise<ApiKeyRecord | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).selectAll().where('id', '=', id).compile());
    return row === undefined ? undefined : toRecord(row);
  }

  /** Revokes the key with this id or prefix; resolves to it, or undefined when none (or several) match. */
  async revoke(idOrPrefix: string): Promise<ApiKeyRecord | undefined> {
    const now = new Date().toISOString();
    return this.#db.transaction(async (tx) => {
      const query = /^\d+$/.test(idOrPrefix)
        ? this.#db.builder.selectFrom(TABLE).selectAll().where('id', '=', Number(idOrPrefix))
        : this.#db.builder.selectFrom(TABLE).selectAll().where('prefix', '=', idOrPrefix);
      const rows = await tx.all(query.compile());
      const row = rows[0];
      if (rows.length !== 1 || row === undefined) return undefined;
      if (row.revokedAt === null) {
        await tx.run(this.#db.builder.updateTable(TABLE).set({ revokedAt: now }).where('id', '=', row.id as number).compile());
        row.revokedAt = now;
      }
      return toRecord(row);
    });
  }

  /** Records that a key was used (callers throttle this). */
  async touch(id: number, at: string): Promise<void> {
    await this.#db.run(this.#db.builder.updateTable(TABLE).set({ lastUsedAt: at }).where('id', '=', id).compile());
  }

  /** How many keys exist, revoked ones included. */
  async count(): Promise<number> {
    const row = await this.#db.one(this.#db.builder.selectFrom(TABLE).select((eb) => eb.fn.countAll<number>().as('n')).compile());
    return Number(row?.n ?? 0);
  }
}

function toRecord(row: SqlRow): ApiKeyRecord {
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
  return {
    id: Number(row.id),
    name: String(row.name),
    prefix: String(row.prefix),
    scopes: String(row.scopes).split(' ').filter((s) => s !== ''),
    subject: text(row.subject),
    ...storedClaims(row.claims),
    createdAt: String(row.createdAt),
    lastUsedAt: text(row.lastUsedAt),
    expiresAt: text(row.expiresAt),
    revokedAt: text(row.revokedAt),
  };
}

/** Stored claims (JSON text, or null for none) as the record's `claims` member: none when there are none. */
function storedClaims(stored: unknown): { claims?: TokenClaims } {
  if (typeof stored !== 'string' || stored === '') return {};
  const parsed: unknown = JSON.parse(stored);
  const claims = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as TokenClaims) : {};
  return Object.keys(claims).length === 0 ? {} : { claims };
}

function firstRow(rows: SqlRow[]): SqlRow {
  const row = rows[0];
  if (row === undefined) throw new Error('insert returned no row');
  return row;
}
