import type { AccessRule } from '../schema/schema-model.js';
import { fileLimits } from '../schema/file-field.js';
import { mergeFailures } from './problem-responses.js';
import { fieldReadFailures } from './operation-security.js';
import { idParameter, operation, success } from './operation-builder.js';
import { ref, type OperationObject, type ParameterObject, type PathItemObject, type SchemaObject } from './openapi-types.js';
import { schemaNames } from './resource-schemas.js';
import { rulesMayForbid } from './rule-notes.js';
import type { FieldView, ResourceView } from './versioned-view.js';

const BINARY: SchemaObject = { type: 'string', format: 'binary' };

/**
 * The paths of a resource's file fields (docs/files.md), as src/rest/file-routes.ts serves them:
 * `/{id}/<field>` with a binary body (PUT, POST for a multiple field) and a binary answer (GET),
 * and `/{id}/<field>/{key}` for one file of a multiple field.
 */
export function filePaths(resource: ResourceView, base: string): Record<string, PathItemObject> {
  const paths: Record<string, PathItemObject> = {};
  for (const field of resource.writableFields) {
    if (field.model.type !== 'file') continue;
    const path = `${base}/{id}/${field.model.name}`;
    const ops = new FileOperations(resource, field);
    const multiple = field.model.multiple === true;
    paths[path] = {
      parameters: [idParameter('id', resource.singular)],
      ...(multiple ? {} : { get: ops.download(false) }),
      put: ops.upload(multiple ? 'replace-list' : 'replace'),
      ...(multiple ? { post: ops.upload('append') } : {}),
      delete: ops.remove(false),
    };
    if (multiple) paths[`${path}/{key}`] = { parameters: [idParameter('id', resource.singular), KEY], get: ops.download(true), delete: ops.remove(true) };
  }
  return paths;
}

/**
 * Adds `multipart/form-data` to the request bodies of a resource's create, replace and update
 * when it has file fields (src/rest/multipart-writes.ts): each field a text part (or all of them
 * in `@jsonPayload`), each file field a binary part (several for a multiple field).
 */
export function addMultipartBodies(resource: ResourceView, paths: Record<string, PathItemObject>, base: string): void {
  const fields = resource.writableFields;
  if (!fields.some((f) => f.model.type === 'file')) return;
  const properties: Record<string, SchemaObject> = {
    '@jsonPayload': { type: 'string', description: 'Fields as one JSON object (the text parts given beside it win).' },
  };
  for (const field of fields) {
    const name = field.name;
    if (field.model.type === 'file') properties[name] = field.model.multiple === true ? { type: 'array', items: BINARY, maxItems: fileLimits(field.model).maxFiles } : BINARY;
    else properties[name] = { type: 'string', description: field.model.type === 'json' ? 'The value as JSON text.' : `The ${field.model.type} as text; an empty part is null${field.model.type === 'string' ? ' (for a string: the empty string)' : ''}.` };
  }
  const media = { schema: { type: 'object', properties } };
  // A singleton's PUT and PATCH are at its own path.
  const item = resource.model.singleton ? base : `${base}/{id}`;
  for (const operation of [paths[base]?.post, paths[item]?.put, paths[item]?.patch]) {
    if (operation?.requestBody === undefined) continue;
    operation.requestBody = { ...operation.requestBody, content: { ...operation.requestBody.content, 'multipart/form-data': media } };
    operation.description = `${operation.description ?? ''} A multipart/form-data body carries the fields and the files in one request (without Idempotency-Key); a file in it replaces the field's files.`.trim();
  }
}

const KEY: ParameterObject = {
  name: 'key',
  in: 'path',
  required: true,
  description: "The file's key: the last segment of its `url`.",
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
};

class FileOperations {
  readonly #resource: ResourceView;
  readonly #field: FieldView;
  readonly #id: string;

  constructor(resource: ResourceView, field: FieldView) {
    this.#resource = resource;
    this.#field = field;
    const name = field.model.name;
    this.#id = `${resource.singular}${name.charAt(0).toUpperCase()}${name.slice(1)}`;
  }

  #rule(op: 'read' | 'update'): AccessRule {
    return this.#resource.model.access[op];
  }

  download(one: boolean): OperationObject {
    const r = this.#resource;
    return operation(
      {
        operationId: `download_${this.#id}${one ? '_one' : ''}`,
        summary: `Download ${one ? 'one file of ' : ''}${r.singular}'s ${this.#field.name}`,
        description: `Streams the file under the ${r.singular}'s read rules and the field's read access. \`Range\` (one range) answers 206; \`If-None-Match\` 304. \`?thumb=\` (${fileLimits(this.#field.model).thumbs.join(', ')}) answers a thumbnail of a PNG, JPEG, GIF, WebP or AVIF image instead (\`c\`: cropped to the size, else fitted inside it), rendered once and kept; another size, or a file that is not such an image, is a 400. Content-Disposition is inline for raster images, attachment otherwise; uploaded HTML or SVG is served with \`Content-Security-Policy: sandbox\` and \`X-Content-Type-Options: nosniff\`.`,
        tags: [r.name],
        parameters: [
          { name: 'Range', in: 'header', required: false, description: 'One byte range: `bytes=0-99`, `bytes=100-`, `bytes=-100`.', schema: { type: 'string' } },
          ref('parameters', 'IfNoneMatch'),
          { name: 'thumb', in: 'query', required: false, description: 'A thumbnail size of the field.', schema: { type: 'string', enum: [...fileLimits(this.#field.model).thumbs] } },
        ],
      },
      [this.#rule('read')],
      {
        200: { description: 'The file, in its media type.', headers: { ETag: ref('headers', 'ETag') }, content: { '*/*': { schema: BINARY } } },
        206: { description: 'The byte range asked for (Content-Range says which).', content: { '*/*': { schema: BINARY } } },
        304: { description: 'Not modified: If-None-Match matches the file\'s ETag.' },
      },
      mergeFailures({ 400: ['bad-request'], 404: ['not-found'], 416: ['range-not-satisfiable'], 422: ['validation-failed'] }, fieldReadFailures(r)),
      { deprecated: r.deprecated, ...(rulesMayForbid(r.model, 'read') ? { ownerRule: true } : {}) },
    );
  }

  upload(kind: 'replace' | 'replace-list' | 'append'): OperationObject {
    const r = this.#resource;
    const limits = fileLimits(this.#field.model);
    const what = kind === 'append' ? 'Adds a file to' : kind === 'replace-list' ? 'Replaces the files of' : 'Uploads (or replaces) the file of';
    const accept = limits.accept === undefined ? 'any type' : limits.accept.join(', ');
    return operation(
      {
        operationId: `${kind === 'append' ? 'append' : 'upload'}_${this.#id}`,
        summary: `${what} ${r.singular}'s ${this.#field.name}`,
        description:
          `${what} the field: the body is the file's raw bytes, streamed; the name comes from \`?name=\` or Content-Disposition. ` +
          `At most ${limits.maxSize} bytes (413 past it); the media type is sniffed from the bytes and must be ${accept} (415 otherwise). ` +
          `Under the ${r.singular}'s update rules and the field's write access, as a PATCH.` +
          (kind === 'append' ? ` At most ${limits.maxFiles} files (422 past it).` : ''),
        tags: [r.name],
        parameters: [
          { name: 'name', in: 'query', required: false, description: 'The file name (sanitised).', schema: { type: 'string' } },
          ref('parameters', 'IfMatch'),
        ],
        requestBody: { required: true, content: { '*/*': { schema: BINARY } } },
      },
      [this.#rule('update')],
      { 200: success(`The ${r.singular}, with the field's new value.`, ref('schemas', schemaNames(r).record), [['ETag', true]]) },
      { 404: ['not-found'], 412: ['precondition-failed'], 413: ['payload-too-large'], 415: ['unsupported-media-type'], 422: ['validation-failed'] },
      { deprecated: r.deprecated, ownerRule: r.owner !== undefined || rulesMayForbid(r.model, 'write') },
    );
  }

  remove(one: boolean): OperationObject {
    const r = this.#resource;
    return operation(
      {
        operationId: `delete_${this.#id}${one ? '_one' : ''}`,
        summary: `Delete ${one ? 'one file of ' : ''}${r.singular}'s ${this.#field.name}`,
        description: `${one ? 'Removes this file from the list' : 'Clears the field'}; the file is deleted once the change has committed. Under the ${r.singular}'s update rules and the field's write access.`,
        tags: [r.name],
        parameters: [ref('parameters', 'IfMatch')],
      },
      [this.#rule('update')],
      { 204: success('Deleted.') },
      { 404: ['not-found'], 412: ['precondition-failed'] },
      { deprecated: r.deprecated, ownerRule: r.owner !== undefined || rulesMayForbid(r.model, 'write') },
    );
  }
}
