import { describe, expect, it } from 'vitest';
import { DbJsonError } from '../src/errors.js';
import { compileSchema } from '../src/schema/compile-schema.js';
import { inferSchema, type InferredResource } from '../src/schema/infer-schema.js';
import type { FieldDefinition, SchemaDefinition } from '../src/schema/schema-model.js';

/**
 * The schema inferred from a json-server database (src/schema/infer-schema.ts), through its one
 * public function: the definition it makes (which must compile), and what it says it did.
 */

/** Strict, as `init --from --strict` infers: a field every item has a value for is required. */
function infer(data: unknown, options = { strict: true }): { definition: SchemaDefinition; resources: InferredResource[] } {
  const inferred = inferSchema(data, 'db.json', options);
  const { model, problems } = compileSchema(inferred.definition);
  expect(problems).toEqual([]);
  expect(model).toBeDefined();
  return inferred;
}

function fieldsOf(data: unknown, resource: string): Record<string, FieldDefinition> {
  return infer(data).definition.resources[resource]?.fields ?? {};
}

function errorOf(data: unknown): string {
  try {
    inferSchema(data, 'db.json');
  } catch (error) {
    expect(error).toBeInstanceOf(DbJsonError);
    return (error as Error).message;
  }
  throw new Error('expected a DbJsonError');
}

describe('inferSchema', () => {
  it('reads json-server 0.17 README db.json: posts, comments with a reference, profile singleton', () => {
    const { definition, resources } = infer({
      posts: [{ id: 1, title: 'json-server', author: 'typicode' }],
      comments: [{ id: 1, body: 'some comment', postId: 1 }],
      profile: { name: 'typicode' },
    });
    expect(definition.resources).toEqual({
      posts: {
        access: { read: 'public', write: 'public' },
        fields: { title: { type: 'string', required: true }, author: { type: 'string', required: true } },
        relations: { comments: { hasMany: 'comments', foreignKey: 'postId' } },
      },
      comments: {
        access: { read: 'public', write: 'public' },
        fields: { body: { type: 'string', required: true }, postId: { type: 'integer', required: true, references: 'posts', onDelete: 'cascade' } },
        relations: { post: { belongsTo: 'posts', foreignKey: 'postId' } },
      },
      profile: { singleton: true, access: { read: 'public', write: 'public' }, fields: { name: { type: 'string', required: true } } },
    });
    const comments = resources.find((r) => r.name === 'comments');
    expect(comments?.ids).toEqual({ kind: 'kept' });
    expect(comments?.fields.find((f) => f.name === 'postId')?.notes[0]).toMatch(/^reference: every postId is an id of posts/);
    expect(resources.find((r) => r.name === 'posts')?.fields[0]?.notes).toContain('required: present in the 1 post');
  });

  it('makes every field optional unless strict, as json-server front ends leave fields out of their writes', () => {
    const data = {
      posts: [{ id: 1, title: 'a', views: 1 }, { id: 2, title: 'b', views: null }],
      comments: [{ id: 1, text: 'x', postId: 1 }],
      profile: { name: 'typicode' },
    };
    const { definition, resources } = infer(data, { strict: false });
    expect(definition.resources.posts?.fields).toEqual({ title: { type: 'string' }, views: { type: 'integer' } });
    expect(definition.resources.comments?.fields).toEqual({ text: { type: 'string' }, postId: { type: 'integer', references: 'posts', onDelete: 'cascade' } });
    expect(definition.resources.profile?.fields).toEqual({ name: { type: 'string' } });
    const notes = (resource: string, field: string): string[] | undefined => resources.find((r) => r.name === resource)?.fields.find((f) => f.name === field)?.notes;
    expect(notes('posts', 'title')).toContain('optional: present in all 2 posts (--strict makes it required)');
    expect(notes('posts', 'views')).toContain('optional: missing or null in 1 of 2 posts');
    expect(notes('profile', 'name')).toContain('optional: present in profile (--strict makes it required)');
    expect(inferSchema(data, 'db.json').definition).toEqual(definition);
    const strict = infer(data).definition;
    expect(strict.resources.posts?.fields).toEqual({ title: { type: 'string', required: true }, views: { type: 'integer' } });
    expect(strict.resources.comments?.fields?.postId).toEqual({ type: 'integer', required: true, references: 'posts', onDelete: 'cascade' });
  });

  it('reads json-server 1.x ids, strings of digits, as kept integer ids and references', () => {
    const { definition, resources } = infer({
      posts: [{ id: '1', title: 'a title', views: 100 }, { id: '2', title: 'another title', views: 200 }],
      comments: [{ id: '1', text: 'a comment about post 1', postId: '1' }, { id: '2', text: 'another comment about post 1', postId: '1' }],
      profile: { name: 'typicode' },
    });
    expect(resources.map((r) => r.ids)).toEqual([{ kind: 'kept' }, { kind: 'kept' }, { kind: 'kept' }]);
    expect(definition.resources.posts?.fields).toEqual({ title: { type: 'string', required: true }, views: { type: 'integer', required: true } });
    expect(definition.resources.comments?.fields?.postId).toEqual({ type: 'integer', required: true, references: 'posts', onDelete: 'cascade' });
  });

  it('infers each type from every value', () => {
    const fields = fieldsOf(
      {
        things: [
          { n: 1, x: 1, flag: true, at: '2026-01-02T03:04:05Z', day: '2026-01-02', s: 'a', mixed: 1, obj: { a: 1 }, arr: [1], text: '2026-01-02T03:04:05Z', nothing: null, big: 1 },
          { n: 2, x: 1.5, flag: false, at: '2026-01-02T03:04:05.123+01:00', day: '2026-02-28', s: 'b', mixed: 'one', obj: { b: 2 }, arr: [], text: 'not a date', nothing: null, big: 2 ** 60 },
          { n: 3, x: 2, flag: null, day: '2024-02-29', s: '' },
        ],
      },
      'things',
    );
    expect(fields).toEqual({
      n: { type: 'integer', required: true },
      x: { type: 'number', required: true },
      flag: { type: 'boolean' },
      at: { type: 'datetime' },
      day: { type: 'date', required: true },
      s: { type: 'string', required: true },
      mixed: { type: 'json' },
      obj: { type: 'json' },
      arr: { type: 'json' },
      text: { type: 'string' },
      nothing: { type: 'json' },
      big: { type: 'number' },
    });
  });

  it('takes a date-time only with a zone and a real date; anything else keeps the field a string', () => {
    expect(fieldsOf({ a: [{ t: '2026-01-02T03:04:05' }] }, 'a').t?.type).toBe('string');
    expect(fieldsOf({ a: [{ t: '2026-02-30T03:04:05Z' }] }, 'a').t?.type).toBe('string');
    expect(fieldsOf({ a: [{ t: '2026-13-01' }] }, 'a').t?.type).toBe('string');
    expect(fieldsOf({ a: [{ t: '2026-01-02T03:04:05Z' }, { t: '2026-01-02' }] }, 'a').t?.type).toBe('string');
  });

  it('makes an empty collection a resource without fields', () => {
    expect(infer({ posts: [] }).definition.resources.posts?.fields).toEqual({});
  });

  it('renames keys restgraph cannot take, the same way each time, and says why', () => {
    const data = { 'blog-posts': [{ id: 1, 'first-name': 'a', _private: true, 123: 4, sort: 'x', limit: 1, createdAt: 'yesterday', updatedAt: '2026-01-01T00:00:00Z' }] };
    const { definition, resources } = infer(data);
    expect(Object.keys(definition.resources)).toEqual(['blogPosts']);
    expect(Object.keys(definition.resources.blogPosts?.fields ?? {}).sort()).toEqual(['field123', 'firstName', 'limitValue', 'originalCreatedAt', 'private', 'sortValue']);
    const resource = resources[0];
    expect(resource?.timestampKeys).toEqual(['updatedAt']);
    expect(resource?.notes).toContain('renamed from "blog-posts": a resource name has only letters and digits and starts with a lowercase letter');
    expect(resource?.fields.find((f) => f.key === 'sort')?.notes).toContain('renamed from "sort": "sort" is a query parameter of lists');
    expect(inferSchema(data, 'db.json', { strict: true }).definition).toEqual(definition);
  });

  it('renames reserved resource names and fields differing only in case', () => {
    const { definition } = infer({ events: [{ id: 1, name: 'a', Name: 'b' }], auth: { on: true } });
    expect(Object.keys(definition.resources)).toEqual(['eventItems', 'authItems']);
    expect(Object.keys(definition.resources.eventItems?.fields ?? {})).toEqual(['name', 'Name2']);
  });

  it('gives collections whose singular cannot be derived a singular of their own', () => {
    const { definition } = infer({ news: [{ id: 1 }], data: [{ id: 1 }], people: [{ id: 1 }], profile: {}, profiles: [] });
    expect(definition.resources.news?.singular).toBe('newsItem');
    expect(definition.resources.data?.singular).toBeUndefined();
    expect(definition.resources.people?.singular).toBeUndefined();
    expect(definition.resources.profiles?.singular).toBe('profilesItem');
    const graphqlNames = infer({ queries: [{ id: 1 }], pageInfos: [], mutation: {} }).definition;
    expect([graphqlNames.resources.queries?.singular, graphqlNames.resources.pageInfos?.singular, graphqlNames.resources.mutation?.singular]).toEqual(['queriesItem', 'pageInfosItem', 'mutationItem']);
  });

  it('assigns integer ids to collections whose ids are not positive integers, keeping the originals and rewriting references', () => {
    const { definition, resources } = infer({
      users: [{ id: 'ab12', name: 'a' }, { id: 'cd34', name: 'b' }],
      posts: [{ id: 1, userId: 'cd34' }, { id: 2, userId: 'ab12' }],
    });
    expect(resources[0]?.ids).toEqual({ kind: 'assigned', originalField: 'originalId' });
    expect(definition.resources.users?.fields).toEqual({ originalId: { type: 'string', unique: true }, name: { type: 'string', required: true } });
    expect(definition.resources.posts?.fields?.userId).toEqual({ type: 'integer', required: true, references: 'users', onDelete: 'cascade' });
    expect(infer({ a: [{ id: 0 }, { id: 1 }] }).resources[0]?.ids.kind).toBe('assigned');
    expect(infer({ a: [{ id: 1.5 }] }).resources[0]?.ids.kind).toBe('assigned');
    expect(infer({ a: [{ id: '01' }] }).resources[0]?.ids.kind).toBe('assigned');
    expect(infer({ a: [{ name: 'no id' }] }).resources[0]?.ids).toEqual({ kind: 'assigned', originalField: undefined });
  });

  it('keeps <name>Id a plain field unless every value is an id of <name>s or <name>', () => {
    expect(fieldsOf({ posts: [{ id: 1 }], comments: [{ id: 1, postId: 2 }] }, 'comments').postId).toEqual({ type: 'integer', required: true });
    expect(fieldsOf({ comments: [{ id: 1, authorId: 2 }] }, 'comments').authorId).toEqual({ type: 'integer', required: true });
    expect(fieldsOf({ posts: [{ id: 1 }], comments: [{ id: 1, postId: null }] }, 'comments').postId).toEqual({ type: 'json' });
    expect(fieldsOf({ post: [{ id: 1 }], comments: [{ id: 1, postId: 1 }] }, 'comments').postId?.references).toBe('post');
    expect(fieldsOf({ categories: [{ id: 1 }], items: [{ id: 1, categoryId: 1 }] }, 'items').categoryId?.references).toBe('categories');
    expect(fieldsOf({ profile: { id: 1 }, comments: [{ id: 1, profileId: 1 }] }, 'comments').profileId?.references).toBeUndefined();
  });

  it('makes a self reference with relations both ways', () => {
    const { definition } = infer({ comments: [{ id: 1, commentId: null }, { id: 2, commentId: 1 }] });
    expect(definition.resources.comments?.fields?.commentId).toEqual({ type: 'integer', references: 'comments', onDelete: 'cascade' });
    expect(definition.resources.comments?.relations).toEqual({ comment: { belongsTo: 'comments', foreignKey: 'commentId' }, comments: { hasMany: 'comments', foreignKey: 'commentId' } });
  });

  it('names a second hasMany between the same resources after its field', () => {
    const { definition } = infer({ users: [{ id: 1 }], posts: [{ id: 1, userId: 1, editorUserId: 1 }], editorUsers: [{ id: 1 }] });
    expect(definition.resources.users?.relations).toEqual({ posts: { hasMany: 'posts', foreignKey: 'userId' } });
    const twice = infer({ users: [{ id: 1 }], posts: [{ id: 1, userId: 1, user: 'x' }] }).definition;
    expect(twice.resources.posts?.relations).toBeUndefined();
  });

  it('refuses what cannot be served, naming every problem', () => {
    expect(errorOf([1, 2])).toMatch(/must hold an object whose members are collections .* not an array/);
    expect(errorOf('text')).toMatch(/not a string/);
    expect(errorOf({})).toMatch(/has no collections/);
    const message = errorOf({ title: 'x', count: 3, tags: ['a', 'b'], posts: [{ id: 1 }, null] });
    expect(message).toContain('"title" is a string ("x"): a top-level member must be an array (a collection) or an object (a singleton)');
    expect(message).toContain('"count" is a number (3)');
    expect(message).toContain('"tags"[0] is a string ("a"): every item of a collection must be an object');
    expect(message).toContain('"posts"[1] is null');
    expect(errorOf({ posts: [{ id: 1 }, { id: 2 }, { id: '1' }] })).toContain('"posts"[2] has the id "1" of "posts"[0]: ids must be unique within a collection');
    expect(errorOf({ users: [{ id: 'a' }, { id: 'a' }] })).toContain('"users"[1] has the id "a"');
  });
});
