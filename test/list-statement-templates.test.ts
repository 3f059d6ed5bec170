import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { filterSchema } from './helpers/filter-schema.js';

/**
 * A list's statement is compiled once per shape of its filters and bound with each request's
 * values (src/store/list-templates.ts): requests of one shape with other values, nulls, other
 * lengths of `in` lists and values through relations each get their own rows, on the suite's
 * database.
 */

type Row = Record<string, unknown>;
const q = encodeURIComponent;

describe('lists of one filter shape with other values', () => {
  let t: TestApp;
  const names = async (query: string): Promise<string[]> => {
    const response = await t.app.inject({ method: 'GET', url: `/users?sort=name&${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return json<Row[]>(response).map((r) => r.name as string);
  };
  const post = async (resource: string, body: Row): Promise<Row> => {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
    expect(response.statusCode, response.body).toBe(201);
    return json<Row>(response);
  };

  beforeAll(async () => {
    t = await startTestApp({ schema: filterSchema() });
    const ann = await post('users', { name: 'Ann', age: 30, active: true, born: '1990-01-01', seen: '2024-05-01T10:00:00Z', role: 'admin' });
    await post('users', { name: 'Ben', age: 17, active: false, born: '2000-06-15', role: 'reader' });
    const cy = await post('users', { name: 'Cy', age: 45, role: 'editor', seen: '2025-01-01T00:00:00Z' });
    await post('posts', { title: 'one', views: 10, published: true, authorId: ann.id });
    await post('posts', { title: 'two', views: 500, published: false, authorId: cy.id });
  });
  afterAll(async () => t.close());

  it('each value set of one shape gets its own rows (numbers, booleans, dates, datetimes, enums)', async () => {
    const shape = (age: number, active: boolean): string => `filter=${q(`age >= ${String(age)} or active = ${String(active)}`)}`;
    expect(await names(shape(40, true))).toEqual(['Ann', 'Cy']);
    expect(await names(shape(18, false))).toEqual(['Ann', 'Ben', 'Cy']);
    expect(await names(shape(99, false))).toEqual(['Ben']);
    const dates = (born: string, seen: string): string => `filter=${q(`born < '${born}' or seen >= '${seen}'`)}`;
    expect(await names(dates('1995-01-01', '2030-01-01T00:00:00Z'))).toEqual(['Ann']);
    expect(await names(dates('1980-01-01', '2024-12-31T00:00:00+01:00'))).toEqual(['Cy']);
    expect(await names(`filter=${q("not role = 'admin'")}`)).toEqual(['Ben', 'Cy']);
    expect(await names(`filter=${q("not role = 'reader'")}`)).toEqual(['Ann', 'Cy']);
  });

  it('a null, another length of in, and the same field parameters are shapes of their own', async () => {
    expect(await names(`filter=${q('seen = null')}`)).toEqual(['Ben']);
    expect(await names(`filter=${q("seen = '2024-05-01T10:00:00Z'")}`)).toEqual(['Ann']);
    expect(await names(`filter=${q('age in (17)')}`)).toEqual(['Ben']);
    expect(await names(`filter=${q('age in (17, 45)')}`)).toEqual(['Ben', 'Cy']);
    expect(await names(`filter=${q('age in (30, 45, 99)')}`)).toEqual(['Ann', 'Cy']);
    expect(await names('age[lt]=20')).toEqual(['Ben']);
    expect(await names('age[lt]=40')).toEqual(['Ann', 'Ben']);
  });

  it('values inside relation paths are bound as the related field stores them', async () => {
    expect(await names(`filter=${q('posts.any(views > 100 and published = false)')}`)).toEqual(['Cy']);
    expect(await names(`filter=${q('posts.any(views > 5 and published = true)')}`)).toEqual(['Ann']);
    expect(await names(`filter=${q('posts.none(views > 1)')}`)).toEqual(['Ben']);
  });
});
