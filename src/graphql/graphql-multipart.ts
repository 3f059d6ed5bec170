import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { RequestParams } from 'graphql-http';
import type { Multipart } from '@fastify/multipart';
import { BadRequestError, PayloadTooLargeError } from '../errors.js';
import type { FileStorage } from '../core/file-storage.js';
import { discardUploads, fileFieldsOf, type FileValue } from '../core/file-fields.js';
import type { OperationContext } from '../core/principal.js';
import { checkUploadAccess } from '../core/upload-access.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { RateLimits } from '../core/rate-limits.js';
import type { UploadBudget } from '../core/upload-budget.js';
import { fileLimits } from '../schema/file-field.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { receiveFile } from '../files/file-upload.js';
import { multipartError } from '../http/multipart-bodies.js';
import { dropUnreadBody } from '../http/unread-body.js';
import { parseJsonBody } from '../http/content-negotiation.js';
import { tooManyFiles, UploadedFile } from './upload-inputs.js';
import { uploadTargets, type UploadTarget } from './upload-targets.js';
import { idOf } from './schema-parts.js';

/**
 * The GraphQL multipart request specification on `POST /graphql`
 * (https://github.com/jaydenseric/graphql-multipart-request-spec; docs/files.md#graphql): an
 * `operations` part (the request's JSON, its files as nulls), a `map` part (file part name →
 * the one variable path it goes to), then the file parts. Each file is streamed to storage through
 * the upload pipeline of its field (known from its path before its first byte), then the operation
 * runs with the files in its variables; the files no committed write references are removed.
 */

/** Most files one request may carry, and the largest `map` part (bytes). */
export const GRAPHQL_MAX_UPLOADS = 100;
export const GRAPHQL_MAX_MAP_BYTES = 64 * 1024;

/** Headers a browser sends cross-site only after a CORS preflight: one of them (or Authorization) is required. */
export const PREFLIGHT_HEADERS = ['graphql-require-preflight', 'apollo-require-preflight', 'x-apollo-operation-name'] as const;

/** What multipart requests need: where files go, the writes (for access before storing), and the bounds. */
export interface GraphqlUploads {
  storage: FileStorage;
  operations: ResourceOperations;
  /** Largest `operations` part: the JSON body limit. */
  maxOperationsBytes: number;
  /** The largest maxSize of any file field (a bound for the parser; each field's own is checked). */
  maxFileBytes: number;
  /** The quotas in force: uploaded bytes count against the credential's upload budget. */
  rateLimits: RateLimits | undefined;
}

/** The uploads of a schema with file fields; undefined without any. */
export function graphqlUploads(model: SchemaModel, storage: FileStorage, operations: ResourceOperations, maxOperationsBytes: number, rateLimits: RateLimits | undefined): GraphqlUploads {
  const fields = [...model.resources.values()].flatMap((resource) => fileFieldsOf(resource));
  return { storage, operations, maxOperationsBytes, maxFileBytes: Math.max(1, ...fields.map((f) => fileLimits(f).maxSize + 1)), rateLimits };
}

/** A multipart request read: its parameters (the uploads in the variables), and what to do once it has run. */
export interface GraphqlMultipart {
  params: RequestParams;
  /** Removes the stored files no committed write references. */
  settle: () => Promise<void>;
}

/** The schema and operations a multipart request is checked against. */
export interface MultipartService {
  schema: GraphQLSchema;
  operationOf: (params: RequestParams) => OperationDefinitionNode | undefined;
}

/**
 * Reads a multipart request: its operation checked and each map path resolved to its file field,
 * access checked (401, 403, a row not there: 404) before a byte is stored, then the files streamed
 * to storage. Any failure removes the files stored so far.
 */
export async function readGraphqlMultipart(request: FastifyRequest, reply: FastifyReply, service: MultipartService, uploads: GraphqlUploads, ctx: OperationContext): Promise<GraphqlMultipart> {
  const stored: UploadedFile[] = [];
  const discard = (files: readonly UploadedFile[]): Promise<void> => discardUploads(uploads.storage, files.map((file) => file.value));
  const budget = uploads.rateLimits?.uploadBudget(request.principal, request.ip);
  try {
    requirePreflight(request);
    // A spent upload budget refuses the request before its body is read.
    await budget?.check(undefined);
    const parts = request.parts({
      limits: {
        parts: GRAPHQL_MAX_UPLOADS + 2,
        fields: 2,
        files: GRAPHQL_MAX_UPLOADS,
        fieldSize: Math.max(uploads.maxOperationsBytes, GRAPHQL_MAX_MAP_BYTES),
        fieldNameSize: 200,
        headerPairs: 20,
        fileSize: uploads.maxFileBytes,
      },
    });
    const iterator = parts[Symbol.asyncIterator]();
    const params = operationsOf(textPart(await iterator.next(), 'operations', uploads.maxOperationsBytes));
    const map = mapOf(textPart(await iterator.next(), 'map', GRAPHQL_MAX_MAP_BYTES));
    const operation = map.size === 0 ? undefined : service.operationOf(params);
    // A refused document: the request runs without its files, and says why.
    if (map.size > 0 && operation === undefined) {
      dropUnreadBody(request, reply);
      return { params, settle: () => Promise.resolve() };
    }
    const variables: Record<string, unknown> = params.variables ?? {};
    const targets = operation === undefined ? new Map<string, UploadTarget>() : uploadTargets(service.schema, operation, variables, [...map.values()]);
    const destinations = new Map([...map.values()].map((path) => [path, { target: targets.get(path) as UploadTarget, place: placeOf(variables, path) }]));
    await checkTargets(uploads.operations, ctx, targets);
    await receiveFiles(iterator, map, destinations, { storage: uploads.storage, budget }, stored);
    dropUnreadBody(request, reply);
    return { params: { ...params, variables }, settle: () => discard(stored.filter((file) => !file.kept)) };
  } catch (error) {
    await discard(stored);
    dropUnreadBody(request, reply);
    throw multipartError(error, `The multipart request has too many parts: at most ${GRAPHQL_MAX_UPLOADS} files beside operations and map.`);
  }
}

/**
 * The file parts, after operations and map: each streamed to storage through the upload pipeline
 * of its path's field and put in the variables where its path says, as an {@link UploadedFile}
 * (added to `stored` at once, so a failure later removes it). Each key of map must come once.
 */
async function receiveFiles(
  parts: AsyncIterator<Multipart>,
  map: ReadonlyMap<string, string>,
  destinations: ReadonlyMap<string, Destination>,
  into: { storage: FileStorage; budget: UploadBudget | undefined },
  stored: UploadedFile[],
): Promise<void> {
  const received = new Set<string>();
  for (let next = await parts.next(); next.done !== true; next = await parts.next()) {
    const part = next.value;
    const path = map.get(part.fieldname);
    if (part.type !== 'file') throw new BadRequestError(`The part ${part.fieldname.slice(0, 100)} is a field; after operations and map come only files.`);
    if (path === undefined) throw new BadRequestError(`The file part ${part.fieldname.slice(0, 100)} is not in the map: each file part is named by a key of map.`);
    if (received.has(part.fieldname)) throw new BadRequestError(`The file part ${part.fieldname.slice(0, 100)} is given twice.`);
    received.add(part.fieldname);
    const { target, place } = destinations.get(path) as Destination;
    const value: FileValue = await receiveFile(into.storage, target.field, { body: part.file, name: part.filename, claimedType: part.mimetype, declaredLength: undefined, urlOf: (key) => key, budget: into.budget });
    const file = new UploadedFile(value);
    stored.push(file);
    place.container[place.key] = file;
  }
  const missing = [...map.keys()].find((name) => !received.has(name));
  if (missing !== undefined) throw new BadRequestError(`The map names the file part ${missing.slice(0, 100)}, which the request does not hold.`);
}

/**
 * A multipart/form-data POST is a "simple" request: a page on any site can make a browser send
 * one, without a CORS preflight. One of these headers (or Authorization) cannot be sent so.
 */
function requirePreflight(request: FastifyRequest): void {
  if (request.headers.authorization !== undefined) return;
  if (PREFLIGHT_HEADERS.some((name) => typeof request.headers[name] === 'string' && request.headers[name] !== '')) return;
  throw new BadRequestError(
    `A multipart request to /graphql needs an Authorization header or a non-empty ${PREFLIGHT_HEADERS.join(', ')} header, which a cross-site form cannot send (CSRF protection).`,
  );
}

type Next = IteratorResult<Multipart>;

function textPart(next: Next, name: string, maxBytes: number): string {
  const part = next.done === true ? undefined : next.value;
  if (part?.type !== 'field' || part.fieldname !== name) {
    throw new BadRequestError(`A GraphQL multipart request starts with the parts operations, then map, then the files; ${name} is not where it should be.`);
  }
  const text = typeof part.value === 'string' ? part.value : String(part.value);
  if (part.valueTruncated || Buffer.byteLength(text) > maxBytes) throw new PayloadTooLargeError(`The ${name} part is larger than ${maxBytes} bytes.`);
  return text;
}

function operationsOf(text: string): RequestParams {
  const value = parseJsonBody(text);
  if (Array.isArray(value)) throw new BadRequestError('Batched operations (an array in operations) are not taken: send one operation per request.');
  if (typeof value !== 'object' || value === null) throw new BadRequestError('operations must be a JSON object {"query", "variables"?, "operationName"?}.');
  const { query, variables, operationName, extensions } = value as Record<string, unknown>;
  if (typeof query !== 'string') throw new BadRequestError('operations must have a query (a string); persisted queries are not taken with files.');
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) throw new BadRequestError('operations.variables must be an object.');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw new BadRequestError('operations.operationName must be a string.');
  if (extensions !== undefined && extensions !== null && (typeof extensions !== 'object' || Array.isArray(extensions))) throw new BadRequestError('operations.extensions must be an object.');
  return {
    query,
    ...(variables === undefined || variables === null ? {} : { variables: variables as Record<string, unknown> }),
    ...(typeof operationName === 'string' ? { operationName } : {}),
    ...(extensions === undefined || extensions === null ? {} : { extensions: extensions as Record<string, unknown> }),
  };
}

/** The map part: file part name → its one variable path. */
function mapOf(text: string): Map<string, string> {
  const value = parseJsonBody(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequestError('map must be a JSON object of file part names, each to a list of paths.');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > GRAPHQL_MAX_UPLOADS) throw new PayloadTooLargeError(`map names ${entries.length} files; at most ${GRAPHQL_MAX_UPLOADS} are taken in one request.`);
  const map = new Map<string, string>();
  const paths = new Set<string>();
  for (const [name, given] of entries) {
    if (!Array.isArray(given) || given.length !== 1 || typeof given[0] !== 'string') {
      throw new BadRequestError(`map's ${name.slice(0, 100)} must list exactly one path: a file is written to one place (send it twice for two).`);
    }
    const path = given[0];
    if (paths.has(path)) throw new BadRequestError(`map gives two files the path ${path.slice(0, 200)}.`);
    paths.add(path);
    map.set(name, path);
  }
  return map;
}

/**
 * Refuses, before any file is stored, what the mutations would refuse anyway: a principal that may
 * not create or update there (401, 403), a row it cannot see (404), more files than a field takes.
 */
async function checkTargets(operations: ResourceOperations, ctx: OperationContext, targets: ReadonlyMap<string, UploadTarget>): Promise<void> {
  const lists = new Map<string, number>();
  for (const target of targets.values()) {
    if (target.list === undefined) continue;
    const count = (lists.get(target.list) ?? 0) + 1;
    lists.set(target.list, count);
    if (count > fileLimits(target.field).maxFiles) throw tooManyFiles(target.field);
  }
  for (const { resource, write } of targets.values()) {
    if (write === undefined) continue;
    const id = write.kind === 'create' || resource.singleton || (typeof write.id !== 'string' && typeof write.id !== 'number') ? undefined : idOf(resource, String(write.id));
    await checkUploadAccess(operations, ctx, resource, { kind: write.kind === 'create' ? 'create' : 'update', id });
  }
}

interface Place {
  container: Record<string, unknown>;
  key: string;
}

/** Where the file of a map path goes: its field (and write), and its place in the variables. */
interface Destination {
  target: UploadTarget;
  place: Place;
}

/** Where a file goes in the variables: where the client left a null for it. */
function placeOf(variables: Record<string, unknown>, path: string): Place {
  const segments = path.split('.').slice(1);
  let container: unknown = variables;
  for (const [index, segment] of segments.entries()) {
    const holds = typeof container === 'object' && container !== null && Object.hasOwn(container, segment);
    if (!holds) throw new BadRequestError(`The variables have no value at ${path.slice(0, 200)} (the client puts null where each file goes).`);
    if (index === segments.length - 1) return { container: container as Record<string, unknown>, key: segment };
    container = (container as Record<string, unknown>)[segment];
  }
  throw new BadRequestError(`The map path ${path.slice(0, 200)} names no position in the variables.`);
}
