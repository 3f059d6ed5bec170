import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** One GraphQL error as restgraph formats it: always with `extensions.code` and `extensions.status`. */
export interface GraphqlErrorBody {
  message: string;
  path?: (string | number)[];
  locations?: { line: number; column: number }[];
  extensions: {
    code: string;
    status: number;
    errors?: { pointer?: string; parameter?: string; detail: string }[];
    [key: string]: unknown;
  };
}

/** A GraphQL response body (GraphQL over HTTP, application/json). */
export interface GraphqlBody<D = Record<string, unknown>> {
  data?: D | null;
  errors?: GraphqlErrorBody[];
}

export interface GraphqlReply<D = Record<string, unknown>> {
  response: LightMyRequestResponse;
  status: number;
  body: GraphqlBody<D>;
}

export interface GraphqlRequestOptions {
  variables?: Record<string, unknown>;
  /** Request headers; `authorization: ''` sends none (see startTestApp). */
  headers?: Record<string, string>;
}

/**
 * POSTs a GraphQL request to /graphql (application/json both ways) and parses the body. The type
 * argument states the shape of `data` the test expects.
 */
export async function graphql<D = Record<string, unknown>>(app: FastifyInstance, query: string, options: GraphqlRequestOptions = {}): Promise<GraphqlReply<D>> {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
    payload: JSON.stringify(options.variables === undefined ? { query } : { query, variables: options.variables }),
  });
  expect(response.headers['content-type'], response.body).toBe('application/json; charset=utf-8');
  return { response, status: response.statusCode, body: JSON.parse(response.body) as GraphqlBody<D> };
}

/** A response that succeeded: HTTP 200, no errors; returns its data. */
export function dataOf<D>(reply: GraphqlReply<D>): D {
  expect({ status: reply.status, errors: reply.body.errors }, reply.response.body).toEqual({ status: 200, errors: undefined });
  const data = reply.body.data;
  if (data === undefined || data === null) throw new Error(`no data in ${reply.response.body}`);
  return data;
}

/**
 * A response with exactly one error, of this code (and the status restgraph gives that code), at
 * this path when one is given; returns the error.
 */
export function onlyError(reply: GraphqlReply<unknown>, code: string, path?: (string | number)[]): GraphqlErrorBody {
  const errors = reply.body.errors ?? [];
  expect(errors.map((e) => e.extensions.code), reply.response.body).toEqual([code]);
  const error = errors[0];
  if (error === undefined) throw new Error('no error');
  expect(error.extensions.status).toBe(STATUS_OF_CODE[code]);
  expect(typeof error.message).toBe('string');
  if (path !== undefined) expect(error.path).toEqual(path);
  return error;
}

/** The HTTP status restgraph associates with each error code (extensions.status). */
export const STATUS_OF_CODE: Record<string, number> = {
  'authentication-required': 401,
  'invalid-token': 401,
  forbidden: 403,
  'not-found': 404,
  'invalid-query': 400,
  'validation-failed': 422,
  'unique-conflict': 409,
  'reference-conflict': 409,
  'graphql-validation': 400,
  'graphql-syntax': 400,
  'bad-request': 400,
  'query-too-complex': 400,
};
