import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLInputFieldConfigMap,
} from 'graphql';
import { OPERATORS_BY_TYPE } from '../core/list-query.js';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import { BigIntScalar, DateScalar, DateTimeScalar, DecimalScalar, JsonScalar, SafeIntScalar } from './scalars.js';
import { OPERATOR_DESCRIPTIONS, pascal } from './schema-parts.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** The GraphQL types of fields' values and of their `filter:` inputs, each made once per schema. */
export class FieldTypes {
  readonly #enums = new Map<string, GraphQLEnumType>();
  readonly #filterInputs = new Map<string, GraphQLInputObjectType>();

  #enumOf(resource: ResourceModel, field: FieldModel): GraphQLEnumType | undefined {
    const values = field.values ?? [];
    // Enum values that are not GraphQL names (`in-progress`) stay strings, checked by the core.
    if (values.length === 0 || !values.every((v) => NAME.test(v) && !['true', 'false', 'null'].includes(v))) return undefined;
    const name = `${resource.typeName}${pascal(field.name)}`;
    let type = this.#enums.get(name);
    if (type === undefined) {
      type = new GraphQLEnumType({ name, values: Object.fromEntries(values.map((v) => [v, { value: v }])) });
      this.#enums.set(name, type);
    }
    return type;
  }

  /** The GraphQL type of a field's value: ids and references are IDs, enums GraphQL enums where their values are names. */
  scalarOf(resource: ResourceModel, field: FieldModel): GraphQLScalarType | GraphQLEnumType {
    if (field.name === 'id' || field.references !== undefined) return GraphQLID;
    switch (field.type) {
      case 'string':
      case 'time':
        return GraphQLString;
      case 'decimal':
        return DecimalScalar;
      case 'integer':
        if (field.format === 'int64') return BigIntScalar;
        return (field.min ?? -Infinity) >= INT32_MIN && (field.max ?? Infinity) <= INT32_MAX ? GraphQLInt : SafeIntScalar;
      case 'number':
        return GraphQLFloat;
      case 'boolean':
        return GraphQLBoolean;
      case 'datetime':
        return DateTimeScalar;
      case 'date':
        return DateScalar;
      case 'enum':
        return this.#enumOf(resource, field) ?? GraphQLString;
      case 'json':
      case 'file':
        return JsonScalar;
    }
  }

  /** The `filter:` input of a field: its scalar's operators (`<Scalar>Filter`, one per scalar). */
  filterInputOf(resource: ResourceModel, field: FieldModel): GraphQLInputObjectType {
    const scalar = this.scalarOf(resource, field);
    const name = `${scalar.name}Filter`;
    let input = this.#filterInputs.get(name);
    if (input === undefined) {
      // One input type per scalar, so its operators follow the scalar (an enum kept as a String
      // takes the string operators; the core refuses those that do not apply to enums).
      const operators =
        scalar === GraphQLID ? OPERATORS_BY_TYPE.integer : scalar === GraphQLString ? OPERATORS_BY_TYPE.string : OPERATORS_BY_TYPE[field.type];
      const fields: GraphQLInputFieldConfigMap = {};
      for (const op of operators) {
        fields[op] =
          op === 'isNull'
            ? { type: GraphQLBoolean, description: 'true: only rows where the field is null; false: only rows where it is not.' }
            : op === 'in'
              ? { type: new GraphQLList(new GraphQLNonNull(scalar)), description: 'Any of these values.' }
              : { type: scalar, description: OPERATOR_DESCRIPTIONS[op] };
      }
      input = new GraphQLInputObjectType({ name, description: `Conditions on ${withIndefiniteArticle(scalar.name)} field; all must hold.`, fields });
      this.#filterInputs.set(name, input);
    }
    return input;
  }
}
