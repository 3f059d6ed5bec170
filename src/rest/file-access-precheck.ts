import { ValidationError } from '../errors.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { OperationContext } from '../core/principal.js';
import { enforceFieldChanges } from '../core/access-rules/write-access.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';

/**
 * The access checks of an upload to `field` made before a byte of it is read (docs/files.md#upload):
 * the record readable, the update access and the field's write access, as a PATCH of the field
 * alone would be checked. Validation waits for the file; the write checks everything again in its
 * transaction.
 */
export async function precheckUpload(operations: ResourceOperations, ctx: OperationContext, resource: ResourceModel, field: FieldModel, id: number): Promise<void> {
  const row = await operations.get(ctx, resource, id);
  try {
    operations.check(ctx, resource, 'update', {}, id);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
  }
  // The field's write access on this row (a preset field, or one the principal may not write: 403).
  enforceFieldChanges(ctx.principal, resource, [field.name], row, 'before');
}
