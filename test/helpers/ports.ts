import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Ports for the servers tests start, given to no other test of the run. Tests run in several
 * worker processes at once; a port that is free now may be handed to another worker before our
 * server binds it. Then one server cannot listen, and its test, polling that port, talks to the
 * other test's server: a SIGKILL test once replayed another database's (empty) outbox. So a port is
 * claimed with a file created exclusively in a folder the workers share, holding the claiming
 * process's id: released when that process exits, or taken over once it is gone.
 */
const PORT_CLAIMS = join(tmpdir(), 'restgraph-test-ports');
const portsClaimed = new Set<string>();
process.once('exit', () => {
  for (const claim of portsClaimed) rmSync(claim, { force: true });
});

/** Whether the process that claimed a port is gone (workers are often ended without their exit hook). */
function claimIsStale(claim: string): boolean {
  let text: string;
  try {
    text = readFileSync(claim, 'utf8');
  } catch {
    return false;
  }
  // Empty: being written right now.
  const pid = Number(text);
  if (text === '' || !Number.isInteger(pid) || pid <= 0) return text !== '';
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function claimPort(port: number): boolean {
  mkdirSync(PORT_CLAIMS, { recursive: true });
  const claim = join(PORT_CLAIMS, String(port));
  if (claimIsStale(claim)) {
    // Taken over by renaming it away: of several workers that found it stale, one succeeds.
    const aside = `${claim}.stale-${String(process.pid)}`;
    try {
      renameSync(claim, aside);
      rmSync(aside, { force: true });
    } catch {
      return false;
    }
  }
  try {
    writeFileSync(claim, String(process.pid), { flag: 'wx' });
  } catch {
    return false;
  }
  portsClaimed.add(claim);
  return true;
}

/** Gives a claimed port back (one that turned out not to be free, or whose server is gone for good). */
export function releasePort(port: number): void {
  const claim = join(PORT_CLAIMS, String(port));
  if (portsClaimed.delete(claim)) rmSync(claim, { force: true });
}

/** Listens on `port` (0: any) of 127.0.0.1 and closes again; resolves to the port, or undefined when it is taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => done(bound));
    });
  });
}

/** A port free on 127.0.0.1 right now, and claimed for this process: no other test of the run gets it. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probe(0);
    if (port !== undefined && claimPort(port)) return port;
  }
}

/** A free, claimed port of four digits (1024–9999): where a page shows 3000, output keeps its length. */
export async function fourDigitPort(): Promise<number> {
  for (;;) {
    const port = 1024 + Math.floor(Math.random() * 8976);
    if (!claimPort(port)) continue;
    if ((await probe(port)) === port) return port;
    releasePort(port);
  }
}
