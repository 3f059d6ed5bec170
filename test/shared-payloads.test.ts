import { describe, expect, it } from 'vitest';
import { SharedPayloads } from '../src/graphql/shared-payloads.js';

/** A shared subscription result goes out as its one JSON text, in graphql-ws's message. */
describe('SharedPayloads', () => {
  const shared = { data: { userCreated: { id: '1', name: 'Ada', payload: 'a field named payload' } } };
  const text = JSON.stringify(shared);
  let made = 0;
  const payloads = new SharedPayloads((value) => {
    if (value !== shared) return undefined;
    made++;
    return text;
  });
  const message = (id: string, payload: unknown) => JSON.stringify({ id, type: 'next', payload }, payloads.replacer);

  it('the message on the wire is the one JSON.stringify would make, with the shared text in it', () => {
    for (const id of ['a', 'b"c', 'd']) {
      expect(JSON.parse(payloads.substitute(message(id, shared)))).toEqual({ id, type: 'next', payload: shared });
      expect(payloads.substitute(message(id, shared))).toBe(JSON.stringify({ id, type: 'next', payload: shared }));
    }
    // The envelope is stringified per message; the result's text is asked for, not made again here.
    expect(made).toBe(6);
  });

  it('other messages, and payloads that are not shared (a key named payload inside one too), go as they are', () => {
    const other = { data: { note: { payload: { deep: true } } } };
    expect(payloads.substitute(message('x', other))).toBe(JSON.stringify({ id: 'x', type: 'next', payload: other }));
    expect(payloads.substitute(JSON.stringify({ id: 'x', type: 'complete' }, payloads.replacer))).toBe('{"id":"x","type":"complete"}');
  });

  it('a stand-in whose message was never sent (a closed socket) does not leak into the next message', () => {
    message('lost', shared); // stringified, not sent
    expect(payloads.substitute(JSON.stringify({ id: 'y', type: 'complete' }, payloads.replacer))).toBe('{"id":"y","type":"complete"}');
    expect(payloads.substitute(message('z', shared))).toBe(JSON.stringify({ id: 'z', type: 'next', payload: shared }));
  });
});
