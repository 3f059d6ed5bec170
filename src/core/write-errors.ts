import { ExclusionConflictError, ReferenceConflictError, RestgraphError, UniqueConflictError, ValidationError, type ErrorDetail } from '../errors.js';
import type { ResourceModel } from '../schema/schema-model.js';
import type { SqlDatabase } from '../store/sql-database.js';
import { ConstraintViolation, type ConstraintDescription } from '../store/store-errors.js';

/**
 * A constraint violation of a write as the client's error, naming fields and constraints, never
 * row values (docs/errors.md, "Constraints of the database"):
 * - unique → 409 unique-conflict; exclusion → 409 exclusion-conflict;
 * - NOT NULL, CHECK, a reference to no row, a trigger's refusal → 422 validation-failed;
 * - rows that still refer to a row being deleted (RESTRICT, NO ACTION) → 409 reference-conflict.
 * Any other error is returned as it is.
 *
 * `deleting`: the id of the row the write deletes (a delete), for the foreign keys that refuse it.
 */
export async function writeError(db: SqlDatabase, resource: ResourceModel, error: unknown, deleting?: number | string): Promise<unknown> {
  if (!(error instanceof ConstraintViolation)) return error;
  // A unique field the schema declares (or the id): said as always, without a look at the catalog.
  if (error.kind === 'unique' && declaredUnique(resource, error.columns)) return uniqueFieldConflict(resource, error);
  let violation = error;
  try {
    violation = await db.describeViolation(error, resource.mapping?.table ?? resource.name, deleting !== undefined);
  } catch {
    // The catalog could not be read: the error's own facts say less, but enough.
  }
  return clientError(resource, violation, deleting);
}

/** A violation as one line of an import's rejections: each problem as `/field: detail (constraint)`, or the sentence. */
export async function refusalReason(db: SqlDatabase, resource: ResourceModel, violation: ConstraintViolation): Promise<string> {
  const error = await writeError(db, resource, violation);
  if (!(error instanceof RestgraphError)) return violation.message;
  const problems = (error.errors ?? []).map((e) => `${e.pointer === undefined ? '' : `${e.pointer}: `}${e.detail}${e.constraint === undefined ? '' : ` (${e.constraint})`}`);
  return problems.length > 0 ? problems.join('; ') : error.message;
}

function declaredUnique(resource: ResourceModel, columns: readonly string[]): boolean {
  if (columns.length !== 1) return false;
  const name = fieldOf(resource, columns[0] ?? '');
  return name === 'id' || resource.fields.get(name)?.unique === true;
}

function uniqueFieldConflict(resource: ResourceModel, error: ConstraintViolation): UniqueConflictError {
  const names = error.columns.map((c) => fieldOf(resource, c));
  return new UniqueConflictError(`Another ${resource.singular} already has this ${names.join(', ')}.`, {
    errors: names.map((c) => ({ pointer: `/${c}`, detail: `is already used by another ${resource.singular}` })),
    cause: error,
  });
}

/** The field a column of the resource's table holds (a mapped table's column may be named otherwise). */
function fieldOf(resource: ResourceModel, column: string): string {
  if (resource.mapping === undefined) return column;
  for (const [field, mapped] of resource.mapping.columns) if (mapped === column) return field;
  return column;
}

/** Problems at the fields of these columns of the resource's table (a column that is no field: named, without a pointer). */
function atFields(resource: ResourceModel, columns: readonly string[], detail: (field: string, others: string[]) => string, constraint: string | undefined): ErrorDetail[] {
  const names = columns.map((c) => fieldOf(resource, c));
  return names.map((name) => ({
    ...(resource.fields.has(name) ? { pointer: `/${name}` } : {}),
    detail: detail(name, names.filter((n) => n !== name)),
    ...(constraint === undefined ? {} : { constraint }),
  }));
}

/** Longest trigger message shown; a longer one is cut. */
const MAX_MESSAGE = 1000;

function clientError(resource: ResourceModel, violation: ConstraintViolation, deleting: number | string | undefined): Error {
  const { singular } = resource;
  const cause = violation;
  const [first] = violation.facts.described ?? [];
  // The catalog's word, where it spoke: SQLite's name of an unnamed CHECK is no name.
  const name = first === undefined ? violation.facts.constraint : first.name;
  const columns = violation.columns.length > 0 ? violation.columns : (first?.columns ?? []);
  switch (violation.kind) {
    case 'unique': {
      const fields = columns.map((c) => fieldOf(resource, c));
      const errors = atFields(resource, columns, (_, others) => `is already used by another ${singular}${others.length > 0 ? ` together with ${others.join(', ')}` : ''}`, name);
      if (errors.length === 0) errors.push({ detail: `another ${singular} already has the same values${name === undefined ? '' : ` for ${name}`}`, ...(name === undefined ? {} : { constraint: name }) });
      return new UniqueConflictError(`Another ${singular} already has this ${fields.length > 0 ? fields.join(' and ') : 'value'}.`, { errors, cause });
    }
    case 'exclusion': {
      const what = `conflicts with another ${singular}${name === undefined ? '' : ` (exclusion constraint ${name})`}`;
      const errors = atFields(resource, columns, () => what, name);
      return new ExclusionConflictError(`The ${singular} ${what}.`, { ...(errors.length > 0 ? { errors } : {}), cause });
    }
    case 'notNull': {
      const fields = columns.map((c) => fieldOf(resource, c));
      return new ValidationError(`The database requires a value for ${fields.join(', ') || 'a column'}.`, {
        errors: atFields(resource, columns, () => 'cannot be null (the database requires a value)', undefined),
        cause,
      });
    }
    case 'check': {
      const expression = first?.expression ?? violation.facts.expression;
      const what = `breaks check constraint${name === undefined ? '' : ` ${name}`}${expression === undefined ? '' : `: ${expression}`}`;
      const errors = atFields(resource, columns, () => what, name);
      if (errors.length === 0) errors.push({ detail: what, ...(name === undefined ? {} : { constraint: name }) });
      return new ValidationError(`The ${singular} breaks the database's check constraint${name === undefined ? '' : ` ${name}`}.`, { errors, cause });
    }
    case 'foreignKey':
      return violation.facts.side === 'referenced' ? stillReferenced(resource, violation, deleting) : missingReference(resource, violation);
    case 'trigger': {
      const message = (violation.facts.message ?? '').slice(0, MAX_MESSAGE);
      return new ValidationError(`The database refused the row${message === '' ? '.' : `: ${message}`}`, { cause });
    }
  }
}

/** A row written refers to no row: through which foreign key, when the database says (PostgreSQL), or which may be the one (SQLite). */
function missingReference(resource: ResourceModel, violation: ConstraintViolation): ValidationError {
  // References the schema declares were checked before the write: they are not the one.
  const all = violation.facts.described ?? [];
  const undeclared = all.filter((d) => d.columns.some((c) => resource.fields.get(fieldOf(resource, c))?.references === undefined));
  const keys = undeclared.length > 0 ? undeclared : all;
  const sure = keys.length === 1;
  const errors = keys.flatMap((key) =>
    atFields(
      resource,
      key.columns,
      (_, others) => `${sure ? 'refers' : 'may refer'}${others.length > 0 ? `, with ${others.join(', ')},` : ''} to a row of ${key.referencedTable ?? 'another table'} that does not exist${sure ? '' : ' (the database does not say which reference failed)'}`,
      key.name,
    ),
  );
  return new ValidationError('A referenced row does not exist.', { ...(errors.length > 0 ? { errors } : {}), cause: violation });
}

/** Rows of other tables still refer to the row a delete would take away (a foreign key with RESTRICT or NO ACTION). */
function stillReferenced(resource: ResourceModel, violation: ConstraintViolation, deleting: number | string | undefined): ReferenceConflictError {
  const keys: readonly ConstraintDescription[] = violation.facts.described ?? [];
  const sure = keys.length === 1;
  const which = keys.map((k) => `${k.table ?? 'another table'} (${k.columns.join(', ')})`);
  const row = `${resource.singular.charAt(0).toUpperCase()}${resource.singular.slice(1)}${deleting === undefined ? '' : ` ${deleting}`}`;
  const by = keys.length === 0 ? 'rows of another table' : `${sure ? '' : 'one of '}${which.join(', ')}`;
  const detail = `${row} is still referenced by ${by}; ${deleting === undefined ? 'change or delete' : 'delete'} those first.`;
  return new ReferenceConflictError(detail, {
    errors: keys.map((k) => ({
      detail: `rows of ${k.table ?? 'another table'} ${sure ? 'refer' : 'may refer'} to it through ${k.columns.join(', ')}`,
      ...(k.name === undefined ? {} : { constraint: k.name }),
    })),
    cause: violation,
  });
}
