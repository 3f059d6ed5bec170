import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferSchema } from '../src/schema/infer-schema.js';
import { startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

/**
 * The texts restgraph writes about a schema (OpenAPI descriptions and summaries, GraphQL
 * descriptions, `init --from` notes) put "a" or "an" before a name by how it is said: an author,
 * a user, an hour, a unicorn, an orderItem, an ID (issue 33, point 22: a label read "A author.").
 */

const SCHEMA = `
versions: [v1]
resources:
  authors:
    fields:
      name: { type: string }
    relations:
      users: { hasMany: users, foreignKey: authorId }
  users:
    fields:
      name: { type: string }
      authorId: { type: integer, references: authors }
  hours:
    fields:
      label: { type: string }
  unicorns:
    fields:
      name: { type: string }
  orderItems:
    fields:
      quantity: { type: integer }
`;

/** Wrong articles before the names above and before the scalars' names. */
const WRONG = /\b(?:[Aa] (?:author|hour|orderItem|ID|Int)\b|[Aa]n (?:user|unicorn|book|DateTime|String|JSON)\b)/g;

describe('generated texts take "a" or "an" by sound', () => {
  let t: TestApp;
  const dir = tempDir();

  beforeAll(async () => {
    const schema = join(dir.path, 'articles.yaml');
    writeFileSync(schema, SCHEMA);
    t = await startTestApp({ schema });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('in the OpenAPI document: record descriptions and operation summaries', async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).body;
    const document = JSON.parse(text) as { components: { schemas: Record<string, { description?: string }> }; paths: Record<string, Record<string, { summary?: string }>> };
    const schemas = document.components.schemas;
    expect([schemas.Author, schemas.User, schemas.Hour, schemas.Unicorn, schemas.OrderItem].map((schema) => schema?.description)).toEqual([
      'An author.',
      'A user.',
      'An hour.',
      'A unicorn.',
      'An orderItem.',
    ]);
    expect(document.paths['/authors']?.post?.summary).toBe('Create an author');
    expect(document.paths['/users']?.post?.summary).toBe('Create a user');
    expect(document.paths['/authors/{id}']?.delete?.summary).toBe('Delete an author');
    expect(document.paths['/authors/{id}/users']?.get?.summary).toBe("List an author's users");
    expect(text.match(WRONG)).toBeNull();
  });

  it('in the GraphQL schema: mutation and filter descriptions', async () => {
    const sdl = (await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' })).body;
    expect(sdl).toContain('Creates an author.');
    expect(sdl).toContain('Creates a user.');
    expect(sdl).toContain('Deletes an hour');
    expect(sdl).toContain('Conditions on an ID field');
    expect(sdl.match(WRONG)).toBeNull();
  });

  it('in the notes of a schema inferred from a db.json', () => {
    const inferred = inferSchema({ authors: [{ id: 1, name: 'A' }], books: [{ id: 1, title: 'B', authorId: 1 }] }, 'db.json');
    const notes = inferred.resources.flatMap((resource) => resource.fields.flatMap((field) => field.notes)).join('\n');
    expect(notes).toContain('deleting an author deletes its books');
  });
});
