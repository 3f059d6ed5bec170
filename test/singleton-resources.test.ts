import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * A singleton resource (`singleton: true`): one record at /profile with GET, PUT and PATCH, no
 * list, create or delete; the same in GraphQL (`profile`, `replaceProfile`, `updateProfile`) and
 * in the OpenAPI document. Every response is checked against the OpenAPI document.
 */

checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  profile:
    singleton: true
    access: { read: public, write: authenticated }
    fields:
      name: { type: string, required: true }
      links: { type: json }
  posts:
    fields:
      title: { type: string }
`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(SCHEMA) });
});
afterAll(async () => t.close());

describe('singleton resources', () => {
  it('answers 404 until the first PUT creates the record, then GET, PUT and PATCH work on it', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/profile', headers: { authorization: '' } })).statusCode).toBe(404);
    const put = await t.app.inject({ method: 'PUT', url: '/profile', payload: { name: 'typicode' } });
    expect(put.statusCode).toBe(200);
    expect(json(put)).toMatchObject({ id: 1, name: 'typicode', links: null });
    const read = await t.app.inject({ method: 'GET', url: '/profile', headers: { authorization: '' } });
    expect(json(read)).toMatchObject({ id: 1, name: 'typicode' });
    const patch = await t.app.inject({ method: 'PATCH', url: '/v1/profile', payload: { links: { home: 'https://example.com' } } });
    expect(json(patch)).toMatchObject({ id: 1, name: 'typicode', links: { home: 'https://example.com' } });
    const replaced = await t.app.inject({ method: 'PUT', url: '/profile', payload: { name: 'again' } });
    expect(json(replaced)).toMatchObject({ id: 1, name: 'again', links: null });
  });

  it('keeps its access rules: anonymous writes are refused', async () => {
    const response = await t.app.inject({ method: 'PATCH', url: '/profile', payload: { name: 'x' }, headers: { authorization: '' } });
    expect(response.statusCode).toBe(401);
  });

  it('has no list, create, delete or item paths', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/profile', payload: { name: 'x' } })).statusCode).toBe(405);
    expect((await t.app.inject({ method: 'DELETE', url: '/profile' })).statusCode).toBe(405);
    expect((await t.app.inject({ method: 'GET', url: '/profile/1' })).statusCode).toBe(404);
  });

  it('is described in OpenAPI at its own path with get, put and patch only', async () => {
    const document = json<{ paths: Record<string, Record<string, unknown>> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(Object.keys(document.paths['/profile'] ?? {}).filter((k) => k !== 'parameters').sort()).toEqual(['get', 'patch', 'put']);
    expect(document.paths['/profile/{id}']).toBeUndefined();
  });

  it('is served by GraphQL as a query field and two mutations without ids', async () => {
    const gql = async (query: string) => json<{ data?: Record<string, unknown>; errors?: unknown[] }>(await t.app.inject({ method: 'POST', url: '/graphql', payload: { query } }));
    expect(await gql('mutation { updateProfile(input: { name: "from graphql" }) { id name } }')).toEqual({ data: { updateProfile: { id: '1', name: 'from graphql' } } });
    expect(await gql('{ profile { name } }')).toEqual({ data: { profile: { name: 'from graphql' } } });
    expect(await gql('mutation { replaceProfile(input: { name: "replaced" }) { name links } }')).toEqual({ data: { replaceProfile: { name: 'replaced', links: null } } });
    const sdl = (await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' })).body;
    expect(sdl).not.toMatch(/createProfile|deleteProfile|profilesConnection/);
  });
});
