import { ValidationError } from '../errors.js';
import { isDateTime } from '../schema/field-json-schema.js';
import { canonicalFields, type ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { isPlainObject } from './merge-patch.js';
import type { RecordValidator } from './record-validator.js';

/**
 * One record of a bulk import as it will be stored: id (when given), the fields checked by the
 * field types (the request validator's JSON Schema), createdAt and updatedAt (kept when given, else
 * `now`), in canonical order. `restore` takes records as an export wrote them: null allowed anywhere.
 * Returns why not, as one line, when the record does not fit.
 */
export function importedRecord(validator: RecordValidator, resource: ResourceModel, record: unknown, mode: 'restore' | 'create', now: string): StoredRecord | string {
  if (!isPlainObject(record)) return 'must be a JSON object';
  const body: Record<string, unknown> = {};
  const problems: string[] = [];
  let id: number | undefined;
  const times: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) {
    if (name === 'id') {
      if (value === null) continue;
      if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) id = value;
      else problems.push(`/id: must be a positive integer`);
    } else if (name === 'createdAt' || name === 'updatedAt') {
      if (value === null) continue;
      // As an export writes them (the stored form), they are kept as they are.
      if (typeof value === 'string' && isDateTime(value)) times[name] = STORED_TIME.test(value) ? value : new Date(value).toISOString();
      else problems.push(`/${name}: must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)`);
    } else {
      body[name] = value;
    }
  }
  let values: StoredRecord = {};
  try {
    values = validator.validate(resource, mode, body);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    for (const detail of error.errors ?? []) problems.push(`${detail.pointer ?? ''}: ${detail.detail}`);
    if (error.errorsOmitted > 0) problems.push(`and ${error.errorsOmitted} more`);
  }
  if (problems.length > 0) return problems.join('; ');
  const stored: StoredRecord = {};
  for (const field of canonicalFields(resource)) {
    if (field.name === 'id') stored.id = id;
    else if (field.name === 'createdAt') stored.createdAt = times.createdAt ?? now;
    else if (field.name === 'updatedAt') stored.updatedAt = times.updatedAt ?? times.createdAt ?? now;
    else stored[field.name] = values[field.name] ?? null;
  }
  return stored;
}

/** A date-time as stored (Date.toISOString's form). */
const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
