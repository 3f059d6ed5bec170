import { parseSchemaText } from '../../src/schema/load-schema.js';
import type { SchemaModel } from '../../src/schema/schema-model.js';

/**
 * A schema for filter expressions: users with a field of every type (each may be empty), their
 * posts (belongsTo author, hasMany posts), and notes readable only by their owner.
 */
export const FILTER_SCHEMA_TEXT = `
resources:
  users:
    access: { read: public, write: authenticated }
    fields:
      name: { type: string, index: true }
      email: { type: string, index: true }
      age: { type: integer }
      score: { type: number }
      active: { type: boolean }
      born: { type: date }
      seen: { type: datetime }
      role: { type: enum, values: [admin, editor, reader] }
      meta: { type: json }
    relations:
      posts: { hasMany: posts, foreignKey: authorId }
      notes: { hasMany: notes, foreignKey: userId }
      secrets: { hasMany: secrets, foreignKey: userId }
  posts:
    access: { read: public, write: authenticated }
    fields:
      title: { type: string }
      views: { type: integer }
      published: { type: boolean }
      authorId: { type: integer, references: users, onDelete: cascade }
    relations:
      author: { belongsTo: users, foreignKey: authorId }
  notes:
    access: { read: authenticated, write: authenticated }
    owner: ownerId
    fields:
      text: { type: string }
      ownerId: { type: string }
      userId: { type: integer, references: users }
    relations:
      user: { belongsTo: users, foreignKey: userId }
  secrets:
    access: { read: [secrets:read], write: [secrets:write] }
    fields:
      code: { type: string }
      userId: { type: integer, references: users }
`;

export function filterSchema(): SchemaModel {
  return parseSchemaText(FILTER_SCHEMA_TEXT, 'filter-schema.yaml');
}
