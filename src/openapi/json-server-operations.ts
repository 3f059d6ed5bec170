import { writesMayBeRefused } from '../core/access-rules/write-access.js';
import { BODY_FAILURES, operation, success } from './operation-builder.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import { mergeFailures } from './problem-responses.js';
import { ref, type OperationObject, type ParameterObject, type PathItemObject, type SchemaObject } from './openapi-types.js';
import { schemaNames } from './resource-schemas.js';
import type { ResourceView } from './versioned-view.js';

/**
 * What `--compat json-server` changes in a resource's paths (src/rest/json-server-compat.ts,
 * docs/json-server.md): json-server's list and read parameters, its page envelope, `DELETE`
 * answering 200 `{}`, and `POST` on hasMany relation paths.
 */

const text = (description: string): SchemaObject => ({ type: 'string', description });

/** json-server's query parameters, as components shared by every list. */
export const JSON_SERVER_PARAMETERS: Record<string, ParameterObject> = Object.fromEntries(
  (
    [
      ['_sort', 'Sort keys, comma-separated: `_sort=views,title` with `_order`, or `-` for descending (`_sort=-views`). Unknown fields are passed over.'],
      ['_order', '`asc` or `desc` for each `_sort` key, comma-separated.'],
      ['_start', 'With `_end` or `_limit`: the first row (as Array.prototype.slice; negative counts from the end). Adds X-Total-Count.'],
      ['_end', 'The row after the last (as Array.prototype.slice). Adds X-Total-Count.'],
      ['_limit', 'How many rows from `_start`, or a page size with `_page` (default 10). Adds X-Total-Count.'],
      ['_page', 'Page number from 1: with `_limit` an array with X-Total-Count and Link first/prev/next/last; with `_per_page` an envelope.'],
      ['_per_page', 'With `_page`: the page size of the envelope `{first, prev, next, last, pages, items, data}` (default 10).'],
      ['q', 'Case-insensitive text in any string or enum field.'],
      ['_where', 'A JSON object of conditions (`{"or":[{"views":{"gt":100}}]}`); it replaces the other filters.'],
      ['_embed', 'A hasMany relation to embed (`_embed=comments`), or a belongsTo relation by its singular (`_embed=post`).'],
      ['_expand', 'A belongsTo relation to embed, by its singular (`_expand=post`).'],
    ] as const
  ).map(([name, description]) => [`jsonServer.${name}`, { name, in: 'query', description, schema: text(description) }]),
);

const LIST_PARAMETERS = ['_sort', '_order', '_start', '_end', '_limit', '_page', '_per_page', 'q', '_where', '_embed', '_expand'];

/** The paths of `resource` as `--compat json-server` serves them (`paths` as resource-paths.ts made them). */
export function withJsonServer(resource: ResourceView, prefix: string, paths: Record<string, PathItemObject>): Record<string, PathItemObject> {
  const base = `${prefix}/${resource.name}`;
  // A singleton's own path reads its one record, as /{id} does elsewhere: not a list.
  if (resource.model.singleton) return withReadParameters(paths, base);
  const list = paths[base]?.get;
  if (list !== undefined) paths[base] = { ...paths[base], get: listOperation(list, resource) };
  withReadParameters(paths, `${base}/{id}`);
  const item = paths[`${base}/{id}`];
  if (item?.delete !== undefined) {
    item.delete = { ...item.delete, responses: { ...withoutKey(item.delete.responses, '204'), 200: success('Deleted: an empty object, as json-server answers.', { type: 'object', maxProperties: 0 }) } };
  }
  for (const relation of resource.relations) {
    const path = paths[`${base}/{id}/${relation.name}`];
    if (path?.get === undefined || relation.kind !== 'hasMany') continue;
    path.get = listOperation(path.get, relation.target);
    path.post = nestedCreate(resource, relation.name, relation.target);
  }
  return paths;
}

/** Adds `_embed` and `_expand` to the GET of one record at `path`. */
function withReadParameters(paths: Record<string, PathItemObject>, path: string): Record<string, PathItemObject> {
  const item = paths[path];
  if (item?.get !== undefined) item.get = { ...item.get, parameters: [...(item.get.parameters ?? []), ref('parameters', 'jsonServer._embed'), ref('parameters', 'jsonServer._expand')] };
  return paths;
}

function listOperation(list: OperationObject, target: ResourceView): OperationObject {
  const rows = { type: 'array', items: ref('schemas', schemaNames(target).record) } satisfies SchemaObject;
  const envelope: SchemaObject = {
    type: 'object',
    required: ['first', 'prev', 'next', 'last', 'pages', 'items', 'data'],
    properties: {
      first: { type: 'integer' },
      prev: { type: ['integer', 'null'] },
      next: { type: ['integer', 'null'] },
      last: { type: 'integer' },
      pages: { type: 'integer' },
      items: { type: 'integer' },
      data: rows,
    },
  };
  return {
    ...list,
    parameters: [...(list.parameters ?? []), ...LIST_PARAMETERS.map((name) => ref('parameters', `jsonServer.${name}`))],
    responses: {
      ...list.responses,
      200: success(`A list of ${target.name}: an array, or with \`_page\` and \`_per_page\` json-server 1.x's envelope.`, { oneOf: [rows, envelope] }, [['Link', false], ['X-Total-Count', false]]),
    },
  };
}

/**
 * `GET /db` (src/rest/json-server-db-route.ts): the whole data set, each resource the caller may
 * list under its name. None where a resource is itself named `db`.
 */
export function dbPath(resources: readonly ResourceView[], prefix: string, maxLimit: number): Record<string, PathItemObject> {
  if (resources.some((r) => r.name === 'db')) return {};
  const properties: Record<string, SchemaObject> = {};
  for (const resource of resources) {
    const record = ref('schemas', schemaNames(resource).record);
    properties[resource.name] = resource.model.singleton ? record : { type: 'array', items: record, maxItems: maxLimit };
  }
  return {
    [`${prefix}/db`]: {
      get: operation(
        {
          operationId: 'getDb',
          summary: "The whole data set (json-server's GET /db)",
          description:
            'Every resource the caller may list, under its name: a collection as an array of its rows by id (as its list reads them: the owner rule keeps to the ' +
            `caller's rows), a singleton as its object (left out until written). A collection of more than ${maxLimit} rows (the largest page) makes it a 400 data-set-too-large.`,
          tags: ['service'],
        },
        [{ kind: 'public' }],
        { 200: success('The data set.', { type: 'object', properties, additionalProperties: false }) },
        { 400: ['data-set-too-large'] },
      ),
    },
  };
}

/** `POST /posts/{id}/comments`: creates a comment whose foreign key is the path's id. */
function nestedCreate(resource: ResourceView, relationName: string, target: ResourceView): OperationObject {
  const names = schemaNames(target);
  return operation(
    {
      operationId: `create${capitalize(resource.singular)}${capitalize(relationName)}`,
      summary: `Create one of ${withIndefiniteArticle(resource.singular)}'s ${relationName} (json-server's nested route)`,
      description: `Creates ${withIndefiniteArticle(target.singular)} whose foreign key is this ${resource.singular}'s id, whatever the body says.`,
      tags: [resource.name],
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', names.create) } } },
    },
    [target.model.access.create],
    { 201: success(`The created ${target.singular}.`, ref('schemas', names.record), [['Location', true], ['ETag', true]]) },
    mergeFailures(BODY_FAILURES, { 404: ['not-found'], 409: ['unique-conflict', 'exclusion-conflict'], 422: ['validation-failed'] }),
    { deprecated: resource.deprecated || target.deprecated, ownerRule: writesMayBeRefused(target.model) },
  );
}

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([k]) => k !== key));
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
