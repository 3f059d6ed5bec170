import type BetterSqlite3 from 'better-sqlite3';
import type { ImmediateExecutor, SqlExecutor } from '../sql-database.js';
import { runAll, runOne, runRun, type Statement } from './sqlite-connection.js';

/** What group commit needs of the writer connection, which {@link SqliteDatabase} owns. */
export interface SqliteWriter {
  readonly connection: BetterSqlite3.Database;
  /** Prepares `sql` on the connection (through its cache of statements). */
  prepare(sql: string): Statement;
  /** The in-process lock on the connection while it is held (settled at its release), else undefined. */
  held(): Promise<void> | undefined;
  /** Takes the in-process lock, which must be free; returns its release. */
  take(): () => void;
  /**
   * Takes SQLite's write lock (BEGIN IMMEDIATE): undefined when taken at once; a promise when
   * another process holds it, which rejects at `deadline` (Date.now() time).
   */
  beginWrite(deadline: number): Promise<void> | undefined;
  /** COMMIT; a commit that fails (the disk) is rolled back by SQLite. */
  commitWrite(): void;
  rollback(): void;
  /** Translates a failure to write, remembering when it says the database cannot write now. */
  noteWriteFailure(error: unknown): unknown;
}

/** Most transactions one group commit holds (they wait for its commit to be answered). */
const MAX_GROUP = 256;

interface QueuedTransaction {
  work: (tx: SqlExecutor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When waiting for another process's lock must give up (Date.now() time). */
  deadline: number;
}

interface SharedWork {
  work: (tx: ImmediateExecutor) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When waiting for another process's lock must give up (Date.now() time). */
  deadline: number;
}

/**
 * Group commit on SQLite's writer connection: the transactions of one event-loop turn share one
 * commit. With synchronous FULL each commit waits for the disk, on the event loop, so one commit
 * per transaction would cap writes at the disk's flushes per second and hold every request behind
 * each one. {@link transaction} queues transactions that may await; {@link transactionShared}
 * gathers work that does not.
 */
export class SqliteGroupCommit {
  readonly #writer: SqliteWriter;
  readonly #lockTimeoutMs: number;
  /** Savepoint control, prepared once (exec would parse the text on every write). */
  readonly #savepoint: BetterSqlite3.Statement;
  readonly #release: BetterSqlite3.Statement;
  readonly #rollbackToSavepoint: BetterSqlite3.Statement;
  /** Work of {@link transactionShared} waiting for the end of this turn, in the order handed in. */
  #shared: SharedWork[] = [];
  /** Transactions waiting for their group commit, in arrival order (see {@link transaction}). */
  #queued: QueuedTransaction[] = [];
  /** A runner of #queued is under way. */
  #grouping = false;
  /** The statements of {@link transactionShared}'s work, on the writer. */
  readonly #immediate: ImmediateExecutor = {
    one: (statement) => runOne(this.#writer.prepare(statement.sql), statement.parameters),
  };

  constructor(writer: SqliteWriter, lockTimeoutMs: number) {
    this.#writer = writer;
    this.#lockTimeoutMs = lockTimeoutMs;
    this.#savepoint = writer.connection.prepare('SAVEPOINT "rg_shared"');
    this.#release = writer.connection.prepare('RELEASE "rg_shared"');
    this.#rollbackToSavepoint = writer.connection.prepare('ROLLBACK TO "rg_shared"');
  }

  /** Transactions waiting for their group. */
  get waiting(): number {
    return this.#queued.length;
  }

  /**
   * Runs `work` in a write transaction, committed together with the transactions that queued
   * meanwhile (group commit). Transactions run one after the other, each in a savepoint of
   * the group's transaction: one that fails is rolled back alone. Each is answered once the group
   * has committed (never before: an answer means stored). A group begins in the turn after its
   * first transaction came (those of the same turn join it) and ends when none is waiting, or
   * after {@link MAX_GROUP}.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // The lock timeout counts from now: behind a write waiting for another process's lock, the
      // queue does not wait the timeout once each.
      this.#queued.push({ work, resolve: resolve as (value: unknown) => void, reject, deadline: Date.now() + this.#lockTimeoutMs });
      if (!this.#grouping) void this.#runGroups();
    });
  }

  /** Runs groups of queued transactions until none is left; holds the in-process lock while each runs. */
  async #runGroups(): Promise<void> {
    this.#grouping = true;
    try {
      while (this.#queued.length > 0) {
        // The lock is taken in the same tick the loop sees it free (no await between).
        while (this.#writer.held() !== undefined) await this.#writer.held();
        const release = this.#writer.take();
        try {
          await this.#runGroup();
        } finally {
          release();
        }
        // Those woken by the release (a turn's shared creates, a script) take the lock first.
        await Promise.resolve();
      }
    } finally {
      this.#grouping = false;
    }
  }

  /** One group: BEGIN, each queued transaction in a savepoint, COMMIT, then the answers. Never rejects. */
  async #runGroup(): Promise<void> {
    // The transactions of this turn's requests join before the group begins. (Waiting after BEGIN
    // instead would hold the database's write lock across a turn of the event loop.)
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const begun = this.#writer.beginWrite((this.#queued[0] as QueuedTransaction).deadline);
      if (begun !== undefined) await begun;
    } catch (error) {
      // Another process kept the write lock past the deadline (or the database cannot write):
      // those waiting now would meet the same.
      for (const item of this.#queued.splice(0)) item.reject(error);
      return;
    }
    const done: { item: QueuedTransaction; value: unknown }[] = [];
    const fail = (error: unknown): void => {
      try {
        if (this.#writer.connection.inTransaction) this.#writer.rollback();
      } catch {
        // SQLite rolls back what it cannot commit; a rollback failing too leaves nothing to undo.
      }
      const reason = this.#writer.noteWriteFailure(error);
      for (const { item } of done) item.reject(reason);
    };
    for (;;) {
      const item = this.#queued.shift();
      if (item === undefined) break;
      const outcome = await this.#runInSavepoint(item);
      if (outcome.ok) done.push({ item, value: outcome.value });
      else if (this.#writer.connection.inTransaction) item.reject(this.#writer.noteWriteFailure(outcome.value));
      else {
        // SQLite rolled the whole transaction back (a full disk, an I/O error): the group is lost.
        item.reject(this.#writer.noteWriteFailure(outcome.value));
        fail(outcome.value);
        return;
      }
      if (done.length >= MAX_GROUP) break;
    }
    try {
      if (done.length > 0) this.#writer.commitWrite();
      else this.#writer.rollback();
    } catch (error) {
      fail(error);
      return;
    }
    for (const { item, value } of done) item.resolve(value);
  }

  /** Runs one transaction's work in a savepoint of the group: released when it succeeds, rolled back when it throws. */
  async #runInSavepoint(item: QueuedTransaction): Promise<{ ok: boolean; value: unknown }> {
    const writer = this.#writer;
    let open = true;
    const finished = (): Promise<never> => Promise.reject(new Error('transaction already finished'));
    const tx: SqlExecutor = {
      all: (statement) => (open ? Promise.resolve(runAll(writer.prepare(statement.sql), statement.parameters)) : finished()),
      one: (statement) => (open ? runOne(writer.prepare(statement.sql), statement.parameters) : finished()),
      run: (statement) => (open ? Promise.resolve(runRun(writer.prepare(statement.sql), statement.parameters)) : finished()),
    };
    try {
      this.#savepoint.run();
    } catch (error) {
      return { ok: false, value: error };
    }
    try {
      const value = await item.work(tx);
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      try {
        if (writer.connection.inTransaction) {
          this.#rollbackToSavepoint.run();
          this.#release.run();
        }
      } catch {
        // Left to the caller: the transaction's state says what remains.
      }
      return { ok: false, value: error };
    } finally {
      open = false;
    }
  }

  /**
   * Group commit of work that does not wait: a commit writes every page it changed to the WAL, and
   * the creates of one turn change the same few pages (the table's last leaf, its indexes', the
   * outbox's), so one commit for all of them writes those pages once instead of once each. The
   * turn's work runs in the check phase (setImmediate), after the requests that arrived together
   * have been parsed.
   */
  transactionShared<T>(work: (tx: ImmediateExecutor) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#shared.length === 0) setImmediate(this.flushShared);
      this.#shared.push({ work, resolve: resolve as (value: unknown) => void, reject, deadline: Date.now() + this.#lockTimeoutMs });
    });
  }

  /** Commits the shared work of a turn; after the transaction in progress, if one is. */
  readonly flushShared = (): void => {
    if (this.#shared.length === 0) return;
    const held = this.#writer.held();
    if (held !== undefined) {
      void held.then(this.flushShared);
      return;
    }
    const batch = this.#shared;
    this.#shared = [];
    let begun: Promise<void> | undefined;
    try {
      begun = this.#writer.beginWrite(batch[0]?.deadline ?? Date.now());
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    if (begun === undefined) {
      this.#runShared(batch);
      return;
    }
    // Another process holds the write lock: this batch waits for it (on timers) holding the
    // in-process lock, so transactions and later batches queue behind it, in order.
    const done = this.#writer.take();
    begun.then(
      () => {
        try {
          this.#runShared(batch);
        } finally {
          done();
        }
      },
      (error: unknown) => {
        done();
        for (const item of batch) item.reject(error);
      },
    );
  };

  /** Runs a batch of shared work in the write transaction just begun, and commits it. Never throws: each work's promise hears how it went. */
  #runShared(batch: SharedWork[]): void {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    // A work alone needs no savepoint: the transaction is its own.
    const isolate = batch.length > 1;
    try {
      for (const item of batch) {
        if (isolate) this.#savepoint.run();
        const outcome = attempt(item.work, this.#immediate);
        if (isolate) {
          if (!outcome.ok) this.#rollbackToSavepoint.run();
          this.#release.run();
        }
        outcomes.push(outcome);
      }
      if (outcomes.some((o) => o.ok)) this.#writer.commitWrite();
      else this.#writer.rollback();
    } catch (error) {
      // The transaction itself failed (a savepoint or the commit): none of it is stored.
      try {
        if (this.#writer.connection.inTransaction) this.#writer.rollback();
      } catch {
        // SQLite rolls back what it cannot commit; a rollback failing too leaves nothing to undo.
      }
      const reason = this.#writer.noteWriteFailure(error);
      for (const item of batch) item.reject(reason);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok === true) item.resolve(outcome.value);
      else item.reject(outcome?.value);
    });
  }
}

function attempt(work: (tx: ImmediateExecutor) => unknown, tx: ImmediateExecutor): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: work(tx) };
  } catch (error) {
    return { ok: false, value: error };
  }
}
