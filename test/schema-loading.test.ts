import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaError, type SchemaProblem } from '../src/errors.js';
import { EXAMPLE_SCHEMA_PATH, SCHEMA_JSON_SCHEMA_PATH, loadSchemaFile, parseSchemaText } from '../src/schema/load-schema.js';
import { tempDir } from './helpers/test-app.js';

/**
 * The schema loader: YAML and JSON files, the published JSON Schema, and the semantic checks of
 * compile-schema.ts. Every error is a SchemaError naming the file, the path inside the document,
 * the line and the reason, for every problem at once.
 */

/** Parses `text` and returns the SchemaError it must throw. */
function schemaErrorOf(text: string, file = 'bad.yaml'): SchemaError {
  try {
    parseSchemaText(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return error as SchemaError;
  }
  throw new Error('expected a SchemaError, but the schema loaded');
}

/** 1-based number of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`"${needle}" is not in the text`);
  return index + 1;
}

/** The problem at `path`; fails when there is none or more than one. */
function problemAt(error: SchemaError, path: string): SchemaProblem {
  const found = error.problems.filter((p) => p.path === path);
  expect(found, `problems at ${path} in ${JSON.stringify(error.problems)}`).toHaveLength(1);
  return found[0] as SchemaProblem;
}

const yaml = (lines: string[]): string => `${lines.join('\n')}\n`;

describe('loading the built-in example', () => {
  it('loads examples/example-schema.yaml with users, posts, products and orders', () => {
    const model = loadSchemaFile(EXAMPLE_SCHEMA_PATH);
    expect([...model.resources.keys()]).toEqual(['users', 'posts', 'products', 'orders']);
    expect(model.versions).toEqual(['v1']);
    expect(model.latestVersion).toBe('v1');
  });

  it('gives users the system fields first, then name (the only required field) and an optional unique email', () => {
    const users = loadSchemaFile(EXAMPLE_SCHEMA_PATH).resources.get('users');
    expect(users?.singular).toBe('user');
    expect(users?.typeName).toBe('User');
    expect([...(users?.fields.keys() ?? [])]).toEqual(['id', 'createdAt', 'updatedAt', 'name', 'email', 'bio']);
    expect(users?.writableFields.filter((f) => f.required).map((f) => f.name)).toEqual(['name']);
    expect(users?.fields.get('email')).toMatchObject({ type: 'string', format: 'email', unique: true, required: false });
    expect(users?.fields.get('id')).toMatchObject({ type: 'integer', system: true });
  });

  it('compiles the relations of the example', () => {
    const model = loadSchemaFile(EXAMPLE_SCHEMA_PATH);
    expect(model.resources.get('users')?.relations.get('posts')).toEqual({ name: 'posts', kind: 'hasMany', target: 'posts', foreignKey: 'userId' });
    expect(model.resources.get('posts')?.relations.get('user')).toEqual({ name: 'user', kind: 'belongsTo', target: 'users', foreignKey: 'userId' });
    expect(model.resources.get('posts')?.fields.get('title')).toMatchObject({ required: true });
    expect(model.resources.get('posts')?.fields.get('userId')).toMatchObject({ type: 'integer', references: 'users', onDelete: 'cascade' });
  });

  it('passes the published JSON Schema, which is itself a valid draft 2020-12 schema', () => {
    const published = JSON.parse(readFileSync(SCHEMA_JSON_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
    expect(published.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    expect(ajv.validateSchema(published), JSON.stringify(ajv.errors)).toBe(true);
    const validate = ajv.compile(published);
    const example: unknown = parseYaml(readFileSync(EXAMPLE_SCHEMA_PATH, 'utf8'));
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
  });

  it('the published JSON Schema rejects what the loader rejects (an unknown field type)', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_JSON_SCHEMA_PATH, 'utf8')) as object);
    expect(validate({ resources: { users: { fields: { name: { type: 'text' } } } } })).toBe(false);
  });

  it('points editors at the published JSON Schema from the example file', () => {
    const firstLine = readFileSync(EXAMPLE_SCHEMA_PATH, 'utf8').split('\n')[0];
    expect(firstLine).toBe('# yaml-language-server: $schema=../schema/restgraph.schema.json');
  });
});

describe('schema files on disk', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => {
    dir = tempDir('restgraph-schema-');
  });
  afterAll(() => dir.cleanup());

  it('loads a YAML file', () => {
    const file = join(dir.path, 'schema.yaml');
    writeFileSync(file, yaml(['resources:', '  notes:', '    fields:', '      text: { type: string, required: true }']));
    const model = loadSchemaFile(file);
    expect([...model.resources.keys()]).toEqual(['notes']);
    expect(model.resources.get('notes')?.singular).toBe('note');
    expect(model.versions).toEqual(['v1']);
  });

  it('loads a JSON (not YAML-styled) file', () => {
    const file = join(dir.path, 'schema.json');
    const definition = {
      versions: ['v1', 'v2'],
      resources: {
        authors: { fields: { name: { type: 'string', required: true } }, relations: { books: { hasMany: 'books', foreignKey: 'authorId' } } },
        books: { fields: { title: { type: 'string' }, authorId: { type: 'integer', references: 'authors' } } },
      },
    };
    writeFileSync(file, JSON.stringify(definition, null, 2));
    const model = loadSchemaFile(file);
    expect([...model.resources.keys()]).toEqual(['authors', 'books']);
    expect(model.versions).toEqual(['v1', 'v2']);
    expect(model.latestVersion).toBe('v2');
    expect(model.definition).toEqual(definition);
    expect(model.resources.get('authors')?.relations.get('books')).toEqual({ name: 'books', kind: 'hasMany', target: 'books', foreignKey: 'authorId' });
  });

  it('reports a JSON file\'s violation with path and line', () => {
    const file = join(dir.path, 'bad.json');
    const text = ['{', '  "resources": {', '    "users": {', '      "fields": {', '        "name": { "type": "strin" }', '      }', '    }', '  }', '}'].join('\n');
    writeFileSync(file, text);
    let caught: unknown;
    try {
      loadSchemaFile(file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SchemaError);
    const error = caught as SchemaError;
    expect(error.file).toBe(file);
    expect(problemAt(error, 'resources.users.fields.name.type').line).toBe(5);
    expect(error.message).toContain(`${file}:5:`);
  });

  it('a missing file is a SchemaError naming the file', () => {
    const file = join(dir.path, 'missing.yaml');
    expect(() => loadSchemaFile(file)).toThrow(SchemaError);
    try {
      loadSchemaFile(file);
    } catch (error) {
      expect((error as SchemaError).file).toBe(file);
      expect((error as SchemaError).message).toContain(file);
      expect((error as SchemaError).message).toContain('cannot read the file: ENOENT');
    }
  });
});

describe('YAML syntax errors', () => {
  it('reports the line and column of a nested mapping in a compact mapping', () => {
    const text = yaml(['resources:', '  users:', '    fields: a: b']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatchObject({ path: '', line: 3, column: 13 });
    expect(error.problems[0]?.message).toMatch(/nested mappings/i);
    expect(error.message).toContain('bad.yaml:3:13');
  });

  it('reports a tab used as indentation on its line', () => {
    const error = schemaErrorOf('resources:\n  users:\n\tfields: {}\n');
    expect(error.problems[0]).toMatchObject({ line: 3, column: 1 });
    expect(error.problems[0]?.message).toMatch(/tab/i);
  });

  it('reports a duplicate key on the line of the second one', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string }', '      name: { type: integer }']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatchObject({ line: 5 });
    expect(error.problems[0]?.message).toMatch(/unique/i);
  });

  it('an unclosed flow mapping is a SchemaError with a line, not a crash', () => {
    const error = schemaErrorOf(yaml(['resources:', '  users:', '    fields:', '      name: { type: string']));
    expect(error.problems.length).toBeGreaterThan(0);
    expect(error.problems[0]?.line).toEqual(expect.any(Number));
  });
});

describe('JSON Schema violations', () => {
  it('an unknown property names the object holding it, the property and its line', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string, colour: red }']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    const problem = error.problems[0];
    expect(['resources.users.fields.name', 'resources.users.fields.name.colour']).toContain(problem?.path);
    expect(problem?.message).toBe('unknown property "colour"');
    expect(problem?.line).toBe(4);
  });

  it('an unknown property of a resource is reported on its own line', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string }', '    permissions: { read: [users:read] }']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    const problem = error.problems[0];
    expect(['resources.users', 'resources.users.permissions']).toContain(problem?.path);
    expect(problem?.message).toBe('unknown property "permissions"');
    // The line of `permissions:`, not the line where the resource's mapping starts (`fields:`).
    expect(problem?.line).toBe(lineOf(text, 'permissions:'));
  });

  it('an unknown top-level property', () => {
    const error = schemaErrorOf(yaml(['resources:', '  users: {}', 'title: mine']));
    expect(error.problems).toHaveLength(1);
    expect(['', 'title']).toContain(error.problems[0]?.path);
    expect(error.problems[0]?.message).toBe('unknown property "title"');
    expect(error.message).toMatch(/bad\.yaml(:\d+:\d+)? at (\(root\)|title): unknown property "title"/);
  });

  it('a wrong type value names resources.users.fields.name.type, its line and the allowed types', () => {
    const text = yaml(['versions: [v1]', 'resources:', '  users:', '    fields:', '      name: { type: text }']);
    const error = schemaErrorOf(text, 'api.yaml');
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, 'resources.users.fields.name.type');
    expect(problem.line).toBe(5);
    expect(problem.column).toEqual(expect.any(Number));
    expect(problem.message).toContain('"string"');
    expect(problem.message).toContain('"json"');
    expect(error.message).toContain(`api.yaml:5:${problem.column ?? 0} at resources.users.fields.name.type: must be one of`);
  });

  it('a missing type names the field and its line', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string }', '      age: { required: true }']);
    const error = schemaErrorOf(text);
    const problem = problemAt(error, 'resources.users.fields.age');
    expect(problem.message).toBe('missing required property "type"');
    expect(problem.line).toBe(5);
  });

  it('a constraint of the wrong JSON type names the constraint', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string, required: "yes", maxLength: 0 }']);
    const error = schemaErrorOf(text);
    expect(problemAt(error, 'resources.users.fields.name.required').message).toBe('must be boolean');
    expect(problemAt(error, 'resources.users.fields.name.maxLength').message).toBe('must be >= 1');
  });

  it('a missing resources property', () => {
    const error = schemaErrorOf('versions: [v1]\n');
    expect(problemAt(error, '').message).toBe('missing required property "resources"');
  });

  it('an empty file is an error at the root', () => {
    const error = schemaErrorOf('');
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.path).toBe('');
  });

  it('a bad resource name names that resource and its own line', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string }', '  Posts:', '    fields:', '      title: { type: string }']);
    const error = schemaErrorOf(text);
    // One problem, at the offending key: not at `resources` and the line of its first key.
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, 'resources.Posts');
    expect(problem.message).toContain('"Posts"');
    expect(problem.line).toBe(lineOf(text, 'Posts:'));
  });

  it('a bad field name names that field and its own line', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      name: { type: string }', '      first-name: { type: string }']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, 'resources.users.fields.first-name');
    expect(problem.message).toContain('"first-name"');
    expect(problem.line).toBe(5);
  });

  it('a bad field name states the naming rule and suggests the camelCase name', () => {
    const text = yaml(['resources:', '  users:', '    fields:', '      first_name: { type: string }', '      USER-ID: { type: string }', '      2fa: { type: string }']);
    const error = schemaErrorOf(text);
    const rule = 'a field name starts with a letter and has only letters and digits (camelCase for several words: no "_", "-" or spaces), at most 63 characters';
    expect(problemAt(error, 'resources.users.fields.first_name').message).toBe(`invalid name "first_name": ${rule}; use "firstName"`);
    expect(problemAt(error, 'resources.users.fields.USER-ID').message).toBe(`invalid name "USER-ID": ${rule}; use "userId"`);
    // No letter to start with: the rule, without a guess.
    expect(problemAt(error, 'resources.users.fields.2fa').message).toBe(`invalid name "2fa": ${rule}`);
    expect(error.message).toContain('bad.yaml:4:7 at resources.users.fields.first_name: invalid name "first_name"');
  });

  it('a bad resource, relation or singular name states its rule and suggests a valid name', () => {
    const text = yaml([
      'resources:',
      '  order_lines:',
      '    singular: order_line',
      '    fields:',
      '      userId: { type: integer, references: users }',
      '    relations:',
      '      the-user: { belongsTo: users, foreignKey: userId }',
      '  users:',
      '    fields:',
      '      name: { type: string }',
      '      nickName: { type: string, renamedFrom: nick_name, renamedIn: v2 }',
    ]);
    const error = schemaErrorOf(text);
    const resourceRule = 'starts with a lowercase letter and has only letters and digits (camelCase for several words: no "_", "-" or spaces), at most 63 characters';
    expect(problemAt(error, 'resources.order_lines').message).toBe(`invalid name "order_lines": a resource name ${resourceRule}; use "orderLines"`);
    expect(problemAt(error, 'resources.order_lines.singular').message).toBe(`invalid name "order_line": a singular name ${resourceRule}; use "orderLine"`);
    expect(problemAt(error, 'resources.order_lines.relations.the-user').message).toBe(
      'invalid name "the-user": a relation name starts with a letter and has only letters and digits (camelCase for several words: no "_", "-" or spaces), at most 63 characters; use "theUser"',
    );
    expect(problemAt(error, 'resources.users.fields.nickName.renamedFrom').message).toBe(
      'invalid name "nick_name": a field name starts with a letter and has only letters and digits (camelCase for several words: no "_", "-" or spaces), at most 63 characters; use "nickName"',
    );
  });

  it('a bad version name names versions.<index> and its line', () => {
    const text = yaml(['versions: [v1, version2]', 'resources:', '  users:', '    fields:', '      name: { type: string }']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, 'versions.1');
    expect(problem.message).toBe('must match ^v[1-9][0-9]*$');
    expect(problem).toMatchObject({ line: 1, column: 16 });
  });

  it('v0 is not a version', () => {
    const error = schemaErrorOf(yaml(['versions: [v0]', 'resources:', '  users: {}']));
    expect(problemAt(error, 'versions.0').line).toBe(1);
  });

  it('a relation declaring neither hasMany nor belongsTo is explained', () => {
    const text = yaml(['resources:', '  users:', '    relations:', '      posts: { foreignKey: userId }', '  posts:', '    fields:', '      userId: { type: integer, references: users }']);
    const error = schemaErrorOf(text);
    expect(error.problems.length).toBeGreaterThan(0);
    for (const problem of error.problems) {
      expect(problem.path).toBe('resources.users.relations.posts');
      expect(problem.line).toBe(4);
    }
    expect(error.message).toMatch(/hasMany/);
    expect(error.message).toMatch(/belongsTo/);
  });

  it('a relation declaring both hasMany and belongsTo is explained (not an empty problem list)', () => {
    const text = yaml([
      'resources:',
      '  users:',
      '    relations:',
      '      posts: { hasMany: posts, belongsTo: posts, foreignKey: userId }',
      '  posts:',
      '    fields:',
      '      userId: { type: integer, references: users }',
    ]);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, 'resources.users.relations.posts');
    expect(problem.line).toBe(4);
    expect(problem.message).toMatch(/hasMany/);
    expect(problem.message).toMatch(/belongsTo/);
  });

  it('lists every violation at once, in document order', () => {
    const text = yaml(['versions: [v0]', 'resources:', '  users:', '    colour: red', '    fields:', '      name: { type: text }', '      age: { required: true }']);
    const error = schemaErrorOf(text);
    expect(error.problems.map((p) => p.line)).toEqual([1, 4, 6, 7]);
    expect(error.problems.map((p) => p.path)).toEqual([
      'versions.0',
      expect.stringMatching(/^resources\.users(\.colour)?$/) as unknown,
      'resources.users.fields.name.type',
      'resources.users.fields.age',
    ]);
    for (const problem of error.problems) expect(error.message).toContain(`at ${problem.path}: ${problem.message}`);
  });
});

describe('semantic errors', () => {
  it('reserved resource names (graphql, docs, v2) are refused, each on its line', () => {
    const text = yaml(['resources:', '  graphql: { singular: graphq }', '  docs: { singular: doc }', '  v2: { singular: vtwo }', '  users: {}']);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(3);
    for (const [name, line] of [['graphql', 2], ['docs', 3], ['v2', 4]] as const) {
      const problem = problemAt(error, `resources.${name}`);
      expect(problem.message).toBe(`"${name}" is reserved by restgraph; choose another resource name`);
      expect(problem.line).toBe(line);
    }
  });

  it('a problem with a block-style resource name is reported on the line of the name', () => {
    const text = yaml(['resources:', '  users: {}', '  graphql:', '    description: not allowed', '    singular: gql']);
    const problem = problemAt(schemaErrorOf(text), 'resources.graphql');
    expect(problem.message).toContain('reserved');
    expect(problem.line).toBe(lineOf(text, 'graphql:'));
  });

  for (const name of ['healthz', 'readyz', 'metrics', 'openapi', 'webhooks', 'admin', 'auth', 'v1', 'v10']) {
    it(`"${name}" is a reserved resource name`, () => {
      const error = schemaErrorOf(yaml(['resources:', `  ${name}:`, '    singular: thing']));
      expect(problemAt(error, `resources.${name}`).message).toContain('reserved');
    });
  }

  it('system field names (id, createdAt, updatedAt) cannot be declared', () => {
    const text = yaml([
      'resources:',
      '  users:',
      '    fields:',
      '      id: { type: integer }',
      '      createdAt: { type: datetime }',
      '      updatedAt: { type: datetime }',
      '      name: { type: string }',
    ]);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(3);
    for (const [field, line] of [['id', 4], ['createdAt', 5], ['updatedAt', 6]] as const) {
      const problem = problemAt(error, `resources.users.fields.${field}`);
      expect(problem.message).toBe(`"${field}" is a system field every resource already has`);
      expect(problem.line).toBe(line);
    }
  });

  it('reserved query parameter names cannot be field names', () => {
    const reserved = ['sort', 'limit', 'after', 'offset', 'count', 'fields', 'include'];
    const text = yaml(['resources:', '  users:', '    fields:', ...reserved.map((name) => `      ${name}: { type: string }`)]);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(reserved.length);
    reserved.forEach((name, index) => {
      const problem = problemAt(error, `resources.users.fields.${name}`);
      expect(problem.message).toBe(`"${name}" is a reserved query parameter; choose another field name`);
      expect(problem.line).toBe(4 + index);
    });
  });

  it('references to an unknown resource, from a field and from a relation', () => {
    const text = yaml([
      'resources:',
      '  posts:',
      '    fields:',
      '      userId: { type: integer, references: users }',
      '    relations:',
      '      author: { belongsTo: people, foreignKey: userId }',
    ]);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(2);
    expect(problemAt(error, 'resources.posts.fields.userId.references')).toMatchObject({ message: 'unknown resource "users"', line: 4 });
    expect(problemAt(error, 'resources.posts.relations.author.belongsTo')).toMatchObject({ message: 'unknown resource "people"', line: 6 });
  });

  it('a hasMany to an unknown resource', () => {
    const error = schemaErrorOf(yaml(['resources:', '  users:', '    relations:', '      posts: { hasMany: posts, foreignKey: userId }']));
    expect(problemAt(error, 'resources.users.relations.posts.hasMany')).toMatchObject({ message: 'unknown resource "posts"', line: 4 });
  });

  it('relations with a wrong foreignKey: missing field, wrong type, or referencing another resource', () => {
    const text = yaml([
      'resources:',
      '  users:',
      '    fields:',
      '      name: { type: string }',
      '    relations:',
      '      posts: { hasMany: posts, foreignKey: authorId }',
      '      drafts: { hasMany: posts, foreignKey: teamId }',
      '  teams: {}',
      '  posts:',
      '    fields:',
      '      userId: { type: integer, references: users }',
      '      teamId: { type: integer, references: teams }',
      '      ownerId: { type: string }',
      '    relations:',
      '      owner: { belongsTo: users, foreignKey: ownerId }',
    ]);
    const error = schemaErrorOf(text);
    expect(error.problems).toHaveLength(3);
    expect(problemAt(error, 'resources.users.relations.posts.foreignKey')).toMatchObject({ message: 'posts has no field "authorId"', line: 6 });
    expect(problemAt(error, 'resources.users.relations.drafts.foreignKey')).toMatchObject({
      message: 'posts.teamId must be an integer field with references: users',
      line: 7,
    });
    expect(problemAt(error, 'resources.posts.relations.owner.foreignKey')).toMatchObject({
      message: 'posts.ownerId must be an integer field with references: users',
      line: 15,
    });
  });

  it('a relation cannot share its name with a field', () => {
    const text = yaml([
      'resources:',
      '  users:',
      '    fields:',
      '      posts: { type: string }',
      '    relations:',
      '      posts: { hasMany: posts, foreignKey: userId }',
      '  posts:',
      '    fields:',
      '      userId: { type: integer, references: users }',
    ]);
    expect(problemAt(schemaErrorOf(text), 'resources.users.relations.posts')).toMatchObject({ message: '"posts" is already a field of users', line: 6 });
  });

  it('field constraints: min > max, minLength > maxLength, invalid regex, bad default, enum without values, onDelete without references', () => {
    const text = yaml([
      'resources:',
      '  items:',
      '    fields:',
      '      n: { type: integer, min: 5, max: 1 }',
      '      l: { type: string, minLength: 9, maxLength: 3 }',
      '      s: { type: string, pattern: "([a-z" }',
      '      d: { type: integer, default: "x" }',
      '      e: { type: enum }',
      '      r: { type: integer, onDelete: cascade }',
    ]);
    const error = schemaErrorOf(text, 'items.yaml');
    expect(error.problems).toHaveLength(6);
    expect(problemAt(error, 'resources.items.fields.n.min')).toMatchObject({ message: 'min is greater than max', line: 4 });
    expect(problemAt(error, 'resources.items.fields.l.minLength')).toMatchObject({ message: 'minLength is greater than maxLength', line: 5 });
    const pattern = problemAt(error, 'resources.items.fields.s.pattern');
    expect(pattern.message).toMatch(/^not a valid regular expression: /);
    expect(pattern.line).toBe(6);
    const fallback = problemAt(error, 'resources.items.fields.d.default');
    expect(fallback.message).toMatch(/^default "x" does not fit the field/);
    expect(fallback.line).toBe(7);
    expect(problemAt(error, 'resources.items.fields.e')).toMatchObject({ message: 'an enum field needs "values"', line: 8 });
    expect(problemAt(error, 'resources.items.fields.r.onDelete')).toMatchObject({ message: 'onDelete needs references', line: 9 });
    for (const problem of error.problems) {
      expect(error.message).toContain(`items.yaml:${problem.line ?? 0}:${problem.column ?? 0} at ${problem.path}: ${problem.message}`);
    }
  });

  it('defaults must fit their field: enum value, maxLength, format, min', () => {
    const text = yaml([
      'resources:',
      '  items:',
      '    fields:',
      '      status: { type: enum, values: [a, b], default: c }',
      '      code: { type: string, maxLength: 2, default: abc }',
      '      qty: { type: integer, min: 1, default: 0 }',
      '      flag: { type: boolean, default: "yes" }',
      '      ok: { type: string, default: fine }',
    ]);
    const error = schemaErrorOf(text);
    expect(error.problems.map((p) => p.path)).toEqual([
      'resources.items.fields.status.default',
      'resources.items.fields.code.default',
      'resources.items.fields.qty.default',
      'resources.items.fields.flag.default',
    ]);
  });

  it('constraints that do not apply to the field type are refused', () => {
    const text = yaml(['resources:', '  items:', '    fields:', '      name: { type: string, min: 1 }', '      n: { type: integer, maxLength: 3 }', '      b: { type: boolean, values: [x] }']);
    const error = schemaErrorOf(text);
    expect(problemAt(error, 'resources.items.fields.name.min').message).toBe('"min" applies to integer and number fields, not string');
    expect(problemAt(error, 'resources.items.fields.n.maxLength').message).toBe('"maxLength" applies to string fields, not integer');
    expect(problemAt(error, 'resources.items.fields.b.values').message).toBe('"values" applies to enum fields, not boolean');
  });

  it('setNull on a required reference is refused', () => {
    const text = yaml(['resources:', '  users: {}', '  posts:', '    fields:', '      userId: { type: integer, required: true, references: users, onDelete: setNull }']);
    expect(problemAt(schemaErrorOf(text), 'resources.posts.fields.userId.onDelete')).toMatchObject({ message: 'setNull is impossible on a required field', line: 5 });
  });

  it('two resources with the same singular are refused', () => {
    const text = yaml(['resources:', '  people:', '    singular: person', '  persons: {}']);
    expect(problemAt(schemaErrorOf(text), 'resources.persons').message).toBe('singular name "person" is also used by resource "people"');
  });

  it('a name without a plural form needs singular', () => {
    const error = schemaErrorOf(yaml(['resources:', '  sheep: {}']));
    expect(problemAt(error, 'resources.sheep').message).toContain('set "singular"');
    expect(() => parseSchemaText(yaml(['resources:', '  sheep:', '    singular: aSheep']))).not.toThrow();
  });

  it('lists every semantic problem across resources at once', () => {
    const text = yaml([
      'resources:',
      '  graphql:',
      '    singular: gql',
      '  users:',
      '    fields:',
      '      id: { type: integer }',
      '      sort: { type: string }',
      '      n: { type: number, min: 2, max: 1 }',
      '  posts:',
      '    fields:',
      '      userId: { type: integer, references: people }',
    ]);
    const error = schemaErrorOf(text, '/srv/app/schema.yaml');
    expect(error.problems.map((p) => p.path)).toEqual([
      'resources.graphql',
      'resources.users.fields.id',
      'resources.users.fields.sort',
      'resources.users.fields.n.min',
      'resources.posts.fields.userId.references',
    ]);
    expect(error.file).toBe('/srv/app/schema.yaml');
    expect(error.code).toBe('RG_SCHEMA_INVALID');
    expect(error.message.split('\n')[0]).toBe('Invalid schema /srv/app/schema.yaml:');
    expect(error.message).toContain('/srv/app/schema.yaml:7:');
    expect(error.message).toContain('at resources.users.fields.sort: "sort" is a reserved query parameter; choose another field name');
    expect(error.message.split('\n')).toHaveLength(1 + 5);
  });

  it('the message names the default source when no file is given', () => {
    const error = (() => {
      try {
        parseSchemaText(yaml(['resources:', '  docs: { singular: doc }']));
      } catch (e) {
        return e as SchemaError;
      }
      throw new Error('expected a SchemaError');
    })();
    expect(error.message).toContain('<schema>:2:');
    expect(error.message).toContain('at resources.docs: "docs" is reserved by restgraph');
  });
});
