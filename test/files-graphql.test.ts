import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { form, png, storedFiles, type Part } from './helpers/files.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';

/**
 * GraphQL uploads (docs/files.md#graphql): the GraphQL multipart request specification on
 * POST /graphql, hand-built bodies as Apollo Client's and urql's upload links send them; files
 * streamed through the upload pipeline before the mutation, written with the row in its
 * transaction, removed when it fails; checked on the storage directory, on the suite's database.
 */

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string, required: true, maxLength: 20 }
      avatar: { type: file, maxSize: 64KB, accept: [image/png] }
      attachments: { type: file, multiple: true, maxFiles: 2, maxSize: 1MB }
  vaults:
    access: { read: authenticated, write: [vaults:write] }
    fields:
      label: { type: string }
      doc: { type: file }
`;

type User = { id: string; name: string; avatar: FileValue | null; attachments: FileValue[] | null };
type GraphqlAnswer<T> = { data?: Record<string, T | null> | null; errors?: { message: string; extensions: { code: string; status: number } }[] };

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const PREFLIGHT = { 'graphql-require-preflight': '1' };
const SELECTION = '{ id name avatar attachments }';
const CREATE = `mutation ($input: UserCreateInput!) { createUser(input: $input) ${SELECTION} }`;
const UPDATE = `mutation ($id: ID!, $input: UserUpdateInput!) { updateUser(id: $id, input: $input) ${SELECTION} }`;

describe('GraphQL uploads', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const stored = (): string[] => storedFiles(dir.path);
  /** A multipart request in the specification's form: operations, map, then the file parts. */
  const upload = (operations: unknown, map: Record<string, unknown>, files: Part[], headers: Record<string, string> = PREFLIGHT) => {
    const body = form([{ name: 'operations', value: JSON.stringify(operations) }, { name: 'map', value: JSON.stringify(map) }, ...files]);
    return t.app.inject({ method: 'POST', url: '/graphql', payload: body.payload, headers: { ...body.headers, ...headers } });
  };
  const userCount = async (): Promise<number> => json<unknown[]>(await t.app.inject({ url: '/users?limit=1000' })).length;

  beforeAll(async () => {
    dir = tempDir('restgraph-graphql-files-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path }, jwt: { secret: RULES_JWT_SECRET } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('creates a row with a file and a list of files; they download byte-identical over REST', async () => {
    const avatar = png(10_000);
    const doc = randomBytes(50_000);
    const response = await upload(
      { query: CREATE, variables: { input: { name: 'ann', avatar: null, attachments: [null, null] } } },
      { 0: ['variables.input.avatar'], 1: ['variables.input.attachments.0'], 2: ['variables.input.attachments.1'] },
      [
        { name: '0', file: avatar, filename: '../me.png', type: 'image/png' },
        { name: '1', file: doc, filename: 'a.bin' },
        { name: '2', file: 'hello', filename: 'b.txt', type: 'text/plain' },
      ],
    );
    expect(response.statusCode, response.body).toBe(200);
    const answer = json<GraphqlAnswer<User>>(response);
    expect(answer.errors).toBeUndefined();
    const user = answer.data?.createUser as User;
    expect(user.avatar).toMatchObject({ name: 'me.png', type: 'image/png', size: avatar.length, url: `/users/${user.id}/avatar` });
    expect(user.attachments?.map((f) => [f.name, f.type, f.size])).toEqual([['a.bin', 'application/octet-stream', doc.length], ['b.txt', 'text/plain', 5]]);
    const [a] = user.attachments as [FileValue, FileValue];
    expect(a.url).toBe(`/users/${user.id}/attachments/${keyOf(a) ?? ''}`);
    expect(sha256((await t.app.inject({ url: user.avatar?.url ?? '' })).rawPayload)).toBe(sha256(avatar));
    expect(sha256((await t.app.inject({ url: a.url })).rawPayload)).toBe(sha256(doc));
    // The row as REST reads it holds the same values.
    expect(json<User>(await t.app.inject({ url: `/users/${user.id}` }))).toMatchObject({ avatar: user.avatar, attachments: user.attachments });
  });

  it('replaces a file in an update (the old one deleted from storage), replaces a list, and clears with null', async () => {
    const created = json<GraphqlAnswer<User>>(
      await upload({ query: CREATE, variables: { input: { name: 'bob', avatar: null } } }, { a: ['variables.input.avatar'] }, [{ name: 'a', file: png(100), filename: 'a.png' }]),
    ).data?.createUser as User;
    const first = keyOf(created.avatar) ?? '';
    expect(stored()).toContain(first);
    // The file as an Upload variable of its own, used in an input written in the query.
    const replaced = await upload(
      { query: `mutation ($file: Upload, $id: ID!) { updateUser(id: $id, input: { avatar: $file }) ${SELECTION} }`, variables: { id: created.id, file: null } },
      { b: ['variables.file'] },
      [{ name: 'b', file: png(200), filename: 'b.png' }],
    );
    expect(replaced.statusCode, replaced.body).toBe(200);
    const patched = json<GraphqlAnswer<User>>(replaced).data?.updateUser as User;
    expect(patched.avatar).toMatchObject({ name: 'b.png', size: png(200).length, url: `/users/${created.id}/avatar` });
    await expect.poll(() => stored().includes(first)).toBe(false);
    expect(stored()).toContain(keyOf(patched.avatar));

    const listed = json<GraphqlAnswer<User>>(
      await upload({ query: UPDATE, variables: { id: created.id, input: { attachments: [null] } } }, { c: ['variables.input.attachments.0'] }, [{ name: 'c', file: 'one', filename: 'one.txt' }]),
    ).data?.updateUser as User;
    expect(listed.attachments?.map((f) => f.name)).toEqual(['one.txt']);
    const again = json<GraphqlAnswer<User>>(
      await upload({ query: UPDATE, variables: { id: created.id, input: { attachments: [null, null] } } }, { d: ['variables.input.attachments.0'], e: ['variables.input.attachments.1'] }, [
        { name: 'd', file: 'two', filename: 'two.txt' },
        { name: 'e', file: 'three', filename: 'three.txt' },
      ]),
    ).data?.updateUser as User;
    expect(again.attachments?.map((f) => f.name)).toEqual(['two.txt', 'three.txt']);
    await expect.poll(() => stored().includes(keyOf(listed.attachments?.[0]) ?? '')).toBe(false);

    // null clears, over plain JSON as over multipart; the files go after the commit.
    const cleared = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: UPDATE, variables: { id: created.id, input: { avatar: null, attachments: null } } } });
    expect(json<GraphqlAnswer<User>>(cleared).data?.updateUser).toMatchObject({ avatar: null, attachments: null });
    for (const file of [patched.avatar, ...(again.attachments ?? [])]) await expect.poll(() => stored().includes(keyOf(file) ?? '')).toBe(false);
  });

  it('refuses a file too large (413) or of the wrong type (415) with an extensions code, storing nothing and writing no row', async () => {
    const before = stored();
    const rows = await userCount();
    const cases: [Part[], number, string][] = [
      [[{ name: '0', file: 'ok', filename: 'ok.txt' }, { name: '1', file: png(70_000), filename: 'big.png' }], 413, 'payload-too-large'],
      [[{ name: '0', file: 'ok', filename: 'ok.txt' }, { name: '1', file: '<html></html>', filename: 'x.png', type: 'image/png' }], 415, 'unsupported-media-type'],
    ];
    for (const [files, status, code] of cases) {
      const response = await upload({ query: CREATE, variables: { input: { name: 'cy', avatar: null, attachments: [null] } } }, { 0: ['variables.input.attachments.0'], 1: ['variables.input.avatar'] }, files);
      expect(response.statusCode, response.body).toBe(status);
      expect(json<GraphqlAnswer<User>>(response).errors?.[0]?.extensions).toMatchObject({ code, status });
    }
    // A mutation that fails after the files are stored (validation): they are removed.
    const invalid = await upload({ query: CREATE, variables: { input: { name: 'x'.repeat(30), avatar: null } } }, { 0: ['variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }]);
    expect(invalid.statusCode).toBe(200);
    expect(json<GraphqlAnswer<User>>(invalid).errors?.[0]?.extensions.code).toBe('validation-failed');
    await expect.poll(() => stored()).toEqual(before);
    expect(await userCount()).toBe(rows);
  });

  it('answers 400 to an unmapped file, a missing file, a path that is no Upload, batches and a bare Upload value', async () => {
    const before = stored();
    const input = { query: CREATE, variables: { input: { name: 'dan', avatar: null } } };
    const refusals: [string, Promise<{ statusCode: number; body: string }>, RegExp][] = [
      ['unmapped file', upload(input, { 0: ['variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }, { name: 'extra', file: 'x', filename: 'x.txt' }]), /not in the map/],
      ['missing file', upload(input, { 0: ['variables.input.avatar'] }, []), /does not hold/],
      ['non-upload path', upload(input, { 0: ['variables.input.name'] }, [{ name: '0', file: 'x', filename: 'x.txt' }]), /not Upload/],
      ['unknown variable', upload(input, { 0: ['variables.nothing'] }, [{ name: '0', file: 'x', filename: 'x.txt' }]), /names no variable/],
      ['no variables prefix', upload(input, { 0: ['input.avatar'] }, [{ name: '0', file: 'x', filename: 'x.txt' }]), /does not start with/],
      ['two paths', upload(input, { 0: ['variables.input.avatar', 'variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }]), /exactly one path/],
      ['batch', upload([input, input], { 0: ['0.variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }]), /Batched operations/],
      ['map first', t.app.inject({ method: 'POST', url: '/graphql', ...withHeaders(form([{ name: 'map', value: '{}' }, { name: 'operations', value: JSON.stringify(input) }])) }), /starts with the parts operations/],
    ];
    for (const [what, pending, message] of refusals) {
      const response = await pending;
      expect(response.statusCode, `${what}: ${response.body}`).toBe(400);
      expect(json<GraphqlAnswer<User>>(response).errors?.[0]?.message, what).toMatch(message);
    }
    // An Upload variable given as JSON is no file.
    const bare = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: CREATE, variables: { input: { name: 'x', avatar: { name: 'a.png' } } } } });
    expect(json<GraphqlAnswer<User>>(bare).errors?.[0]?.message).toMatch(/Upload is a file part/);
    // Too many files for a multiple field: refused before any is stored (422).
    const many = await upload({ query: CREATE, variables: { input: { name: 'x', attachments: [null, null, null] } } }, { 0: ['variables.input.attachments.0'], 1: ['variables.input.attachments.1'], 2: ['variables.input.attachments.2'] }, [
      { name: '0', file: 'a', filename: 'a.txt' },
      { name: '1', file: 'b', filename: 'b.txt' },
      { name: '2', file: 'c', filename: 'c.txt' },
    ]);
    expect(many.statusCode, many.body).toBe(422);
    await expect.poll(() => stored()).toEqual(before);
  });

  it('requires a header a cross-site form cannot send (CSRF), and keeps plain JSON requests as they were', async () => {
    const input = { query: CREATE, variables: { input: { name: 'eve', avatar: null } } };
    const bare = await upload(input, { 0: ['variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }], { authorization: '' });
    expect(bare.statusCode).toBe(400);
    expect(json<GraphqlAnswer<User>>(bare).errors?.[0]?.message).toMatch(/CSRF/);
    // Anonymous with a preflight header: past the CSRF check, refused by the access rules instead.
    for (const headers of [{ 'apollo-require-preflight': 'true' }, { 'graphql-require-preflight': '1' }, { 'x-apollo-operation-name': 'CreateUser' }] as Record<string, string>[]) {
      const response = await upload(input, { 0: ['variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }], { authorization: '', ...headers });
      expect(response.statusCode, JSON.stringify(headers)).toBe(401);
    }
    // A credential in Authorization is itself a header no cross-site form sends.
    const response = await upload(input, { 0: ['variables.input.avatar'] }, [{ name: '0', file: png(10), filename: 'a.png' }], {});
    expect(json<GraphqlAnswer<User>>(response).data?.createUser).toMatchObject({ name: 'eve' });
    const plain = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users(limit: 1) { id } }' } });
    expect(plain.statusCode).toBe(200);
  });

  it('refuses a principal without write access before storing a byte: 401, 403, and 404 for a row it cannot see', async () => {
    const before = stored();
    const query = 'mutation ($input: VaultCreateInput!) { createVault(input: $input) { id doc } }';
    const variables = { input: { label: 'v', doc: null } };
    const file: Part[] = [{ name: '0', file: randomBytes(1000), filename: 'doc.bin' }];
    const anonymous = await upload({ query, variables }, { 0: ['variables.input.doc'] }, file, { ...PREFLIGHT, authorization: '' });
    expect(anonymous.statusCode, anonymous.body).toBe(401);
    const reader = await upload({ query, variables }, { 0: ['variables.input.doc'] }, file, { authorization: await bearerJwt({ sub: 'r' }) });
    expect(reader.statusCode, reader.body).toBe(403);
    const missing = await upload({ query: 'mutation ($input: VaultUpdateInput!) { updateVault(id: "999999", input: $input) { id } }', variables }, { 0: ['variables.input.doc'] }, file, { authorization: await bearerJwt({ sub: 'w', scope: 'vaults:write' }) });
    expect(missing.statusCode, missing.body).toBe(404);
    expect(stored()).toEqual(before);
    const writer = await upload({ query, variables }, { 0: ['variables.input.doc'] }, file, { authorization: await bearerJwt({ sub: 'w', scope: 'vaults:write' }) });
    expect(json<GraphqlAnswer<{ doc: FileValue }>>(writer).data?.createVault?.doc).toMatchObject({ name: 'doc.bin', size: 1000 });
  });
});

function withHeaders(body: { payload: Buffer; headers: Record<string, string> }): { payload: Buffer; headers: Record<string, string> } {
  return { payload: body.payload, headers: { ...body.headers, ...PREFLIGHT } };
}
