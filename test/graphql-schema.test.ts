import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getNamedType, isEnumType, isNonNullType, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finish, killAll, startCli, type Running } from './helpers/cli-process.js';
import { startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { SchemaError } from '../src/errors.js';

/**
 * The generated GraphQL schema: types per field type, deprecations, the SDL endpoint, and
 * `restgraph export graphql` printing exactly what the server serves.
 */

const SCHEMA = `
versions: [v1]
resources:
  people:
    singular: person
    access: { read: public, write: public }
    fields:
      fullName: { type: string, required: true }
      name:     { type: string, deprecated: "use fullName" }
      small:    { type: integer, min: 0, max: 100 }
      big:      { type: integer, min: 0 }
      ratio:    { type: number }
      active:   { type: boolean, default: true }
      born:     { type: date }
      seen:     { type: datetime }
      mood:     { type: enum, values: [happy, sad] }
      phase:    { type: enum, values: ["true", "false", unknown] }
      extra:    { type: json }
      bestFriendId: { type: integer, references: people, onDelete: setNull }
    relations:
      bestFriend: { belongsTo: people, foreignKey: bestFriendId }
`;

let dir: ReturnType<typeof tempDir>;
let schemaFile: string;
let t: TestApp;
let sdl: string;
const children: Running[] = [];

beforeAll(async () => {
  dir = tempDir();
  schemaFile = join(dir.path, 'people.yaml');
  writeFileSync(schemaFile, SCHEMA);
  t = await startTestApp({ schema: schemaFile });
  const res = await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  sdl = res.body;
});

afterAll(async () => {
  await killAll(children);
  await t.close();
  dir.cleanup();
});

describe('generated types', () => {
  it('maps every field type to its GraphQL type, nullability from required', () => {
    const schema = buildSchema(sdl);
    const person = schema.getType('Person') as GraphQLObjectType;
    const fields = person.getFields();
    const typeOf = (name: string): string => String(fields[name]?.type);
    expect(typeOf('id')).toBe('ID!');
    expect(typeOf('fullName')).toBe('String!');
    expect(typeOf('small')).toBe('Int');
    expect(typeOf('big')).toBe('SafeInt');
    expect(typeOf('ratio')).toBe('Float');
    expect(typeOf('active')).toBe('Boolean');
    expect(typeOf('born')).toBe('Date');
    expect(typeOf('seen')).toBe('DateTime');
    expect(typeOf('mood')).toBe('PersonMood');
    expect(isEnumType(fields.mood === undefined ? undefined : getNamedType(fields.mood.type))).toBe(true);
    // "true" and "false" cannot be GraphQL enum values: the field stays a String, checked by the core.
    expect(typeOf('phase')).toBe('String');
    expect(typeOf('extra')).toBe('JSON');
    expect(typeOf('bestFriendId')).toBe('ID');
    expect(typeOf('bestFriend')).toBe('Person');
    expect(typeOf('createdAt')).toBe('DateTime!');
    expect(isNonNullType(fields.fullName?.type)).toBe(true);
  });

  it('names the root fields after the singular and plural', () => {
    const schema = buildSchema(sdl);
    expect(Object.keys(schema.getQueryType()?.getFields() ?? {})).toEqual(['person', 'people', 'peopleConnection', 'peopleAggregate']);
    expect(Object.keys(schema.getMutationType()?.getFields() ?? {})).toEqual(['createPerson', 'updatePerson', 'replacePerson', 'deletePerson']);
  });

  it('shows deprecated fields as @deprecated, in the output type and the inputs, and they keep working', async () => {
    expect(sdl).toContain('name: String @deprecated(reason: "use fullName")');
    const schema = buildSchema(sdl);
    const person = schema.getType('Person') as GraphQLObjectType;
    expect(person.getFields().name?.deprecationReason).toBe('use fullName');
    expect(person.getFields().fullName?.deprecationReason).toBeUndefined();
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'mutation { createPerson(input: {fullName: "Ada Lovelace", name: "Ada"}) { fullName name } }' },
    });
    expect(res.json(), res.body).toEqual({ data: { createPerson: { fullName: "Ada Lovelace", name: "Ada" } } });
  });

  it('a schema file with an empty deprecation reason is refused at start-up, naming the field', () => {
    const bad = SCHEMA.replace('deprecated: "use fullName"', 'deprecated: ""');
    expect(() => parseSchemaText(bad, 'people.yaml')).toThrow(SchemaError);
    expect(() => parseSchemaText(bad, 'people.yaml')).toThrow(/resources\.people\.fields\.name\.deprecated/);
  });

  it('SafeInt takes integers beyond 32 bits and refuses fractions and unsafe integers', async () => {
    const ok = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'mutation($big: SafeInt) { createPerson(input: {fullName: "B", big: $big}) { big } }', variables: { big: 9007199254740991 } },
    });
    expect(ok.json()).toEqual({ data: { createPerson: { big: 9007199254740991 } } });
    for (const big of [1.5, 9007199254740992, '12']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        payload: { query: 'mutation($big: SafeInt) { createPerson(input: {fullName: "B", big: $big}) { big } }', variables: { big } },
      });
      expect(res.statusCode).toBe(200);
      const body = res.json<{ data?: unknown; errors: { extensions: { code: string } }[] }>();
      expect(body.data).toBeUndefined();
      expect(body.errors[0]?.extensions.code).toBe('graphql-validation');
    }
  });
});

describe('with introspection off', () => {
  it('the SDL is not published either (404 not-found, GraphQL-shaped), while queries work', async () => {
    const hidden = await startTestApp({ schema: schemaFile, graphql: { introspection: false } });
    try {
      const res = await hidden.app.inject({ method: 'GET', url: '/graphql/schema.graphql' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        errors: [{ message: 'The schema is not published: introspection is switched off on this server.', extensions: { code: 'not-found', status: 404 } }],
      });
      const query = await hidden.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ people(first: 1) { id } }' } });
      expect(query.json()).toEqual({ data: { people: [] } });
      const introspection = await hidden.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __schema { types { name } } }' } });
      expect(introspection.json<{ errors: { extensions: { code: string } }[] }>().errors[0]?.extensions.code).toBe('graphql-validation');
    } finally {
      await hidden.close();
    }
  });
});

describe('restgraph export graphql', () => {
  it('prints exactly the SDL the server serves at /graphql/schema.graphql', async () => {
    const out = await finish(startCli(dir.path, ['export', 'graphql', schemaFile], {}, children));
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe(sdl);
  });

  it('uses RESTGRAPH_SCHEMA when no file is given, and the built-in example without either', async () => {
    const fromEnv = await finish(startCli(dir.path, ['export', 'graphql'], { RESTGRAPH_SCHEMA: schemaFile }, children));
    expect(fromEnv.stdout).toBe(sdl);
    const example = await finish(startCli(dir.path, ['export', 'graphql'], {}, children));
    expect(example.code).toBe(0);
    expect(example.stdout).toContain('type User {');
    expect(example.stdout).toContain('posts(');
    expect(() => buildSchema(example.stdout)).not.toThrow();
  });

  it('a missing schema file exits 1 naming it, with nothing on stdout', async () => {
    const out = await finish(startCli(dir.path, ['export', 'graphql', 'nope.yaml'], {}, children));
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('nope.yaml');
    expect(out.stderr).toContain('[RG_SCHEMA_INVALID]');
  });
});
