import { GraphQLError, GraphQLList, GraphQLNonNull, GraphQLScalarType, type GraphQLInputFieldConfig } from 'graphql';
import { locatedFileValues, type FileValue } from '../core/file-fields.js';
import { ValidationError } from '../errors.js';
import { fileLimits } from '../schema/file-field.js';
import type { WriteOptions } from '../core/resource-operations.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { bodyOf } from './schema-parts.js';
import type { RecordId } from '../schema/record-key.js';

/**
 * File fields in mutation inputs (docs/files.md#graphql): the `Upload` scalar of the GraphQL
 * multipart request specification. Its values are files a multipart request has already streamed
 * to storage; the mutation writes their values with the row, in its transaction.
 */

/** A file of a multipart request, stored before execution; `kept` once a committed write references it. */
export class UploadedFile {
  readonly value: FileValue;
  kept = false;

  constructor(value: FileValue) {
    this.value = value;
  }
}

/** A list of more files than a `multiple` field's maxFiles. */
export function tooManyFiles(field: FieldModel): ValidationError {
  const detail = `holds at most ${fileLimits(field).maxFiles} files (maxFiles)`;
  return new ValidationError(`${field.name} ${detail}.`, { errors: [{ pointer: `/${field.name}`, detail }] });
}

/** Where an input field of a file field leads: read by the multipart request before any file is stored. */
export interface FileInputExtension {
  resource: ResourceModel;
  field: FieldModel;
}

/** What a create, update or replace mutation writes: read to check access before any file is stored. */
export interface WriteMutationExtension {
  resource: ResourceModel;
  kind: 'create' | 'update' | 'replace';
}

export const UploadScalar = new GraphQLScalarType<UploadedFile, never>({
  name: 'Upload',
  description: 'A file, sent as a part of a multipart request (the GraphQL multipart request specification); the inputs of file fields take it.',
  serialize: () => {
    throw new GraphQLError('Upload is an input type only.');
  },
  parseValue: (value) => {
    if (value instanceof UploadedFile) return value;
    throw new GraphQLError('An Upload is a file part of a multipart/form-data request (the GraphQL multipart request specification), mapped to this variable; a JSON value is not a file.');
  },
  parseLiteral: (ast) => {
    throw new GraphQLError('An Upload cannot be written in the query: send the file as a part of a multipart request and map it to a variable.', { nodes: ast });
  },
});

/** The input field of a file field: `Upload` (null clears it), a `multiple` one's `[Upload!]` (the list becomes the files given; null or [] clears it). */
export function fileInputField(resource: ResourceModel, field: FieldModel): GraphQLInputFieldConfig {
  const extension: FileInputExtension = { resource, field };
  return { type: field.multiple === true ? new GraphQLList(new GraphQLNonNull(UploadScalar)) : UploadScalar, extensions: { restgraphFile: extension } };
}

/**
 * Runs a write with a mutation input: the uploads taken out of the body and written as the
 * fields' files (`WriteOptions.fileValues`, in the write's transaction; `id` undefined for a
 * create, whose files' urls name the new row). The uploads are marked kept once the write has
 * committed; the request removes the others from storage.
 */
export async function withUploads<T>(resource: ResourceModel, input: Record<string, unknown>, id: RecordId | undefined, write: (body: Record<string, unknown>, options: Pick<WriteOptions, 'fileValues'>) => Promise<T>): Promise<T> {
  const given = bodyOf(resource, input);
  const body: Record<string, unknown> = {};
  const files = new Map<FieldModel, FileValue[]>();
  const uploads: UploadedFile[] = [];
  for (const [name, value] of Object.entries(given)) {
    const items = Array.isArray(value) ? (value as unknown[]) : [value];
    const sent = items.filter((item): item is UploadedFile => item instanceof UploadedFile);
    const field = resource.fields.get(name);
    if (sent.length === 0 || field === undefined) {
      body[name] = value;
      continue;
    }
    if (sent.length > fileLimits(field).maxFiles) throw tooManyFiles(field);
    uploads.push(...sent);
    files.set(field, sent.map((file) => file.value));
  }
  const fileValues = (row: StoredRecord): StoredRecord => locatedFileValues(resource, files, id ?? (row.id as number));
  const result = await write(body, files.size === 0 ? {} : { fileValues });
  for (const upload of uploads) upload.kept = true;
  return result;
}
