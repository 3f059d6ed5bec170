import { ValidationError } from '../errors.js';
import type { RecordId } from '../schema/record-key.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import { enforceFieldChanges } from './access-rules/write-access.js';
import type { OperationContext } from './principal.js';
import type { ValidateOptions } from './record-validator.js';
import type { ResourceOperations } from './resource-operations.js';

/** A write that carries files, as far as it is known before any of its bytes is read. */
export interface UploadWrite {
  kind: 'create' | 'update';
  /** The row it writes (none for a create). */
  id: RecordId | undefined;
  /**
   * Whether the row is read first, so a row not there or not readable is a 404 before a byte is
   * stored; not for a write that may create its row (a singleton's replace). @default id !== undefined
   */
  readRow?: boolean;
  /** Create options (json-server's chosen ids). */
  creates?: ValidateOptions;
  /** The one file field a raw upload writes: its write access on the row is checked too. */
  field?: FieldModel;
}

/**
 * The access checks of a write with files, made before a byte of them is read or stored
 * (docs/files.md#upload): the row readable, the create or update access, and (for a raw upload to
 * one field) the field's write access on the row, as a PATCH of that field would be checked. The
 * fields are not validated here: that waits for the whole body, and the write checks everything
 * again in its transaction. REST's raw and multipart uploads and GraphQL's multipart requests all
 * refuse early through this. @throws what the write would: 401, 403, 404
 */
export async function checkUploadAccess(operations: ResourceOperations, ctx: OperationContext, resource: ResourceModel, write: UploadWrite): Promise<void> {
  const row = write.id !== undefined && (write.readRow ?? true) ? await operations.get(ctx, resource, write.id) : undefined;
  try {
    operations.check(ctx, resource, write.kind, {}, write.id, write.creates);
  } catch (error) {
    // Only access: a validation problem waits for the whole body.
    if (!(error instanceof ValidationError)) throw error;
  }
  // A preset field, or one the principal may not write on this row: 403.
  if (write.field !== undefined && row !== undefined) enforceFieldChanges(ctx.principal, resource, [write.field.name], row, 'before');
}
