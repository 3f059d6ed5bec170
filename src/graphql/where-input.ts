import {
  GraphQLBoolean,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLString,
  type GraphQLEnumType,
  type GraphQLInputFieldConfigMap,
  type GraphQLScalarType,
} from 'graphql';
import { filterBoundsProblem } from '../core/filter-expression/filter-bounds.js';
import type { FilterLimits, FilterResources } from '../core/filter-expression/filter-parser.js';
import { OPERATORS_BY_TYPE, parseFilterValue } from '../core/filter-values.js';
import { InvalidQueryError } from '../errors.js';
import type { FieldModel, RelationModel, ResourceModel } from '../schema/schema-model.js';
import type { FilterCondition, QueryOperator } from '../store/list-spec.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';

/**
 * GraphQL's typed `where:` input (`PostWhere { _and, _or, _not, title: StringWhere, author:
 * UserWhere, comments: CommentRelationWhere { _some, _none } }`): its input types, and its
 * translation into the same checked {@link FilterCondition} tree a filter expression parses to, so
 * both mean the same on every database and in memory (docs/graphql.md#where).
 */

/** A `where:` argument as GraphQL coerces it: plain objects, lists and scalar values. */
export type WhereInput = Readonly<Record<string, unknown>>;

/** The operators of the `…Where` inputs of fields, in the order they are listed. */
const WHERE_OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'notContains', 'startsWith', 'isNull'] as const;
type WhereOperator = (typeof WHERE_OPERATORS)[number];

const WHERE_DESCRIPTIONS: Readonly<Record<WhereOperator, string>> = {
  eq: 'Equal to (null: the field is null).',
  ne: 'Not equal to (also true when the field is null; null: the field is not null).',
  lt: 'Less than.',
  lte: 'Less than or equal to.',
  gt: 'Greater than.',
  gte: 'Greater than or equal to.',
  in: 'Any of these values (an empty list matches nothing).',
  contains: 'Holds this text anywhere, ignoring case for all of Unicode (filter expressions\' ~).',
  notContains: 'Is set and does not hold this text anywhere, ignoring case (filter expressions\' !~).',
  startsWith: 'Starts with this text, case-sensitive (filter expressions\' ^=).',
  isNull: 'true: only rows where the field is null; false: only rows where it is not.',
};

/** The query operator a where operator checks against the field's type. */
const baseOperator = (op: WhereOperator): QueryOperator => (op === 'notContains' ? 'contains' : op);

/** A condition every row matches (an empty `all`): what `author: {}` asks of the related row. */
const EVERY: FilterCondition = Object.freeze({ field: '', op: 'all', value: Object.freeze([]) });
/** A condition no row matches. */
const NO_ROW: FilterCondition = Object.freeze({ field: '', op: 'none', value: null });

/** What the where input types are built from: the resources as GraphQL serves them. */
export interface WhereSchema {
  /** The fields GraphQL shows of a resource. */
  fieldsOf(resource: ResourceModel): readonly FieldModel[];
  /** The relations GraphQL shows of a resource. */
  relationsOf(resource: ResourceModel): Iterable<RelationModel>;
  /** A relation's target resource. */
  targetOf(relation: RelationModel): ResourceModel;
  /** The GraphQL type of a field's values. */
  scalarOf(resource: ResourceModel, field: FieldModel): GraphQLScalarType | GraphQLEnumType;
}

/**
 * The `where:` input types: `<Type>Where` per resource, `<Scalar>Where` per scalar or enum of its
 * fields (their operators following the field type's), `<Type>RelationWhere` for hasMany relations
 * leading to a resource. Built lazily (relations make the types refer to each other).
 */
export class WhereTypes {
  readonly #schema: WhereSchema;
  readonly #resources = new Map<string, GraphQLInputObjectType>();
  readonly #scalars = new Map<string, GraphQLInputObjectType>();
  readonly #relations = new Map<string, GraphQLInputObjectType>();

  constructor(schema: WhereSchema) {
    this.#schema = schema;
  }

  /** `<Type>Where` of a resource. */
  of(resource: ResourceModel): GraphQLInputObjectType {
    let input = this.#resources.get(resource.name);
    if (input === undefined) {
      const self: GraphQLInputObjectType = new GraphQLInputObjectType({
        name: `${resource.typeName}Where`,
        description: `Conditions on ${resource.name}: every condition given must hold ({} matches every row).`,
        fields: () => {
          const fields: GraphQLInputFieldConfigMap = {
            _and: { type: new GraphQLList(new GraphQLNonNull(self)), description: 'Every one of these must hold.' },
            _or: { type: new GraphQLList(new GraphQLNonNull(self)), description: 'At least one of these must hold (an empty list matches nothing).' },
            _not: { type: self, description: 'Matches exactly the rows this does not match.' },
          };
          for (const field of this.#schema.fieldsOf(resource)) fields[field.name] = { type: this.#scalarInput(resource, field) };
          for (const relation of this.#schema.relationsOf(resource)) {
            const target = this.#schema.targetOf(relation);
            fields[relation.name] =
              relation.kind === 'belongsTo'
                ? { type: this.of(target), description: `The ${target.singular} it belongs to is set, visible, and matches this.` }
                : { type: this.#relationInput(target), description: `Conditions on its ${relation.name}.` };
          }
          return fields;
        },
      });
      input = self;
      this.#resources.set(resource.name, input);
    }
    return input;
  }

  #scalarInput(resource: ResourceModel, field: FieldModel): GraphQLInputObjectType {
    const scalar = this.#schema.scalarOf(resource, field);
    const name = `${scalar.name}Where`;
    let input = this.#scalars.get(name);
    if (input === undefined) {
      // One input per scalar: an enum kept as a String takes the string operators, and the
      // translation refuses those its type does not take.
      const allowed = scalar === GraphQLID ? OPERATORS_BY_TYPE.integer : scalar === GraphQLString ? OPERATORS_BY_TYPE.string : OPERATORS_BY_TYPE[field.type];
      const fields: GraphQLInputFieldConfigMap = {};
      for (const op of WHERE_OPERATORS) {
        if (!allowed.includes(baseOperator(op))) continue;
        fields[op] =
          op === 'isNull'
            ? { type: GraphQLBoolean, description: WHERE_DESCRIPTIONS[op] }
            : op === 'in'
              ? { type: new GraphQLList(new GraphQLNonNull(scalar)), description: WHERE_DESCRIPTIONS[op] }
              : { type: op === 'contains' || op === 'notContains' || op === 'startsWith' ? GraphQLString : scalar, description: WHERE_DESCRIPTIONS[op] };
      }
      input = new GraphQLInputObjectType({ name, description: `Conditions on ${withIndefiniteArticle(scalar.name)} field; all must hold.`, fields });
      this.#scalars.set(name, input);
    }
    return input;
  }

  #relationInput(target: ResourceModel): GraphQLInputObjectType {
    let input = this.#relations.get(target.name);
    if (input === undefined) {
      input = new GraphQLInputObjectType({
        name: `${target.typeName}RelationWhere`,
        description: `Conditions on a list of ${target.name} (among those visible to the caller); both must hold when both are given.`,
        fields: () => ({
          _some: { type: this.of(target), description: `At least one of the ${target.name} matches this.` },
          _none: { type: this.of(target), description: `None of the ${target.name} matches this.` },
        }),
      });
      this.#relations.set(target.name, input);
    }
    return input;
  }
}

/** How a where input is read. */
export interface WhereReading {
  /** The resources relation paths lead to, by name. */
  resources: FilterResources;
  limits: FilterLimits;
  /**
   * Why relation paths cannot be followed here (subscriptions: an event carries only its own
   * record); undefined where they can.
   */
  noRelations?: string;
}

/**
 * The checked condition of a `where:` input over `resource`, or undefined when it asks nothing
 * (`where: {}`, or null). Values are read as filter expressions read them (parseFilterValue); the
 * expressions' limits apply (conditions, nesting, relation hops, values in one `in`), the nesting
 * checked as the input is read.
 * @throws InvalidQueryError naming the input's path (`where.author.name.startsWith`)
 */
export function conditionOfWhere(resource: ResourceModel, where: WhereInput | null | undefined, reading: WhereReading, path = 'where'): FilterCondition | undefined {
  if (where === null || where === undefined) return undefined;
  const condition = new WhereReader(reading).read(resource, where, path, 0, 0);
  if (condition === undefined) return undefined;
  const problem = filterBoundsProblem(condition, reading.limits);
  if (problem !== undefined) throw whereError(path, problem);
  return condition;
}

function whereError(path: string, detail: string): InvalidQueryError {
  return new InvalidQueryError(`${path}: ${detail}`, { errors: [{ parameter: path, detail }] });
}

class WhereReader {
  readonly #reading: WhereReading;
  #conditions = 0;

  constructor(reading: WhereReading) {
    this.#reading = reading;
  }

  /** The condition of one `<Type>Where` object; undefined when it asks nothing. */
  read(resource: ResourceModel, where: WhereInput, path: string, depth: number, hops: number): FilterCondition | undefined {
    const parts: FilterCondition[] = [];
    const add = (condition: FilterCondition | undefined): void => {
      if (condition === undefined) return;
      // Nested ands are one and.
      if (condition.op === 'all') parts.push(...(condition.value as FilterCondition[]));
      else parts.push(condition);
    };
    for (const [key, value] of Object.entries(where)) {
      if (value === null || value === undefined) continue;
      const at = `${path}.${key}`;
      if (key === '_and' || key === '_or' || key === '_not') {
        this.#enter(at, depth + 1);
        if (key === '_not') {
          const inner = this.read(resource, value as WhereInput, at, depth + 1, hops);
          add(inner === undefined ? NO_ROW : { field: '', op: 'not', value: inner });
          continue;
        }
        const items = (value as readonly WhereInput[]).map((item, i) => this.read(resource, item, `${at}.${i}`, depth + 1, hops));
        if (key === '_and') items.forEach(add);
        // An `_or` with a member asking nothing matches every row; with no member, none.
        else if (!items.includes(undefined)) add(items.length === 1 ? items[0] : items.length === 0 ? NO_ROW : { field: '', op: 'any', value: items });
        continue;
      }
      const field = resource.fields.get(key);
      if (field !== undefined) {
        for (const [op, given] of Object.entries(value as WhereInput)) add(this.#comparison(field, op as WhereOperator, given, `${at}.${op}`));
        continue;
      }
      const relation = resource.relations.get(key);
      const target = relation === undefined ? undefined : this.#reading.resources.get(relation.target);
      if (relation === undefined || target === undefined) throw whereError(at, `is not a field or relation of ${resource.name}`);
      if (this.#reading.noRelations !== undefined) throw whereError(at, this.#reading.noRelations);
      if (hops + 1 > this.#reading.limits.maxHops) throw whereError(at, `follows relations more than ${this.#reading.limits.maxHops} deep; at most ${this.#reading.limits.maxHops} relations may be followed`);
      this.#enter(at, depth + 1);
      if (relation.kind === 'belongsTo') {
        add({ field: relation.name, op: 'related', value: this.read(target, value as WhereInput, at, depth + 1, hops + 1) ?? EVERY });
        continue;
      }
      for (const [quantifier, inner] of Object.entries(value as WhereInput)) {
        if (inner === null || inner === undefined) continue;
        const condition = this.read(target, inner as WhereInput, `${at}.${quantifier}`, depth + 1, hops + 1) ?? EVERY;
        add({ field: relation.name, op: quantifier === '_none' ? 'noneOf' : 'some', value: condition });
      }
    }
    return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { field: '', op: 'all', value: parts };
  }

  #enter(path: string, depth: number): void {
    const max = this.#reading.limits.maxDepth;
    if (depth > max) throw whereError(path, `nests deeper than ${max} levels; at most ${max} are allowed (each _and, _or, _not and relation opens one)`);
  }

  /** One operator of a field's `…Where` input. */
  #comparison(field: FieldModel, op: WhereOperator, given: unknown, path: string): FilterCondition | undefined {
    if (given === undefined) return undefined;
    const allowed = OPERATORS_BY_TYPE[field.type];
    if (!WHERE_OPERATORS.includes(op) || !allowed.includes(baseOperator(op))) {
      const takes = WHERE_OPERATORS.filter((o) => allowed.includes(baseOperator(o))).join(', ');
      throw whereError(path, `does not apply to ${field.type} fields; ${field.name} takes ${takes}`);
    }
    const limits = this.#reading.limits;
    if ((this.#conditions += op === 'notContains' ? 2 : 1) > limits.maxConditions) {
      throw whereError(path, `is one condition too many; at most ${limits.maxConditions} are allowed`);
    }
    if (op === 'isNull') {
      if (typeof given !== 'boolean') throw whereError(path, 'must be true or false');
      return { field: field.name, op: 'isNull', value: given };
    }
    if (given === null) {
      if (op === 'eq' || op === 'ne') return { field: field.name, op: 'isNull', value: op === 'eq' };
      throw whereError(path, `cannot compare with null; use isNull`);
    }
    if (op === 'in') {
      const values = Array.isArray(given) ? (given as unknown[]) : [given];
      if (values.length > limits.maxInValues) throw whereError(path, `has ${values.length} values; at most ${limits.maxInValues} are allowed`);
      if (values.length === 0) return NO_ROW;
      return { field: field.name, op: 'in', value: values.map((v, i) => this.#value(field, v, `${path}.${i}`)) };
    }
    const value = this.#value(field, given, path);
    if (op === 'contains') return { field: field.name, op: 'containsIgnoringCase', value };
    if (op === 'notContains') {
      // As `!~`: false on a null field, as every comparison but ne is.
      return { field: '', op: 'all', value: [{ field: field.name, op: 'isNull', value: false }, { field: '', op: 'not', value: { field: field.name, op: 'containsIgnoringCase', value } }] };
    }
    return { field: field.name, op, value };
  }

  /** A value as a value of `field`'s type, read as filter expressions read theirs. */
  #value(field: FieldModel, given: unknown, path: string): unknown {
    if (typeof given !== 'string' && typeof given !== 'number' && typeof given !== 'boolean') throw whereError(path, 'must be a single value');
    const parsed = parseFilterValue(field, String(given));
    const shown = JSON.stringify(given);
    if (parsed.problem !== undefined) throw whereError(path, `${shown.length > 40 ? `${shown.slice(0, 37)}...` : shown} ${parsed.problem}`);
    return parsed.value;
  }
}
