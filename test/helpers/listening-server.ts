import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RestgraphOptions } from '../../src/app/app-options.js';
import { listenApp, tempDatabase, waitUntil, type ListeningApp } from './event-stream.js';

/**
 * An app listening on a database of its own for the tests of one describe (beforeAll, afterEach
 * and afterAll are registered here): after each test, `endEach` ends what the test opened, and
 * every subscriber must then have ended on the server, so the next test starts with none.
 */
export function listeningServer(options: RestgraphOptions, endEach: () => Promise<void>): { readonly server: ListeningApp } {
  const state: { server?: ListeningApp; db?: Awaited<ReturnType<typeof tempDatabase>> } = {};
  beforeAll(async () => {
    state.db = await tempDatabase();
    state.server = await listenApp(state.db.url, options);
  });
  afterEach(async () => {
    await endEach();
    const server = state.server;
    if (server !== undefined) await waitUntil(() => server.app.restgraph.events.subscriberCount === 0, 'every subscription and stream of the test to end on the server');
  });
  afterAll(async () => {
    await state.server?.close();
    await state.db?.cleanup();
  });
  return {
    get server() {
      if (state.server === undefined) throw new Error('the server has not started');
      return state.server;
    },
  };
}
