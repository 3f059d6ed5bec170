import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../errors.js';
import { hasIdKey, keyFields, parseRecordId, recordId, type RecordId } from '../schema/record-key.js';
import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { parseId } from '../http/path-routes.js';

/**
 * Records in URL paths: `/<resource>/<id>` for the tables restgraph creates, the key of a mapped
 * table otherwise (`/country/FR`, `/rental/<uuid>`, `/film_actor/1,23`: a composite key's parts
 * in key order, a part holding `,` or `%` percent-encoded).
 */

/** Reads the record name of an item path under `base` (`/v1/film_actor`), or throws the 404 of a path that names none. */
export function recordIdReader(resource: ResourceModel, base: string): (request: FastifyRequest) => RecordId {
  if (hasIdKey(resource)) return (request) => parseId(resource.singular, (request.params as { id: string }).id);
  const composite = keyFields(resource).length > 1;
  const at = base.split('/').length;
  return (request) => {
    // A composite key is read from the raw path: its parts' own %2C must not become separators.
    const text = composite ? (request.url.split('?', 1)[0] ?? '').split('/')[at] ?? '' : (request.params as { id: string }).id;
    const id = parseRecordId(resource, text);
    if (id === undefined) throw new NotFoundError(`There is no ${resource.singular} with key ${text.slice(0, 80)} (its key: ${keyFields(resource).join(', ')}).`);
    return id;
  };
}

/** The path of a record under `base`. */
export function recordPath(resource: ResourceModel, base: string, record: StoredRecord): string {
  const id = recordId(resource, record);
  if (hasIdKey(resource) || keyFields(resource).length > 1) return `${base}/${String(id)}`;
  return `${base}/${encodeURIComponent(String(id))}`;
}
