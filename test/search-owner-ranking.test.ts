import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * A search under an owner rule ranks a token's rows by nothing the rule hides: the rows other
 * owners write never change the order of one's own results (SQLite's BM25 weighs each word by how
 * many rows of the whole index hold it, which would tell a token about rows it may not read).
 */

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const SCHEMA = `
resources:
  diaries:
    access: { read: authenticated, write: authenticated }
    owner: userId
    fields:
      userId: { type: string }
      text:   { type: string, searchable: true }
`;

async function bearer(sub: string): Promise<string> {
  const token = await new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
  return `Bearer ${token}`;
}

describe('search under an owner rule', () => {
  let t: TestApp;
  let one: string;
  let two: string;
  const write = async (authorization: string, text: string): Promise<void> => {
    const response = await t.app.inject({ method: 'POST', url: '/diaries', payload: { text }, headers: { authorization } });
    expect(response.statusCode, response.body).toBe(201);
  };
  const found = async (authorization: string, search: string): Promise<number[]> => {
    const response = await t.app.inject({ method: 'GET', url: `/diaries?search=${encodeURIComponent(search)}`, headers: { authorization } });
    expect(response.statusCode, response.body).toBe(200);
    return json<{ id: number }[]>(response).map((r) => r.id);
  };

  beforeAll(async () => {
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), jwt: { secret: SECRET } });
    [one, two] = [await bearer('one'), await bearer('two')];
    await write(one, 'apple apple banana filler words here');
    await write(one, 'apple banana banana filler words here');
  });
  afterAll(async () => t.close());

  it("another owner's rows never change the order of one's own results", async () => {
    const before = await found(one, 'apple banana');
    expect(before).toHaveLength(2);
    for (let i = 0; i < 6; i++) await write(two, 'apple secret plan');
    expect(await found(one, 'apple banana')).toEqual(before);
    for (let i = 0; i < 12; i++) await write(two, 'banana secret plan');
    expect(await found(one, 'apple banana')).toEqual(before);
    expect(await found(one, 'secret')).toEqual([]);
  });
});
