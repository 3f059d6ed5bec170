import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { BadRequestError, NotFoundError, ValidationError } from '../errors.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { OperationContext } from '../core/principal.js';
import type { FileStorage } from '../core/file-storage.js';
import { discardUploads, fileFieldsOf, filesIn, fileUrl, isFileKey, keyOf, type FileValue } from '../core/file-fields.js';
import { hiddenFieldError } from '../core/access-rules/field-reads.js';
import { fileLimits } from '../schema/file-field.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { assertIfMatch, entityTag } from '../http/conditional-requests.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { parseId, registerPath, type RouteHandler } from '../http/path-routes.js';
import { receiveFile } from '../files/file-upload.js';
import { dropUnreadBody } from '../http/unread-body.js';
import { dispositionFileName } from '../files/file-names.js';
import { sendFile, type DownloadOptions } from './file-download.js';
import { Thumbnails } from '../files/image-files.js';
import { VersionTranslator } from './version-translation.js';
import { uploadBudgetOf } from './rate-limit-hook.js';
import type { RateLimits } from '../core/rate-limits.js';
import { viewOf } from '../schema/version-view.js';
import { quotas } from './resource-quotas.js';
import { checkUploadAccess } from '../core/upload-access.js';

export interface FileRoutesOptions {
  operations: ResourceOperations;
  storage: FileStorage;
  /** The quotas in force: uploads count their bytes against the credential's upload budget. */
  rateLimits: RateLimits | undefined;
  downloads?: DownloadOptions;
}

type FileParams = { id: string; key?: string };

/** One renderer per storage (its renders bounded together), made when a schema first has file routes. */
const thumbnailsOf = new WeakMap<FileStorage, Thumbnails>();

/**
 * The routes of a resource's file fields (docs/files.md): `PUT`, `GET` and `DELETE`
 * `/<resource>/<id>/<field>`, and for a `multiple` field `POST` (append) and `GET`/`DELETE`
 * `/<resource>/<id>/<field>/<key>`. Registered in a scope of their own, whose body parser hands
 * the raw request stream to the handlers: nothing is buffered.
 */
export async function registerFileRoutes(app: FastifyInstance, options: FileRoutesOptions, resource: ResourceModel, prefix: string, version: string): Promise<void> {
  const fields = fileFieldsOf(resource);
  if (fields.length === 0) return;
  const tr = new VersionTranslator(options.operations.schema, viewOf(options.operations.schema, resource, version));
  await app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    for (const field of fields) {
      if (tr.view.hidden.includes(field.name)) continue;
      const path = `${prefix}/${resource.name}/:id/${field.name}`;
      const routes = new FieldRoutes(options, resource, field, tr);
      // A multiple field's files are read one by one, at the url each has.
      const whole = field.multiple === true ? { POST: routes.append } : { GET: routes.download };
      // The resource's rate limits: an upload or removal counts as an update, a download as a get.
      const counted = quotas(resource, { GET: 'get', POST: 'update', PUT: 'update', DELETE: 'update' });
      registerPath(scope, path, { ...whole, PUT: routes.replace, DELETE: routes.clear }, { produces: null, ...counted });
      if (field.multiple === true) registerPath(scope, `${path}/:key`, { GET: routes.download, DELETE: routes.clear }, { produces: null, ...counted });
    }
    done();
  });
}

class FieldRoutes {
  readonly #operations: ResourceOperations;
  readonly #storage: FileStorage;
  readonly #rateLimits: RateLimits | undefined;
  readonly #resource: ResourceModel;
  readonly #field: FieldModel;
  readonly #tr: VersionTranslator;
  readonly #thumbnails: Thumbnails;
  readonly #downloads: DownloadOptions;

  constructor(options: FileRoutesOptions, resource: ResourceModel, field: FieldModel, tr: VersionTranslator) {
    this.#operations = options.operations;
    this.#storage = options.storage;
    this.#rateLimits = options.rateLimits;
    this.#downloads = options.downloads ?? {};
    const thumbnails = thumbnailsOf.get(options.storage) ?? new Thumbnails(options.storage);
    thumbnailsOf.set(options.storage, thumbnails);
    this.#thumbnails = thumbnails;
    this.#resource = resource;
    this.#field = field;
    this.#tr = tr;
  }

  /** GET: the file or (`?thumb=`) one of its thumbnails, under the record's read rules and the field's read access. */
  readonly download: RouteHandler = async (request, reply) => {
    const { id, key } = this.#target(request);
    const { thumb } = request.query as Record<string, unknown>;
    if (thumb !== undefined && typeof thumb !== 'string') throw new BadRequestError('Give one ?thumb= size.');
    const record = await this.#operations.get(context(request), this.#resource, id);
    if (!(this.#field.name in record)) throw hiddenFieldError(this.#resource, this.#field.name);
    const file = this.#pick(record, id, key);
    if (thumb === undefined) return sendFile(request, reply, this.#storage, file, keyOf(file), this.#downloads);
    const thumbnail = await this.#thumbnails.get(this.#field, file, thumb);
    return sendFile(request, reply, this.#storage, thumbnail.file, thumbnail.key, this.#downloads, thumbnail.stored);
  };

  /** PUT: the field's file becomes this one (a multiple field's list becomes this one file). */
  readonly replace: RouteHandler = (request, reply) => this.#upload(request, reply, () => []);

  /** POST: this file is added to a multiple field's list (within maxFiles). */
  readonly append: RouteHandler = (request, reply) => this.#upload(request, reply, (current) => filesIn(current[this.#field.name]));

  /** Stores the body as a file, then writes the field: `kept`, the files of the row it keeps beside the new one. */
  async #upload(request: FastifyRequest, reply: FastifyReply, kept: (current: StoredRecord) => FileValue[]): Promise<FastifyReply> {
    const { id } = this.#target(request);
    if (request.headers['idempotency-key'] !== undefined) throw new BadRequestError('Idempotency-Key is not taken on file uploads: a replay would need the file\'s bytes. Upload again, or PUT to replace.');
    const ctx = context(request);
    // Who may not write it is refused before a byte is stored (and again in the transaction).
    await checkUploadAccess(this.#operations, ctx, this.#resource, { kind: 'update', id, field: this.#field });
    const query = request.query as Record<string, unknown>;
    const body = request.body as Readable | undefined;
    if (body === undefined) throw new ValidationError('The body must be the file\'s bytes.', { errors: [{ pointer: '', detail: 'is empty' }] });
    const length = request.headers['content-length'];
    const file = await receiveFile(this.#storage, this.#field, {
      body,
      name: typeof query.name === 'string' ? query.name : dispositionFileName(request.headers['content-disposition']),
      claimedType: request.headers['content-type'],
      declaredLength: length === undefined ? undefined : Number(length),
      urlOf: (key) => fileUrl(this.#resource, this.#field, id, key),
      budget: uploadBudgetOf(this.#rateLimits, request),
    }).catch((error: unknown) => {
      // Refused before the body was read whole (413, 415, 429).
      dropUnreadBody(request, reply);
      throw error;
    });
    let record: StoredRecord;
    try {
      record = await this.#write(request, id, (current) => this.#withUpload(file, kept(current)));
    } catch (error) {
      await discardUploads(this.#storage, [file]);
      throw error;
    }
    return this.#sendRecord(reply, record);
  }

  /** DELETE: clears the field, or removes one file of a multiple field; the files go after the commit. */
  readonly clear: RouteHandler = async (request, reply) => {
    const { id, key } = this.#target(request);
    await this.#write(request, id, (current) => {
      if (key === undefined) return { [this.#field.name]: null };
      const files = filesIn(current[this.#field.name]);
      if (!files.some((f) => keyOf(f) === key)) throw this.#noFile(id);
      return { [this.#field.name]: files.filter((f) => keyOf(f) !== key) };
    });
    return reply.code(204).send();
  };

  /** The field's new value: the file, or in a multiple field the files kept and then it (a 422 past maxFiles, checked in the transaction). */
  #withUpload(file: FileValue, files: FileValue[]): StoredRecord {
    if (this.#field.multiple !== true) return { [this.#field.name]: file };
    const { maxFiles } = fileLimits(this.#field);
    if (files.length >= maxFiles) {
      throw new ValidationError(`${this.#field.name} already holds ${maxFiles} files, its maximum.`, { errors: [{ pointer: `/${this.#field.name}`, detail: `holds at most ${maxFiles} files (maxFiles); delete one first` }] });
    }
    return { [this.#field.name]: [...files, file] };
  }

  /** An update of the field alone, as a PATCH would be: the update rule, owner, field write access, If-Match. */
  async #write(request: FastifyRequest, id: number, values: (current: StoredRecord) => StoredRecord): Promise<StoredRecord> {
    const ifMatch = request.headers['if-match'];
    return this.#operations.update(context(request), this.#resource, id, {}, {
      fileValues: values,
      ...(ifMatch === undefined ? {} : { precondition: (current: StoredRecord) => assertIfMatch(ifMatch, entityTag(JSON.stringify(this.#tr.record(current)))) }),
    });
  }

  #sendRecord(reply: FastifyReply, record: StoredRecord): FastifyReply {
    const body = JSON.stringify(this.#tr.record(record));
    return reply.header('etag', entityTag(body)).type(JSON_CONTENT_TYPE).send(body);
  }

  #target(request: FastifyRequest): { id: number; key: string | undefined } {
    const params = request.params as FileParams;
    const id = parseId(this.#resource.singular, params.id);
    if (params.key !== undefined && !isFileKey(params.key)) throw this.#noFile(id);
    return { id, key: params.key };
  }

  #pick(record: StoredRecord, id: number, key: string | undefined): FileValue {
    const files = filesIn(record[this.#field.name]);
    const file = key === undefined ? (this.#field.multiple === true ? undefined : files[0]) : files.find((f) => keyOf(f) === key);
    if (file === undefined) throw this.#noFile(id);
    return file;
  }

  #noFile(id: number): NotFoundError {
    return new NotFoundError(`${this.#resource.singular} ${id} has no such file in ${this.#field.name}.`);
  }
}

function context(request: FastifyRequest): OperationContext {
  return { principal: request.principal, requestId: request.id };
}
