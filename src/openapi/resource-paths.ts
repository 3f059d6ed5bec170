import type { AccessOperation, AccessRule } from '../schema/schema-model.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import { mergeFailures } from './problem-responses.js';
import { fieldReadFailures } from './operation-security.js';
import { BODY_FAILURES as BODY, idParameter, JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE, operation, success } from './operation-builder.js';
import { itemParameterRefs, listParameterRefs } from './list-parameters.js';
import { ref, type OperationObject, type ParameterObject, type PathItemObject, type ReferenceObject, type ResponseObject } from './openapi-types.js';
import { schemaNames } from './resource-schemas.js';
import { presetSentence, ruleSentence, rulesMayForbid } from './rule-notes.js';
import type { RelationView, ResourceView } from './versioned-view.js';
import { addMultipartBodies, filePaths } from './file-paths.js';

/**
 * The REST paths of one resource under `prefix` (`''` for the latest version, `/v1`, …): the
 * collection, the item and each relation, as src/rest/resource-routes.ts serves them.
 */
export function resourcePaths(resource: ResourceView, prefix: string, parameters: Record<string, ParameterObject>): Record<string, PathItemObject> {
  const base = `${prefix}/${resource.name}`;
  const names = schemaNames(resource);
  const record = ref('schemas', names.record);
  const tags = [resource.name];
  const rule = (op: AccessOperation): AccessRule => resource.model.access[op];
  const deprecated = { deprecated: resource.deprecated };
  const ownerWrites = resource.owner !== undefined;
  const writes = { ...deprecated, ownerRule: ownerWrites || rulesMayForbid(resource.model, 'write') };
  const reads = { ...deprecated, ...(rulesMayForbid(resource.model, 'read') ? { ownerRule: true } : {}) };
  const ownerNote = ownerWrites ? ownerSentence(resource) : undefined;
  // include=<relation> also needs read access to each embedded resource.
  const includeRules = resource.relations.map((r) => r.target.model.access.read);
  const T = capitalize(resource.singular);
  const byId = { parameters: [idParameter('id', resource.singular)] };

  const paths: Record<string, PathItemObject> = {};
  const item = itemOperations(resource);
  if (resource.model.singleton) {
    // One record at the resource's own path (src/rest/resource-routes.ts).
    paths[base] = { get: item.get, put: item.put, patch: item.patch };
    // Its file fields' routes are at the url their values name: /<name>/1/<field>.
    Object.assign(paths, filePaths(resource, base));
    addMultipartBodies(resource, paths, base);
    return paths;
  }
  paths[base] = {
    get: operation(
      { operationId: `list${capitalize(resource.name)}`, summary: `List ${resource.name}`, description: listDescription(ownerNote, ruleSentence(resource.model, 'list')), tags, parameters: listParameterRefs(resource, parameters) },
      [rule('read')],
      { 200: listResponse(resource) },
      mergeFailures({ 400: ['invalid-query'] }, fieldReadFailures(resource)),
      { rules: includeRules, ...reads },
    ),
    post: operation(
      {
        operationId: `create${T}`,
        summary: `Create ${withIndefiniteArticle(resource.singular)}`,
        description: sentences(ownerNote, ruleSentence(resource.model, 'create'), presetSentence(resource.model)),
        tags, parameters: [ref('parameters', 'IdempotencyKey')], requestBody: jsonBody(names.create) },
      [rule('create')],
      { 201: success(`The created ${resource.singular}.`, record, [['Location', true], ['ETag', true], ['Idempotent-Replayed', false]]) },
      mergeFailures(BODY, { 409: ['unique-conflict', 'exclusion-conflict', 'idempotency-key-in-use'], 422: ['validation-failed', 'idempotency-key-reused'] }),
      writes,
    ),
  };
  paths[`${base}/{id}`] = { ...byId, ...item };
  for (const relation of resource.relations) {
    paths[`${base}/{id}/${relation.name}`] = { ...byId, get: relationOperation(resource, relation, parameters) };
  }
  Object.assign(paths, filePaths(resource, base));
  addMultipartBodies(resource, paths, base);
  return paths;
}

/** GET, PUT, PATCH and DELETE of one row: at /{id}, or (GET, PUT, PATCH) at a singleton's own path. */
function itemOperations(resource: ResourceView): Required<Pick<PathItemObject, 'get' | 'put' | 'patch' | 'delete'>> {
  const names = schemaNames(resource);
  const record = ref('schemas', names.record);
  const tags = [resource.name];
  const rule = (op: AccessOperation): AccessRule => resource.model.access[op];
  const deprecated = { deprecated: resource.deprecated };
  const writes = { ...deprecated, ownerRule: resource.owner !== undefined || rulesMayForbid(resource.model, 'write') };
  const reads = { ...deprecated, ...(rulesMayForbid(resource.model, 'read') ? { ownerRule: true } : {}) };
  const ownerNote = resource.owner !== undefined ? ownerSentence(resource) : undefined;
  const includeRules = resource.relations.map((r) => r.target.model.access.read);
  const T = capitalize(resource.singular);
  const putNote = resource.model.singleton ? `Creates the ${resource.singular} when it has none yet.` : ownerNote;
  const readNote = sentences(ownerNote, ruleSentence(resource.model, 'read'));
  const updateNote = ruleSentence(resource.model, 'update');
  return {
    get: operation(
      { operationId: `get${T}`, summary: `Get ${withIndefiniteArticle(resource.singular)}`, description: readNote, tags, parameters: [...itemParameterRefs(resource), ref('parameters', 'IfNoneMatch')] },
      [rule('read')],
      itemReadResponses(resource),
      mergeFailures({ 400: ['invalid-query'], 404: ['not-found'], 414: ['uri-too-long'] }, fieldReadFailures(resource)),
      { rules: includeRules, ...reads },
    ),
    put: operation(
      { operationId: `replace${T}`, summary: `Replace ${withIndefiniteArticle(resource.singular)}`, description: sentences(putNote, updateNote), tags, parameters: [ref('parameters', 'IfMatch')], requestBody: jsonBody(names.replace) },
      [rule('update')],
      { 200: success(`The ${resource.singular}, wholly replaced.`, record, [['ETag', true]]) },
      mergeFailures(BODY, { 404: ['not-found'], 409: ['unique-conflict', 'exclusion-conflict', 'reference-conflict'], 412: ['precondition-failed'], 414: ['uri-too-long'], 422: ['validation-failed'] }),
      writes,
    ),
    patch: operation(
      {
        operationId: `update${T}`,
        summary: `Update ${withIndefiniteArticle(resource.singular)} (JSON Merge Patch)`,
        description: sentences(ownerNote, updateNote, 'Only the fields sent change; `null` clears a field (RFC 7396). `application/json` is read the same way.'),
        tags,
        parameters: [ref('parameters', 'IfMatch'), ref('parameters', 'IdempotencyKey')],
        requestBody: { required: true, content: { [MERGE_PATCH_MEDIA_TYPE]: { schema: ref('schemas', names.patch) }, [JSON_MEDIA_TYPE]: { schema: ref('schemas', names.patch) } } },
      },
      [rule('update')],
      { 200: success(`The updated ${resource.singular}.`, record, [['ETag', true], ['Idempotent-Replayed', false]]) },
      mergeFailures(BODY, {
        404: ['not-found'],
        409: ['unique-conflict', 'exclusion-conflict', 'reference-conflict', 'idempotency-key-in-use'],
        412: ['precondition-failed'],
        414: ['uri-too-long'],
        422: ['validation-failed', 'idempotency-key-reused'],
      }),
      writes,
    ),
    delete: operation(
      { operationId: `delete${T}`, summary: `Delete ${withIndefiniteArticle(resource.singular)}`, description: sentences(ownerNote, ruleSentence(resource.model, 'delete'), deleteSentence(resource)), tags, parameters: [ref('parameters', 'IfMatch')] },
      [rule('delete')],
      { 204: success(`Deleted.`) },
      // 422: a trigger of the database that refuses the delete.
      mergeFailures(BODY, { 404: ['not-found'], 409: ['reference-conflict'], 412: ['precondition-failed'], 414: ['uri-too-long'], 422: ['validation-failed'] }),
      writes,
    ),
  };
}

/** GET /users/{id}/posts (a list of the target) or /posts/{id}/user (one object or 404). */
function relationOperation(resource: ResourceView, relation: RelationView, parameters: Record<string, ParameterObject>): OperationObject {
  const target = relation.target;
  const rules = [resource.model.access.read, target.model.access.read];
  const includeRules = target.relations.map((r) => r.target.model.access.read);
  const common = { tags: [resource.name], deprecated: resource.deprecated || target.deprecated };
  if (relation.kind === 'hasMany') {
    return operation(
      {
        operationId: `list${capitalize(resource.singular)}${capitalize(relation.name)}`,
        summary: `List ${withIndefiniteArticle(resource.singular)}'s ${relation.name}`,
        description: sentences(`The ${target.name} whose foreign key names this ${resource.singular}; they take every list parameter of ${target.name}.`, ruleSentence(target.model, 'list')),
        tags: common.tags,
        parameters: listParameterRefs(target, parameters),
      },
      rules,
      { 200: listResponse(target) },
      mergeFailures({ 400: ['invalid-query'], 404: ['not-found'], 414: ['uri-too-long'] }, fieldReadFailures(resource)),
      { rules: includeRules, deprecated: common.deprecated, ...(rulesMayForbid(target.model, 'read') ? { ownerRule: true } : {}) },
    );
  }
  return operation(
    {
      operationId: `get${capitalize(resource.singular)}${capitalize(relation.name)}`,
      summary: `Get ${withIndefiniteArticle(resource.singular)}'s ${relation.name}`,
      description: sentences(`The ${target.singular} this ${resource.singular} refers to; 404 when it refers to none.`, ruleSentence(target.model, 'read')),
      tags: common.tags,
      parameters: [...itemParameterRefs(target), ref('parameters', 'IfNoneMatch')],
    },
    rules,
    itemReadResponses(target),
    mergeFailures({ 400: ['invalid-query'], 404: ['not-found'], 414: ['uri-too-long'] }, fieldReadFailures(resource)),
    { rules: includeRules, deprecated: common.deprecated },
  );
}

function listResponse(resource: ResourceView): ResponseObject {
  return success(
    `A page of ${resource.name}: always a bare JSON array. Paging metadata is in the headers.`,
    { type: 'array', items: ref('schemas', schemaNames(resource).record) },
    [['Link', false], ['X-Total-Count', false]],
  );
}

function itemReadResponses(resource: ResourceView): Record<string, ResponseObject> {
  return {
    200: success(`The ${resource.singular}.`, ref('schemas', schemaNames(resource).record), [['ETag', true]]),
    304: success('Not modified: If-None-Match names the current ETag. No body.', undefined, [['ETag', true]]),
  };
}

function jsonBody(schemaName: string): { required: true; content: Record<string, { schema: ReferenceObject }> } {
  return { required: true, content: { [JSON_MEDIA_TYPE]: { schema: ref('schemas', schemaName) } } };
}

function listDescription(ownerNote: string | undefined, listRule: string | undefined): string {
  return sentences(
    'Filters are ANDed; unknown parameters, fields or operators are a 400 naming them. Page with `limit` and the `Link` header ' +
      '(`rel="next"`, a keyset cursor in `after`), or with `offset`.',
    ownerNote,
    listRule,
  ) as string;
}

/** The sentences given, in order, as one description; undefined when there are none. */
function sentences(...parts: (string | undefined)[]): string | undefined {
  const text = parts.filter((part) => part !== undefined && part !== '').join(' ');
  return text === '' ? undefined : text;
}

function ownerSentence(resource: ResourceView): string {
  const reads = resource.model.access.read.kind === 'public' ? '' : ' Reads show only its own rows (admin sees all).';
  return `Owner rule: rows belong to the token whose subject is in \`${resource.owner ?? ''}\`.${reads} Writes touch only its own rows.`;
}

function deleteSentence(resource: ResourceView): string {
  return `Rows of other resources that reference this ${resource.singular} follow their onDelete rule (restrict is a 409).`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
