import { ReferenceConflictError, UniqueConflictError, ValidationError } from '../errors.js';
import type { ResourceModel } from '../schema/schema-model.js';
import { ConstraintViolation } from '../store/store-errors.js';

/**
 * A unique violation of a write as the client's 409; on a mapped database's table, whose foreign
 * keys and checks are the database's own, their violations too (409, 422); any other error as it is.
 */
export function writeError(resource: ResourceModel, error: unknown): unknown {
  if (error instanceof ConstraintViolation && error.kind === 'unique') {
    const columns = error.columns.length > 0 ? error.columns : ['(unknown)'];
    return new UniqueConflictError(`Another ${resource.singular} already has this ${columns.join(', ')}.`, {
      errors: columns.map((c) => ({ pointer: `/${c}`, detail: `is already used by another ${resource.singular}` })),
      cause: error,
    });
  }
  if (error instanceof ConstraintViolation && resource.mapping !== undefined) return mappedTableError(resource, error);
  return error;
}

function mappedTableError(resource: ResourceModel, error: ConstraintViolation): unknown {
  const columns = error.columns.length > 0 ? ` (${error.columns.join(', ')})` : '';
  if (error.kind === 'foreignKey') {
    return new ReferenceConflictError(`A foreign key of the database refused this change of ${resource.singular}${columns}: it refers to a row that does not exist, or rows still refer to it.`, { cause: error });
  }
  const detail = error.kind === 'notNull' ? 'is required by the database' : 'is refused by a check of the database';
  return new ValidationError(`The database refused this ${resource.singular}${columns}.`, {
    errors: (error.columns.length > 0 ? error.columns : ['']).map((c) => ({ pointer: c === '' ? '' : `/${c}`, detail })),
    cause: error,
  });
}
