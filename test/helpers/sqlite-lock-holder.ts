import { createRequire } from 'node:module';
import { startProcess, type Running } from './cli-process.js';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** Another process holding a SQLite file's write lock, as the CLI or a backup tool would. */
export interface LockHolder {
  /** Ends its transaction and exits; resolves once the lock is free. */
  release(): Promise<void>;
}

/**
 * Starts a process that opens `file` with better-sqlite3, runs BEGIN IMMEDIATE (SQLite's write
 * lock) and holds it until released; resolves once the lock is taken. `track` keeps the process
 * for cleanup (killAll).
 */
export async function holdWriteLock(file: string, track: Running[]): Promise<LockHolder> {
  const script = `
    const Database = require(${JSON.stringify(BETTER_SQLITE3)});
    const db = new Database(${JSON.stringify(file)}, { timeout: 10000 });
    db.exec('BEGIN IMMEDIATE');
    process.on('SIGTERM', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
    process.stdout.write('locked\\n');
    setInterval(() => undefined, 1000);
  `;
  const holder = startProcess(process.execPath, ['-e', script], process.cwd(), {}, track);
  const deadline = Date.now() + 10_000;
  while (!holder.stdout().includes('locked')) {
    if (Date.now() > deadline || holder.child.exitCode !== null) throw new Error(`the lock holder did not take the lock: ${holder.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return {
    release: async () => {
      holder.child.kill('SIGTERM');
      await holder.exited;
    },
  };
}
