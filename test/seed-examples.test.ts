import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * Every row of the seed's REST tables (shared/seed, sections 4.1 and 4.2), exactly as shown:
 * methods, paths, statuses and body shapes.
 */
describe('the seed examples', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  for (const base of ['', '/v1']) {
    describe(`users resource at ${base || '(unversioned)'}`, () => {
      it('GET /users answers 200 with a JSON array of user objects', async () => {
        await t.app.inject({ method: 'POST', url: `${base}/users`, payload: { name: 'Listed' } });
        const response = await t.app.inject({ method: 'GET', url: `${base}/users` });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        const users = json<Record<string, unknown>[]>(response);
        expect(Array.isArray(users)).toBe(true);
        expect(users.length).toBeGreaterThan(0);
        for (const user of users) expect(user).toMatchObject({ id: expect.any(Number) as number, name: expect.any(String) as string });
      });

      it('POST /users with {"name"} answers 201 with the created user, containing id', async () => {
        const response = await t.app.inject({
          method: 'POST',
          url: `${base}/users`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'Alice' }),
        });
        expect(response.statusCode).toBe(201);
        const user = json<{ id: number; name: string }>(response);
        expect(user.id).toEqual(expect.any(Number));
        expect(user.name).toBe('Alice');
        expect(response.headers.location).toBe(`${base}/users/${user.id}`);
      });

      it('GET /users/<id> answers 200 with id and name', async () => {
        const created = json<{ id: number }>(await t.app.inject({ method: 'POST', url: `${base}/users`, payload: { name: 'Bob' } }));
        const response = await t.app.inject({ method: 'GET', url: `${base}/users/${created.id}` });
        expect(response.statusCode).toBe(200);
        expect(json(response)).toMatchObject({ id: created.id, name: 'Bob' });
      });

      it('PATCH /users/<id> changes only the fields sent and returns the updated user', async () => {
        const created = json<{ id: number }>(await t.app.inject({ method: 'POST', url: `${base}/users`, payload: { name: 'Carol', bio: 'keeps this' } }));
        const response = await t.app.inject({ method: 'PATCH', url: `${base}/users/${created.id}`, payload: { name: 'Caroline' } });
        expect(response.statusCode).toBe(200);
        expect(json(response)).toMatchObject({ id: created.id, name: 'Caroline', bio: 'keeps this' });
      });

      it('DELETE /users/<id> answers 204 with an empty body, and the user is gone (404)', async () => {
        const created = json<{ id: number }>(await t.app.inject({ method: 'POST', url: `${base}/users`, payload: { name: 'Dave' } }));
        const response = await t.app.inject({ method: 'DELETE', url: `${base}/users/${created.id}` });
        expect(response.statusCode).toBe(204);
        expect(response.body).toBe('');
        const after = await t.app.inject({ method: 'GET', url: `${base}/users/${created.id}` });
        expect(after.statusCode).toBe(404);
      });
    });
  }

  it('the versioned and unversioned forms name the same objects', async () => {
    const created = json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/v1/users', payload: { name: 'Eve' } }));
    const response = await t.app.inject({ method: 'GET', url: `/users/${created.id}` });
    expect(json(response)).toMatchObject({ id: created.id, name: 'Eve' });
  });

  it('sorts by the field a sort parameter names', async () => {
    for (const name of ['Zed', 'Amy', 'Mia']) await t.app.inject({ method: 'POST', url: '/users', payload: { name } });
    const names = json<{ name: string }[]>(await t.app.inject({ method: 'GET', url: '/users?sort=name' })).map((u) => u.name);
    expect(names).toEqual([...names].sort());
  });
});
