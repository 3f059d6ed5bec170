import { UniqueConflictError } from '../errors.js';
import type { ResourceModel } from '../schema/schema-model.js';
import { ConstraintViolation } from '../store/store-errors.js';

/** A unique violation of a write as the client's 409; any other error as it is. */
export function writeError(resource: ResourceModel, error: unknown): unknown {
  if (error instanceof ConstraintViolation && error.kind === 'unique') {
    const columns = error.columns.length > 0 ? error.columns : ['(unknown)'];
    return new UniqueConflictError(`Another ${resource.singular} already has this ${columns.join(', ')}.`, {
      errors: columns.map((c) => ({ pointer: `/${c}`, detail: `is already used by another ${resource.singular}` })),
      cause: error,
    });
  }
  return error;
}
