import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Resources without declared fields (an empty collection of a json-server db.json, `fields: {}`):
 * GraphQL allows no input type without fields, so their create takes no input and they have no
 * update or replace; the rest of the GraphQL schema works.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    schema: parseSchemaText(`
resources:
  tags:
    fields: {}
  marker:
    singleton: true
    fields: {}
  notes:
    fields:
      text: { type: string }
`),
  });
});
afterAll(async () => t.close());

async function gql(query: string): Promise<unknown> {
  return json(await t.app.inject({ method: 'POST', url: '/graphql', payload: { query } }));
}

describe('GraphQL of resources without fields', () => {
  it('creates, lists and deletes them, and serves the other resources', async () => {
    expect(await gql('mutation { createTag { id } }')).toEqual({ data: { createTag: { id: '1' } } });
    expect(await gql('{ tags { id } notes { id } marker { id } }')).toMatchObject({ data: { tags: [{ id: '1' }], notes: [], marker: null } });
    expect(await gql('mutation { deleteTag(id: "1") }')).toEqual({ data: { deleteTag: '1' } });
    expect(await gql('mutation { createNote(input: { text: "a" }) { text } }')).toEqual({ data: { createNote: { text: 'a' } } });
  });

  it('has no update or replace for them', async () => {
    const sdl = (await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' })).body;
    expect(sdl).not.toMatch(/updateTag|replaceTag|TagCreateInput|updateMarker|replaceMarker/);
    expect(sdl).toMatch(/updateNote\(/);
  });
});
