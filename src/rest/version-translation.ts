import type { RawQuery } from '../core/list-query.js';
import { ForbiddenError, InvalidQueryError, RestgraphError, ValidationError, type ErrorDetail } from '../errors.js';
import { resourceNamed, type FieldModel, type RelationModel, type SchemaModel } from '../schema/schema-model.js';
import { viewOf, type ResourceView } from '../schema/version-view.js';
import type { StoredRecord } from '../store/list-spec.js';

/** Errors raised in a version's own names: their locations need no renaming. */
const inApiNames = new WeakSet<Error>();

// A filter expression names fields by their current (storage) names in every version.
const LIST_PARAMETERS = new Set(['limit', 'offset', 'after', 'count', 'filter']);
const FILTER_KEY = /^([A-Za-z_][A-Za-z0-9_]*)(\[[A-Za-z]*\])?$/;

/**
 * Translates between one API version's representation of a resource and storage (which holds
 * every field under its latest name): request bodies and query parameters in, records out, error
 * locations back. For a version that shows the resource as stored it does nothing at all.
 */
export class VersionTranslator {
  readonly view: ResourceView;
  readonly #schema: SchemaModel;
  readonly #relatedTranslators = new Map<string, VersionTranslator>();

  readonly #fields: readonly FieldModel[];

  constructor(schema: SchemaModel, view: ResourceView) {
    this.#schema = schema;
    this.view = view;
    this.#fields = view.fields.map((f) => f.field);
  }

  get identity(): boolean {
    return this.view.identity;
  }

  /**
   * A name of the resource (a field's current name, or a relation) that this version does not use:
   * unknown to its clients. (Other unknown names go on to the parser or validator, which name them.)
   */
  #unknown(name: string): boolean {
    if (this.view.resource.fields.has(name)) return !this.view.byApiName.has(name);
    return this.view.resource.relations.has(name) && !this.view.relations.has(name);
  }

  #toStorage(name: string): string {
    return this.view.byApiName.get(name)?.field.name ?? name;
  }

  /** The stored field clients of this version call `name`; undefined when the version shows none of that name. */
  field(name: string): FieldModel | undefined {
    return this.view.byApiName.get(name)?.field;
  }

  /** The stored fields this version shows. */
  get fields(): readonly FieldModel[] {
    return this.#fields;
  }

  /** The relations this version shows, by name (the same in every version that has them). */
  get relations(): ReadonlyMap<string, RelationModel> {
    return this.view.relations;
  }

  /**
   * Why a query refuses `name`, when it names a stored field or relation this version does not show
   * (another version's): "nickname is not a field of users in v2". Undefined otherwise: names
   * storage does not have either are the parser's to judge, in its own language.
   */
  notInVersion(name: string): string | undefined {
    return this.#unknown(name) ? `${name} is not a field of ${this.view.resource.name} in ${this.view.version.name}` : undefined;
  }

  /** List (or item) query parameters in this version's names → storage names. @throws InvalidQueryError */
  query(raw: RawQuery): RawQuery {
    if (this.identity) return raw;
    const problems: ErrorDetail[] = [];
    const out: RawQuery = {};
    const names = (parameter: string, value: string, prefix = false): string =>
      value
        .split(',')
        .map((part) => {
          const term = part.trim();
          const sign = prefix && /^[-+]/.test(term) ? term.charAt(0) : '';
          const name = term.slice(sign.length);
          const refused = this.notInVersion(name);
          if (refused !== undefined) problems.push({ parameter, detail: quoted(refused) });
          return sign + this.#toStorage(name);
        })
        .join(',');
    for (const [key, value] of Object.entries(raw)) {
      if (value === undefined || Array.isArray(value) || LIST_PARAMETERS.has(key)) out[key] = value;
      else if (key === 'sort') out[key] = names('sort', value, true);
      else if (key === 'fields' || key === 'include') out[key] = names(key, value);
      else {
        const match = FILTER_KEY.exec(key);
        const name = match?.[1];
        if (name === undefined) out[key] = value;
        else if (this.#unknown(name)) problems.push({ parameter: key, detail: unknownParameter(this.notInVersion(name) ?? '') });
        else out[`${this.#toStorage(name)}${match?.[2] ?? ''}`] = value;
      }
    }
    if (problems.length > 0) throw new InvalidQueryError(problems.map((p) => `${p.parameter ?? ''}: ${p.detail}`).join('; '), { errors: problems });
    return out;
  }

  /**
   * A request body in this version's names → storage names.
   * @param check validates a body in storage names as the write would (throwing ValidationError),
   *   so that a body with names this version lacks is answered with all of its problems at once.
   * @throws ValidationError naming fields this version lacks, and whatever else `check` finds
   */
  body(body: unknown, check: (translated: Record<string, unknown>) => void): unknown {
    if (this.identity || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const out: Record<string, unknown> = {};
    const problems: ErrorDetail[] = [];
    for (const [key, value] of Object.entries(body)) {
      if (this.#unknown(key)) problems.push({ pointer: `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, detail: `is not a field of ${this.view.resource.name} in ${this.view.version.name}` });
      else out[this.#toStorage(key)] = value;
    }
    if (problems.length > 0) {
      try {
        check(out);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        problems.push(...((this.error(error) as ValidationError).errors ?? []));
      }
      const error = new ValidationError(`The ${this.view.resource.singular} is not valid: ${problems.map((p) => `${p.pointer ?? ''} ${p.detail}`).join('; ')}`, { errors: problems });
      inApiNames.add(error);
      throw error;
    }
    return out;
  }

  /** A stored record (with embedded relations) → this version's representation. */
  record(record: StoredRecord, include: readonly string[] = []): StoredRecord {
    if (this.identity && include.length === 0) return record;
    const out: StoredRecord = {};
    for (const [key, value] of Object.entries(record)) {
      const apiName = this.view.apiNameOf.get(key);
      if (apiName !== undefined) out[apiName] = value;
      else {
        const relation = this.view.relations.get(key);
        if (relation === undefined) continue;
        const target = this.#related(relation.target);
        out[key] = Array.isArray(value) ? value.map((v) => target.record(v as StoredRecord)) : value === null || value === undefined ? value : target.record(value as StoredRecord);
      }
    }
    return out;
  }

  /** The translator of a related resource in the same version (embedded rows), made once. */
  #related(resource: string): VersionTranslator {
    let translator = this.#relatedTranslators.get(resource);
    if (translator === undefined) {
      translator = new VersionTranslator(this.#schema, viewOf(this.#schema, resourceNamed(this.#schema, resource), this.view.version.name));
      this.#relatedTranslators.set(resource, translator);
    }
    return translator;
  }

  /** An error whose locations name storage fields → this version's names. */
  error(error: unknown): unknown {
    if (this.identity || !(error instanceof RestgraphError) || error.errors === undefined || inApiNames.has(error)) return error;
    const rename = (detail: ErrorDetail): ErrorDetail => {
      if (detail.pointer === undefined) return detail;
      const [, first = '', rest = ''] = /^\/([^/]*)(.*)$/.exec(detail.pointer) ?? [];
      const apiName = this.view.apiNameOf.get(first);
      return apiName === undefined ? detail : { ...detail, pointer: `/${apiName}${rest}` };
    };
    if (error instanceof ValidationError) {
      const errors = error.errors.map(rename);
      return new ValidationError(`The ${this.view.resource.singular} is not valid: ${errors.map((p) => `${p.pointer ?? ''} ${p.detail}`).join('; ')}`, { errors });
    }
    // A field a preset fills or the principal may not write (core/access-rules/write-access.ts).
    if (error instanceof ForbiddenError && error.headers === undefined) return new ForbiddenError(error.message, [], error.errors.map(rename));
    return error;
  }
}

/** A refused name as the detail of a name-list parameter (`sort`, `fields`, `_sort`, `_where`): `"nickname" is not a field of users in v2`. */
export function quoted(refused: string): string {
  return refused.replace(/^(\S+)/, '"$1"');
}

/** A refused name as the detail of a filter parameter: `is not a known query parameter (nickname is not a field of users in v2)`. */
export function unknownParameter(refused: string): string {
  return `is not a known query parameter (${refused})`;
}
