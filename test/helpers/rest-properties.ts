import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { json, startTestApp, type TestApp } from './test-app.js';

/**
 * What the property-based tests of the REST API (rest-properties-*.test.ts) share: the example
 * schema's fields, the seeded app they send random requests to, and the checks of a problem answer.
 */

export type Row = Record<string, unknown>;

export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'isNull'];
export const SYSTEM_FIELDS = { id: 'integer', createdAt: 'datetime', updatedAt: 'datetime' };
/** Field types of the example schema, for well-typed filter values. */
export const FIELD_TYPES: Record<string, Record<string, string>> = {
  users: { ...SYSTEM_FIELDS, name: 'string', email: 'string', bio: 'string' },
  posts: { ...SYSTEM_FIELDS, title: 'string', body: 'string', userId: 'integer', published: 'boolean', publishedAt: 'datetime', tags: 'json' },
  products: { ...SYSTEM_FIELDS, name: 'string', sku: 'string', price: 'number', currency: 'currency', stock: 'integer', active: 'boolean' },
  orders: { ...SYSTEM_FIELDS, userId: 'integer', productId: 'integer', quantity: 'integer', status: 'status', placedOn: 'date', note: 'string' },
};
export const RELATIONS: Record<string, string[]> = { users: ['posts', 'orders'], posts: ['user'], products: ['orders'], orders: ['user', 'product'] };

export function describeResponse(response: LightMyRequestResponse): string {
  return `${String(response.statusCode)} ${response.body.slice(0, 300)}`;
}

/** A problem+json body of this status. */
export function assertProblem(response: LightMyRequestResponse, status: number): void {
  expect(response.statusCode, describeResponse(response)).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = json<Row>(response);
  expect(body.status).toBe(status);
  expect(String(body.type)).toMatch(/^urn:restgraph:problem:[a-z-]+$/);
  expect(typeof body.detail).toBe('string');
}

/** Percent-encodes, also for strings a URL cannot carry otherwise; never throws. */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '?'));
  }
}

export const anyText = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

export const isoDate = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });
export const iso = isoDate.map((d) => d.toISOString());
export const day = isoDate.map((d) => d.toISOString().slice(0, 10));

export const RESOURCES = ['users', 'posts', 'products', 'orders'];

/** A test app on the example schema, with two rows of each resource (users 1 and 2, and so on). */
export async function startSeededApp(): Promise<TestApp> {
  const t = await startTestApp();
  const seed: [string, Row][] = [
    ['users', { name: 'Alice', email: 'alice@example.com', bio: 'first' }],
    ['users', { name: 'Bob' }],
    ['posts', { title: 'Hello', userId: 1, published: true, publishedAt: '2024-01-01T00:00:00Z', tags: { a: [1, 2] } }],
    ['posts', { title: 'World', userId: 2 }],
    ['products', { name: 'Widget', sku: 'SKU-1', price: 10, stock: 3 }],
    ['products', { name: 'Gadget', sku: 'SKU-2', price: 2.5, currency: 'USD' }],
    ['orders', { userId: 1, productId: 1, quantity: 2, placedOn: '2024-01-02', note: 'n' }],
    ['orders', { userId: 2, productId: 2, quantity: 1 }],
  ];
  for (const [resource, body] of seed) {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
    expect(response.statusCode, response.body).toBe(201);
  }
  return t;
}

/** The default URL limit (RESTGRAPH_MAX_URL_LENGTH). */
export const MAX_URL_BYTES = 8192;
