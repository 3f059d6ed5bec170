import { Document, isMap, isScalar, isSeq, visit } from 'yaml';
import type { CatalogSchema } from './catalog-schema.js';

/**
 * The text of a schema file that maps an existing database, as `restgraph init --from` writes it:
 * a header saying where it came from and how to serve it, and above each resource and field a
 * comment saying which table or column it maps and what the database says of it
 * (`# from public.rental.customer_id, integer, NOT NULL, FK → customer`).
 */
export function mappedSchemaText(schema: CatalogSchema, header: readonly string[]): string {
  const document = mappedSchemaDocument(schema);
  document.commentBefore = header.map((line) => ` ${line}`).join('\n');
  return document.toString({ lineWidth: 0 });
}

/** The schema's YAML document, with the comments on its resources and fields (for a new file, or to merge into an edited one). */
export function mappedSchemaDocument(schema: CatalogSchema): Document {
  const document = new Document(schema.definition, { aliasDuplicateObjects: false });
  const resources = document.get('resources', true);
  if (isMap(resources)) {
    for (const pair of resources.items) {
      if (!isScalar(pair.key)) continue;
      const name = String(pair.key.value);
      const note = schema.resourceNotes.get(name);
      if (note !== undefined) pair.key.commentBefore = ` ${note}`;
      if (pair !== resources.items[0]) pair.key.spaceBefore = true;
      const fields = document.getIn(['resources', name, 'fields'], true);
      if (!isMap(fields)) continue;
      for (const field of fields.items) {
        if (!isScalar(field.key)) continue;
        const fieldNote = schema.fieldNotes.get(`${name}.${String(field.key.value)}`);
        if (fieldNote !== undefined) field.key.commentBefore = ` ${fieldNote}`;
      }
    }
  }
  // Short lists (keys, enum values, composite foreign keys) on one line: [actor_id, film_id].
  visit(document, {
    Seq(_key, node) {
      if (isSeq(node) && node.items.every((item) => isScalar(item))) node.flow = true;
    },
  });
  return document;
}
