import { ReferenceConflictError, ValidationError } from '../errors.js';
import { fieldNamed, resourceNamed, type FieldModel, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import type { NewEvent } from '../store/event-store.js';
import type { RecordStore } from '../store/record-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlExecutor } from '../store/sql-database.js';
import { laterThan } from './later-than.js';
import { changedFrom, eventOf } from './change-events.js';
import { rowVisible, visibleRowFilters } from './filter-access.js';
import type { Principal } from './principal.js';
import type { RecordId } from '../schema/record-key.js';

interface Reference {
  resource: ResourceModel;
  field: FieldModel;
}

/**
 * References between resources, inside a write's transaction: a reference must name an existing
 * row, and deleting a row applies each reference's onDelete rule (restrict, setNull, cascade),
 * emitting the events of the rows it changes or deletes.
 */
export class ReferentialRules {
  readonly #schema: SchemaModel;
  readonly #store: RecordStore;
  /** For each resource, the fields elsewhere that reference it. */
  readonly #referencedBy = new Map<string, Reference[]>();

  constructor(schema: SchemaModel, store: RecordStore) {
    this.#schema = schema;
    this.#store = store;
    for (const resource of schema.resources.values()) {
      for (const field of resource.writableFields) {
        if (field.references === undefined) continue;
        const list = this.#referencedBy.get(field.references) ?? [];
        list.push({ resource, field });
        this.#referencedBy.set(field.references, list);
      }
    }
  }

  /** Whether {@link check} has anything to look up for these values (a reference to a row). */
  needsCheck(resource: ResourceModel, values: StoredRecord): boolean {
    for (const [name, value] of Object.entries(values)) {
      if (typeof value === 'number' && resource.fields.get(name)?.references !== undefined) return true;
    }
    return false;
  }

  /**
   * A row the owner or read rule of its resource hides from `principal` is one it may not refer
   * to, and is answered as a row that does not exist (no answer tells another tenant's ids from
   * free ones); a reference `current` already holds is kept as it is.
   * @throws ValidationError when a reference names no row (that the principal may read).
   */
  async check(tx: SqlExecutor, resource: ResourceModel, values: StoredRecord, principal?: Principal, current?: StoredRecord): Promise<void> {
    const problems = [];
    for (const [name, value] of Object.entries(values)) {
      const field = fieldNamed(resource, name);
      if (field.references === undefined || typeof value !== 'number') continue;
      const target = resourceNamed(this.#schema, field.references);
      const found = await this.#store.existingIds(tx, target, [value], { forShare: true });
      if (!found.has(value) || (current?.[name] !== value && !(await this.#readable(tx, target, value, principal)))) problems.push({ pointer: `/${name}`, detail: `refers to ${target.singular} ${value}, which does not exist` });
    }
    if (problems.length > 0) throw new ValidationError('A referenced row does not exist.', { errors: problems });
  }

  async #readable(tx: SqlExecutor, target: ResourceModel, id: RecordId, principal: Principal | undefined): Promise<boolean> {
    if (principal === undefined || visibleRowFilters(principal, target, 'read').length === 0) return true;
    const row = await this.#store.findById(target, id, tx);
    return row !== undefined && rowVisible(principal, target, row);
  }

  /** Deletes a row and applies the onDelete rules. @throws ReferenceConflictError (restrict) */
  async deleteCascading(tx: SqlExecutor, emit: (event: NewEvent) => void, resource: ResourceModel, id: RecordId, visiting = new Set<string>()): Promise<void> {
    const self = `${resource.name}/${id}`;
    if (visiting.has(self)) return;
    visiting.add(self);
    for (const { resource: child, field } of this.#referencedBy.get(resource.name) ?? []) {
      const rule = field.onDelete ?? 'restrict';
      if (rule === 'restrict') {
        const ids = (await this.#store.idsWhere(tx, child, field.name, id, 2)).filter((c) => !visiting.has(`${child.name}/${c}`));
        if (ids.length > 0) {
          throw new ReferenceConflictError(
            `${capitalize(resource.singular)} ${id} is still referenced by ${child.name} (${field.name}); delete those first.`,
            { errors: [{ detail: `${child.name} ${ids.join(', ')}${ids.length > 1 ? ' and maybe more' : ''} refer to it through ${field.name}` }] },
          );
        }
      } else if (rule === 'setNull') {
        // Each row set to null is an update of its own, with its event; locked first, so its new
        // updatedAt is later than any it had (see later-than.ts).
        const before = await this.#rowsWhere(tx, child, field.name, id);
        await this.#store.updateWhere(tx, child, field.name, id, { [field.name]: null, updatedAt: laterThan(...before.map((row) => row.updatedAt)) });
        for (const old of before) {
          const row = await this.#store.findById(child, old.id as number, tx);
          if (row !== undefined) emit(eventOf('updated', child, row, changedFrom(old, row)));
        }
      } else {
        for (const childId of await this.#store.idsWhere(tx, child, field.name, id)) {
          await this.deleteCascading(tx, emit, child, childId, visiting);
        }
      }
    }
    const row = await this.#store.findById(resource, id, tx);
    if (row !== undefined) emit(eventOf('deleted', resource, row));
    await this.#store.delete(tx, resource, id);
  }

  async #rowsWhere(tx: SqlExecutor, resource: ResourceModel, field: string, key: RecordId): Promise<StoredRecord[]> {
    const rows: StoredRecord[] = [];
    for (const id of await this.#store.idsWhere(tx, resource, field, key)) {
      const row = await this.#store.findById(resource, id, tx, { forUpdate: true });
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
