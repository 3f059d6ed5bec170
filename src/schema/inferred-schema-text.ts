import type { InferredResource, InferredSchema } from './infer-schema.js';
import type { FieldDefinition, RelationDefinition } from './schema-model.js';

/**
 * The schema inferred from a json-server database as a YAML schema file for editing
 * (`restgraph init --from db.json`): the same document {@link InferredSchema} holds, with a
 * comment on each resource and field saying what was inferred and why.
 */

export interface InferredSchemaTextOptions {
  /** The data file, as the user named it. */
  source: string;
  /** Lines for the head comment, after the first (how to serve the file with its data). */
  usage: readonly string[];
}

export function inferredSchemaText(inferred: InferredSchema, options: InferredSchemaTextOptions): string {
  const lines = [
    `# The schema of ${options.source}, as restgraph infers it (restgraph init --from ${options.source}).`,
    ...options.usage.map((line) => `# ${line}`),
    '#',
    '# Every resource is public for reading and writing, as json-server is: tighten access',
    '# (e.g. access: { read: public, write: authenticated }; see docs/auth.md) and the field rules',
    '# (docs/schema.md) before you serve it to others.',
    'resources:',
  ];
  for (const resource of inferred.resources) lines.push(...resourceLines(resource, inferred));
  return `${lines.join('\n')}\n`;
}

function resourceLines(resource: InferredResource, inferred: InferredSchema): string[] {
  const definition = inferred.definition.resources[resource.name] ?? {};
  const out = [...resource.notes.map((note) => `  # ${resource.key}: ${oneLine(note)}`), `  ${key(resource.name)}:`];
  if (definition.singleton === true) out.push('    singleton: true');
  if (definition.singular !== undefined) out.push(`    singular: ${definition.singular}`);
  out.push('    access: { read: public, write: public }');
  const fields = Object.entries(definition.fields ?? {});
  out.push(fields.length === 0 ? '    fields: {}' : '    fields:');
  for (const field of resource.fields) {
    const fieldDefinition = definition.fields?.[field.name];
    if (fieldDefinition === undefined) continue;
    out.push(`      ${key(field.name)}: ${flow(fieldDefinition)}  # ${field.notes.map(oneLine).join('; ')}`);
  }
  const relations = Object.entries(definition.relations ?? {});
  if (relations.length > 0) {
    out.push('    relations:');
    for (const [name, relation] of relations) out.push(`      ${key(name)}: ${flow(relation)}`);
  }
  return out;
}

/** `{ type: string, required: true }`: the definition's members in a YAML flow mapping. */
function flow(value: FieldDefinition | RelationDefinition): string {
  return `{ ${Object.entries(value).map(([k, v]) => `${k}: ${scalar(v)}`).join(', ')} }`;
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return /^[A-Za-z][A-Za-z0-9]*$/.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

/** Words YAML reads as something other than a string. */
const RESERVED = /^(true|false|null|yes|no|on|off|y|n)$/i;

function key(name: string): string {
  return RESERVED.test(name) ? JSON.stringify(name) : name;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}
