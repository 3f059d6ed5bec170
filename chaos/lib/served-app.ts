import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killAll, startCli, waitReady, type Exit, type Running } from '../../test/helpers/cli-process.js';

/** The admin token of every server a scenario starts. */
export const CHAOS_ADMIN_TOKEN = 'chaos-admin-token-0123456789';

/** A built server (`node dist/cli/main.js serve`) running as a child process. */
export interface ServedApp {
  /** http://127.0.0.1:<port> */
  readonly base: string;
  readonly process: Running;
  /** SIGKILL: no drain, no flush, as a crash or the OOM killer would. */
  kill(): Promise<void>;
  /** SIGTERM: drains and exits; resolves to how it exited. */
  stop(): Promise<Exit>;
}

/**
 * Starts the built server in `cwd` on a free port with `env` (plus the admin token and warn-level
 * logs) and resolves once /readyz answers 200. `track` keeps every process for {@link killAll}.
 */
export async function serveBuilt(cwd: string, env: Record<string, string>, track: Running[]): Promise<ServedApp> {
  const port = await freePort();
  const running = startCli(cwd, ['serve'], { PORT: String(port), RESTGRAPH_ADMIN_TOKEN: CHAOS_ADMIN_TOKEN, LOG_LEVEL: 'warn', ...env }, track);
  await waitReady(running, port);
  const signal = (name: NodeJS.Signals): Promise<Exit> => {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill(name);
    return running.exited;
  };
  return {
    base: `http://127.0.0.1:${port}`,
    process: running,
    kill: async () => {
      await signal('SIGKILL');
    },
    stop: () => signal('SIGTERM'),
  };
}

export { killAll };

/** A fresh folder under the OS temp dir for a scenario's files, removed by `cleanup`. */
export function scratchDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
