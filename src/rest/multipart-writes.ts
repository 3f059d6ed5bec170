import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { BadRequestError, PayloadTooLargeError, ValidationError } from '../errors.js';
import { multipartError } from '../http/multipart-bodies.js';
import { dropUnreadBody } from '../http/unread-body.js';
import type { FileStorage } from '../core/file-storage.js';
import { discardUploads, fileFieldsOf, locatedFileValues, type FileValue } from '../core/file-fields.js';
import { fileLimits } from '../schema/file-field.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import { parseJsonBody } from '../http/content-negotiation.js';
import { receiveFile } from '../files/file-upload.js';
import type { VersionTranslator } from './version-translation.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { ValidateOptions } from '../core/record-validator.js';
import type { OperationContext } from '../core/principal.js';
import { checkUploadAccess } from '../core/upload-access.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { RateLimits } from '../core/rate-limits.js';
import type { UploadBudget } from '../core/upload-budget.js';
import { uploadBudgetOf } from './rate-limit-hook.js';
import type { RecordId } from '../schema/record-key.js';

/**
 * `multipart/form-data` on `POST /<resource>` and `PATCH`/`PUT /<resource>/<id>`
 * (docs/files.md#multipart-forms): each field a text part converted by the field's type (or all
 * of them as JSON in an `@jsonPayload` part), each file a file part streamed to storage through
 * the upload pipeline before the row is written; the caller writes the row in one transaction and
 * removes the stored files when anything fails.
 */

/** The most parts of one request, and the most bytes of its text parts together (JSON fields included). */
export const MULTIPART_MAX_PARTS = 200;
export const MULTIPART_MAX_FIELD_BYTES = 1024 * 1024;
/** The part that holds fields as one JSON object (PocketBase's name). */
export const JSON_PAYLOAD_PART = '@jsonPayload';

/** What a multipart write read: the JSON body, and the files already in storage, by field. */
export interface MultipartWrite {
  body: Record<string, unknown>;
  /** The file fields' values for the row; `id`: the row's (a create knows it once inserted). */
  fileValues: (id: RecordId) => Record<string, FileValue | FileValue[]>;
  /** Removes the stored files (the write failed). */
  discard: () => Promise<void>;
}

/**
 * Reads a multipart body: text parts into the JSON body, file parts streamed to storage (size and
 * type checked as a raw upload). On any failure the files stored so far are removed.
 */
export async function readMultipartWrite(request: FastifyRequest, target: MultipartTarget, budget: UploadBudget | undefined): Promise<MultipartWrite> {
  const { storage, resource, tr, fileFields } = target;
  const stored: FileValue[] = [];
  const files = new Map<FieldModel, FileValue[]>();
  const discard = (): Promise<void> => discardUploads(storage, stored);
  const texts: Record<string, unknown> = {};
  let payload: Record<string, unknown> = {};
  // The text parts together are bounded like a JSON body: 200 parts of 1 MB each held at once
  // would be 200 MB per request.
  let textBytes = 0;
  try {
    const parts = request.parts({
      limits: {
        parts: MULTIPART_MAX_PARTS,
        fields: MULTIPART_MAX_PARTS,
        fieldSize: MULTIPART_MAX_FIELD_BYTES,
        fieldNameSize: 200,
        headerPairs: 20,
        ...target.fileLimits,
      },
    });
    for await (const part of parts) {
      if (part.type === 'field') {
        const text = fieldText(part);
        textBytes += Buffer.byteLength(text);
        if (textBytes > MULTIPART_MAX_FIELD_BYTES) throw new PayloadTooLargeError(`The text parts of this form hold more than ${MULTIPART_MAX_FIELD_BYTES} bytes together (files do not count).`);
        if (part.fieldname === JSON_PAYLOAD_PART) payload = jsonPayload(text);
        else {
          if (part.fieldname in texts) throw invalid(part.fieldname, 'is given twice');
          texts[part.fieldname] = fromText(tr.field(part.fieldname), part.fieldname, text);
        }
        continue;
      }
      const named = tr.field(part.fieldname);
      const field = fileFields.find((f) => f === named);
      if (field === undefined) throw invalid(part.fieldname, `is not a file field of ${resource.name}${fileFields.length === 0 ? '' : ` (those are ${fileFields.map((f) => f.name).join(', ')})`}`);
      const list = files.get(field) ?? [];
      if (list.length >= (field.multiple === true ? fileLimits(field).maxFiles : 1)) {
        throw invalid(field.name, field.multiple === true ? `holds at most ${fileLimits(field).maxFiles} files (maxFiles)` : 'takes one file');
      }
      const file = await receiveFile(storage, field, { body: part.file, name: part.filename, claimedType: part.mimetype, declaredLength: undefined, urlOf: (key) => key, budget });
      stored.push(file);
      files.set(field, [...list, file]);
    }
  } catch (error) {
    await discard();
    throw multipartError(error, `The multipart body has too many parts: at most ${MULTIPART_MAX_PARTS}, and as many files as the file fields hold.`);
  }
  for (const field of files.keys()) {
    if (field.name in texts || field.name in payload) throw invalid(field.name, 'is given both as a file and as a value');
  }
  return {
    body: { ...payload, ...texts },
    fileValues: (id) => locatedFileValues(resource, files, id),
    discard,
  };
}

function fieldText(part: Multipart & { type: 'field' }): string {
  if (part.valueTruncated) throw new PayloadTooLargeError(`The part ${part.fieldname} is larger than ${MULTIPART_MAX_FIELD_BYTES} bytes.`);
  return typeof part.value === 'string' ? part.value : String(part.value);
}

function jsonPayload(text: string): Record<string, unknown> {
  const value = parseJsonBody(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(JSON_PAYLOAD_PART, 'must be a JSON object of fields');
  return value as Record<string, unknown>;
}

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * A text part's value for its field: numbers and booleans parsed, json fields parsed as JSON,
 * an empty part null (for every type but string); anything that does not parse is kept as text,
 * for validation to say what is wrong with it.
 */
function fromText(field: FieldModel | undefined, name: string, text: string): unknown {
  if (field === undefined) return text; // an unknown field: refused by validation, by name
  if (text === '' && field.type !== 'string') return null;
  switch (field.type) {
    case 'integer':
    case 'number':
      return NUMBER.test(text) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'json':
      try {
        return parseJsonBody(text);
      } catch {
        throw invalid(name, 'must be JSON (a json field\'s part holds its value as JSON text)');
      }
    default:
      return text;
  }
}

function invalid(name: string, detail: string): ValidationError {
  return new ValidationError(`The multipart body's ${name} ${detail}.`, { errors: [{ pointer: `/${name}`, detail }] });
}

/** What a multipart write needs of its route. */
export interface MultipartTarget {
  operations: ResourceOperations;
  storage: FileStorage;
  /** The quotas in force: file parts count their bytes against the credential's upload budget. */
  rateLimits: RateLimits | undefined;
  resource: ResourceModel;
  tr: VersionTranslator;
  /** Create options of the query style (json-server's chosen ids). */
  creates: ValidateOptions;
  /** The file fields of the route's version. */
  fileFields: readonly FieldModel[];
  /** The parser's bounds on file parts: as many as the fields hold, none larger than the largest maxSize. */
  fileLimits: { files: number; fileSize: number };
}

/**
 * The multipart writes of a resource with file fields, worked out once per route (not per
 * request); undefined without file storage or file fields (multipart is then a 415).
 */
export function multipartTarget(target: Omit<MultipartTarget, 'fileFields' | 'fileLimits'>): MultipartTarget | undefined {
  if (fileFieldsOf(target.resource).length === 0) return undefined;
  const fileFields = fileFieldsOf(target.resource).filter((f) => !target.tr.view.hidden.includes(f.name));
  return {
    ...target,
    fileFields,
    fileLimits: {
      files: fileFields.reduce((sum, f) => sum + (f.multiple === true ? fileLimits(f).maxFiles : 1), 0),
      // Past the field's maxSize storage stops first (a 413); this only bounds the largest.
      fileSize: Math.max(1, ...fileFields.map((f) => fileLimits(f).maxSize + 1)),
    },
  };
}

/**
 * A create (`POST`), update (`PATCH`) or replace (`PUT`) from a multipart body: access checked
 * before a byte is stored, the files stored, then the row written in one transaction with the
 * files' values; on any failure the stored files are removed. @returns the row written
 */
export async function writeMultipart(request: FastifyRequest, reply: FastifyReply, target: MultipartTarget, kind: 'create' | 'update' | 'replace', id: RecordId | undefined, precondition: ((current: StoredRecord) => void) | undefined): Promise<StoredRecord> {
  const { operations, resource, tr, creates } = target;
  if (request.headers['idempotency-key'] !== undefined) {
    throw new BadRequestError('Idempotency-Key is not taken with multipart/form-data bodies: send JSON, or upload each file to its field\'s route.');
  }
  const ctx: OperationContext = { principal: request.principal, requestId: request.id };
  // Who may not write here is refused before a byte is stored; the fields are validated once all are read.
  // (A singleton's PUT creates its record when it has none: nothing to read first.)
  await checkUploadAccess(operations, ctx, resource, kind === 'create' ? { kind, id, creates } : { kind: 'update', id, readRow: !(resource.singleton && kind === 'replace') });
  const budget = uploadBudgetOf(target.rateLimits, request);
  const form = await (async () => {
    // A spent upload budget refuses the form before its body is read.
    await budget?.check(undefined);
    return readMultipartWrite(request, target, budget);
  })().catch((error: unknown) => {
    // Refused before the body was read whole (413, 415, 422, 429).
    dropUnreadBody(request, reply);
    throw error;
  });
  // The last bytes (the body's epilogue, a chunked body's end) may not be read yet.
  dropUnreadBody(request, reply);
  try {
    const body = tr.body(form.body, (translated) => operations.check(ctx, resource, kind, translated, id, kind === 'create' ? creates : {}));
    if (kind === 'create' || id === undefined) return await operations.create(ctx, resource, body, { ...creates, fileValues: (row) => form.fileValues(row.id as number) });
    const options = { ...(precondition === undefined ? {} : { precondition }), fileValues: () => form.fileValues(id) };
    // A replace through a version that lacks some fields leaves them (and their files) as they are, as a JSON PUT does.
    return kind === 'update' ? await operations.update(ctx, resource, id, body, options) : await operations.replace(ctx, resource, id, body, { ...options, keep: tr.view.hidden });
  } catch (error) {
    await form.discard();
    throw error;
  }
}
