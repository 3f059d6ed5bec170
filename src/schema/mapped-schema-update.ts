import { isMap, isScalar, parseDocument, type Document, type Pair, type YAMLMap } from 'yaml';
import type { CatalogSchema } from './catalog-schema.js';
import { mappedSchemaDocument } from './mapped-schema-text.js';

/**
 * `restgraph init --from <database-url> --update schema.yaml`: the edited file, with what the
 * database has and the file lacks added (tables as resources, columns as fields, foreign keys as
 * relations, each with its provenance comment), and everything else kept as it is written — access
 * rules, descriptions, renamed resources and fields, comments. Tables and columns are matched by
 * `table` and `column` (else by name), so a renamed resource or field is recognised. Nothing is
 * removed: what the file names and the database lacks is told, for the user to remove.
 */
export interface MappedSchemaUpdate {
  text: string;
  /** What was added, in words (`resource payment`, `field film.rating`). */
  added: string[];
  /** What the file names and the database lacks. */
  missing: string[];
}

export function updateMappedSchemaText(edited: string, schema: CatalogSchema): MappedSchemaUpdate {
  const document = parseDocument(edited, { keepSourceTokens: false });
  if (document.errors.length > 0) throw new Error(document.errors[0]?.message ?? 'not YAML');
  const fresh = mappedSchemaDocument(schema);
  const added: string[] = [];
  const missing: string[] = [];
  const resources = document.get('resources', true);
  const freshResources = fresh.get('resources', true);
  if (!isMap(resources) || !isMap(freshResources)) throw new Error('the file has no resources');

  const byTable = new Map<string, Pair>();
  for (const pair of resources.items) byTable.set(tableOf(pair), pair);
  const seenTables = new Set<string>();
  for (const freshPair of freshResources.items) {
    const table = tableOf(freshPair);
    seenTables.add(table);
    const pair = byTable.get(table);
    if (pair === undefined) {
      if (resources.has(keyOf(freshPair))) {
        missing.push(`table ${table}: the file has a resource named ${keyOf(freshPair)} for another table; add it by hand`);
        continue;
      }
      resources.items.push(freshPair);
      added.push(`resource ${keyOf(freshPair)}`);
      continue;
    }
    const name = keyOf(pair);
    mergeFields(document, name, mapAt(pair, 'fields'), mapAt(freshPair, 'fields'), added, missing);
    mergeRelations(document, name, mapAt(pair, 'relations'), mapAt(freshPair, 'relations'), added);
  }
  for (const [table, pair] of byTable) {
    if (!seenTables.has(table)) missing.push(`resource ${keyOf(pair)}: the database has no table or view ${table}`);
  }
  return { text: document.toString({ lineWidth: 0 }), added, missing };
}

function mergeFields(document: Document, resource: string, fields: YAMLMap | undefined, freshFields: YAMLMap | undefined, added: string[], missing: string[]): void {
  if (freshFields === undefined) return;
  const target = fields ?? ensureMap(document, ['resources', resource, 'fields']);
  const byColumn = new Map(target.items.map((pair) => [columnOf(pair), pair]));
  const freshColumns = new Set(freshFields.items.map(columnOf));
  for (const freshPair of freshFields.items) {
    if (byColumn.has(columnOf(freshPair)) || target.has(keyOf(freshPair))) continue;
    target.items.push(freshPair);
    added.push(`field ${resource}.${keyOf(freshPair)}`);
  }
  for (const [column, pair] of byColumn) {
    if (!freshColumns.has(column)) missing.push(`field ${resource}.${keyOf(pair)}: the table has no column ${column}`);
  }
}

function mergeRelations(document: Document, resource: string, relations: YAMLMap | undefined, freshRelations: YAMLMap | undefined, added: string[]): void {
  if (freshRelations === undefined) return;
  const target = relations ?? ensureMap(document, ['resources', resource, 'relations']);
  const shapes = new Set(target.items.map(relationShape));
  for (const freshPair of freshRelations.items) {
    if (shapes.has(relationShape(freshPair)) || target.has(keyOf(freshPair))) continue;
    target.items.push(freshPair);
    added.push(`relation ${resource}.${keyOf(freshPair)}`);
  }
}

function keyOf(pair: Pair): string {
  return isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

function mapAt(pair: Pair, key: string): YAMLMap | undefined {
  const value = isMap(pair.value) ? pair.value.get(key, true) : undefined;
  return isMap(value) ? value : undefined;
}

function stringAt(pair: Pair, key: string): string | undefined {
  const value = isMap(pair.value) ? pair.value.get(key) : undefined;
  return typeof value === 'string' ? value : undefined;
}

function tableOf(pair: Pair): string {
  return stringAt(pair, 'table') ?? keyOf(pair);
}

function columnOf(pair: Pair): string {
  return stringAt(pair, 'column') ?? keyOf(pair);
}

/** What a relation joins, whatever it is named: kind, target and foreign key. */
function relationShape(pair: Pair): string {
  const value: unknown = isMap(pair.value) ? pair.value.toJSON() : undefined;
  const relation = (value ?? {}) as { hasMany?: string; belongsTo?: string; foreignKey?: unknown };
  return JSON.stringify([relation.hasMany ?? '', relation.belongsTo ?? '', relation.foreignKey]);
}

function ensureMap(document: Document, path: string[]): YAMLMap {
  document.setIn(path, document.createNode({}));
  const map = document.getIn(path, true);
  if (!isMap(map)) throw new Error(`cannot make ${path.join('.')}`);
  return map;
}
