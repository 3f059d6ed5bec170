import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { ErrorObject } from 'ajv';
import { SchemaError, type SchemaProblem } from '../errors.js';
import { compileSchema } from './compile-schema.js';
import { createAjv } from './field-json-schema.js';
import type { SchemaDefinition, SchemaModel } from './schema-model.js';

/** The published JSON Schema of schema files (editors complete against it). */
export const SCHEMA_JSON_SCHEMA_PATH = fileURLToPath(new URL('../../schema/restgraph.schema.json', import.meta.url));

/** The schema `npm start` serves when none is given: users, posts, products, orders. */
export const EXAMPLE_SCHEMA_PATH = fileURLToPath(new URL('../../examples/example-schema.yaml', import.meta.url));

let validateDocument: ReturnType<ReturnType<typeof createAjv>['compile']> | undefined;

/**
 * Reads, validates and compiles a schema file (YAML or JSON; JSON is YAML).
 *
 * @throws SchemaError naming the file, the path inside it, the line and what is wrong, for every problem found.
 */
export function loadSchemaFile(file: string): SchemaModel {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SchemaError(file, [{ path: '', message: `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? String(error)}` }]);
  }
  return parseSchemaText(text, file);
}

/** Like {@link loadSchemaFile}, from text; `file` only names the source in errors. */
export function parseSchemaText(text: string, file = '<schema>'): SchemaModel {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    throw new SchemaError(
      file,
      document.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { path: '', message: e.message.split('\n')[0] ?? e.message, line: pos.line, column: pos.col };
      }),
    );
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });

  validateDocument ??= createAjv({ strictRequired: false }).compile(JSON.parse(readFileSync(SCHEMA_JSON_SCHEMA_PATH, 'utf8')) as object);
  if (!validateDocument(value)) {
    const problems = simplifyAjvErrors(validateDocument.errors ?? []).map((e): SchemaProblem => {
      const segments = pointerSegments(e.instancePath);
      const node = document.getIn(segments, true);
      const range = isNode(node) ? node.range : undefined;
      const pos = range === undefined || range === null ? undefined : lineCounter.linePos(range[0]);
      return { path: segments.join('.'), message: describeAjvError(e), ...(pos === undefined ? {} : { line: pos.line, column: pos.col }) };
    });
    throw new SchemaError(file, problems);
  }

  const { model, problems } = compileSchema(value as SchemaDefinition);
  if (model === undefined) {
    throw new SchemaError(
      file,
      problems.map((p) => {
        const node = document.getIn(p.path.split('.'), true);
        const range = isNode(node) ? node.range : undefined;
        const pos = range === undefined || range === null ? undefined : lineCounter.linePos(range[0]);
        return pos === undefined ? p : { ...p, line: pos.line, column: pos.col };
      }),
    );
  }
  return model;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** ajv reports every failed branch of oneOf and the like; keep what a person needs to read. */
function simplifyAjvErrors(errors: ErrorObject[]): ErrorObject[] {
  const specific = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'if');
  const seen = new Set<string>();
  return specific.filter((e) => {
    const key = `${e.instancePath}|${describeAjvError(e)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describeAjvError(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown property "${String(params.additionalProperty)}"`;
    case 'required':
      return `missing required property "${String(params.missingProperty)}"`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'propertyNames':
      return `invalid name "${String(params.propertyName)}"`;
    case 'pattern':
      return `must match ${String(params.pattern)}`;
    default:
      return e.message ?? 'is invalid';
  }
}
