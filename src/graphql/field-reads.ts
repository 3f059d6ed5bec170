import type { GraphQLFieldResolver } from 'graphql';
import { hiddenFieldError } from '../core/access-rules/field-reads.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { GraphqlContext } from './graphql-context.js';

/**
 * Field access in GraphQL (docs/auth.md#field-access): the core hands over records without the
 * fields the principal may not read on them; such a field answers null with a `forbidden` error at
 * its path, so a restricted field is nullable whatever the schema says of it.
 */

/** The value of a restricted field, or, when the core left it out of the record, a `forbidden` error (null at its path). */
export function restrictedFieldResolver(resource: ResourceModel, field: FieldModel): GraphQLFieldResolver<StoredRecord, GraphqlContext> {
  const name = field.name;
  return (record) => {
    if (name in record) return record[name];
    throw hiddenFieldError(resource, name);
  };
}
