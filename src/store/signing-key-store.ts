import type { SqlDatabase } from './sql-database.js';

const TABLE = '_restgraph_signing_keys';

/** A key restgraph signs access tokens with, as stored (JWKs, RFC 7517). */
export interface SigningKeyRecord {
  kid: string;
  algorithm: string;
  /** The private JWK, JSON. */
  privateKey: string;
  /** The public JWK, JSON. */
  publicKey: string;
  createdAt: string;
  /** When a newer key replaced it for signing; null: the current key. */
  retiredAt: string | null;
}

/** `_restgraph_signing_keys`: the access-token signing keys, the current one and those retired. */
export class SigningKeyStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Every key, newest first. */
  async list(): Promise<SigningKeyRecord[]> {
    const rows = await this.#db.all(this.#db.builder.selectFrom(TABLE).selectAll().orderBy('createdAt', 'desc').orderBy('kid', 'desc').compile());
    return rows.map((row) => ({
      kid: String(row.kid),
      algorithm: String(row.algorithm),
      privateKey: String(row.privateKey),
      publicKey: String(row.publicKey),
      createdAt: String(row.createdAt),
      retiredAt: typeof row.retiredAt === 'string' ? row.retiredAt : null,
    }));
  }

  /** Adds a key; with `retireOthers`, the keys before it stop signing (they still verify until their tokens expire). */
  async add(key: Omit<SigningKeyRecord, 'retiredAt'>, retireOthers: boolean): Promise<void> {
    await this.#db.transaction(async (tx) => {
      if (retireOthers) await tx.run(this.#db.builder.updateTable(TABLE).set({ retiredAt: key.createdAt }).where('retiredAt', 'is', null).compile());
      await tx.run(this.#db.builder.insertInto(TABLE).values({ ...key, retiredAt: null }).compile());
    });
  }
}
