import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import type { ErrorObject } from 'ajv';
import { SchemaError, type SchemaProblem } from '../errors.js';
import { compileSchema } from './compile-schema.js';
import { createAjv } from './field-json-schema.js';
import type { SchemaDefinition, SchemaModel } from './schema-model.js';
import { isMappedDocument, mappedJsonSchema } from './mapped-json-schema.js';

/** The published JSON Schema of schema files (editors complete against it). */
export const SCHEMA_JSON_SCHEMA_PATH = fileURLToPath(new URL('../../schema/restgraph.schema.json', import.meta.url));

export { EXAMPLE_SCHEMA_PATH } from './example-schema-path.js';

type DocumentValidator = ReturnType<ReturnType<typeof createAjv>['compile']>;
let validateDocument: DocumentValidator | undefined;
/** The validator of schemas that map an existing database (names as the database spells them). */
let validateMappedDocument: DocumentValidator | undefined;

function documentValidator(mapped: boolean): DocumentValidator {
  const compile = (schema: object): DocumentValidator => createAjv({ strictRequired: false, validateSchema: false }).compile(schema);
  const published = (): object => JSON.parse(readFileSync(SCHEMA_JSON_SCHEMA_PATH, 'utf8')) as object;
  if (mapped) return (validateMappedDocument ??= compile(mappedJsonSchema(published())));
  return (validateDocument ??= compile(published()));
}

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

  const mapped = isMappedDocument(value);
  const validate = documentValidator(mapped);
  if (!validate(value)) {
    const problems = simplifyAjvErrors(validate.errors ?? []).map((e): SchemaProblem => {
      const segments = pointerSegments(e.instancePath);
      const params = e.params as Record<string, unknown>;
      if (e.keyword === 'propertyNames' || e.keyword === 'additionalProperties') {
        segments.push(String(params.propertyName ?? params.additionalProperty));
      }
      const offset = locate(document, segments);
      const pos = offset === undefined ? undefined : lineCounter.linePos(offset);
      // The camelCase advice is for restgraph's own tables; a mapped database keeps its names.
      const message = (mapped ? undefined : invalidName(e, segments, value)) ?? describeAjvError(e);
      return { path: segments.join('.'), message, ...(pos === undefined ? {} : { line: pos.line, column: pos.col }) };
    });
    throw new SchemaError(file, problems);
  }

  const { model, problems } = compileSchema(value as SchemaDefinition);
  if (model === undefined) {
    throw new SchemaError(
      file,
      problems.map((p) => {
        const offset = locate(document, p.path.split('.'));
        const pos = offset === undefined ? undefined : lineCounter.linePos(offset);
        return pos === undefined ? p : { ...p, line: pos.line, column: pos.col };
      }),
    );
  }
  const position = (path: string): { line: number; column: number } | undefined => {
    const offset = locate(document, path.split('.'));
    if (offset === undefined) return undefined;
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  return Object.freeze({ ...model, source: { file, position } });
}

/** Where a path starts in the text: the key of a mapping entry, else the node itself. */
function locate(document: Document, segments: string[]): number | undefined {
  if (segments.length > 0) {
    const parent = document.getIn(segments.slice(0, -1), true);
    const last = segments[segments.length - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === last);
      if (pair !== undefined && isNode(pair.key) && pair.key.range) return pair.key.range[0];
    }
  }
  const node = document.getIn(segments, true);
  return isNode(node) && node.range ? node.range[0] : undefined;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** ajv reports every failed branch of oneOf and the like; keep what a person needs to read. */
function simplifyAjvErrors(errors: ErrorObject[]): ErrorObject[] {
  const specific = errors.filter((e) => {
    if (e.keyword === 'if') return false;
    // Errors inside propertyNames repeat the propertyNames error itself.
    if (e.propertyName !== undefined) return false;
    // A oneOf whose branches all failed is explained by their errors; one where several passed is not.
    if (e.keyword === 'oneOf') return Array.isArray((e.params as { passingSchemas?: unknown }).passingSchemas);
    return true;
  });
  const seen = new Set<string>();
  return specific.filter((e) => {
    const key = `${e.instancePath}|${describeAjvError(e)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The names the JSON Schema's name patterns check, by the key that holds them: what they name and
 * whether they must start in lowercase (resources and singulars make paths and type names).
 */
const NAME_RULES: Readonly<Record<string, { names: string; lowercaseStart: boolean }>> = {
  resources: { names: 'a resource name', lowercaseStart: true },
  singular: { names: 'a singular name', lowercaseStart: true },
  fields: { names: 'a field name', lowercaseStart: false },
  renamedFrom: { names: 'a field name', lowercaseStart: false },
  relations: { names: 'a relation name', lowercaseStart: false },
};

/**
 * A name refused by its pattern (`first_name`), said as the rule it breaks and, when one can be
 * made from its words, the valid name to use instead (`firstName`).
 */
function invalidName(e: ErrorObject, segments: readonly string[], document: unknown): string | undefined {
  if (e.keyword !== 'propertyNames' && e.keyword !== 'pattern') return undefined;
  const holder = e.keyword === 'propertyNames' ? segments.at(-2) : segments.at(-1);
  const rule = holder === undefined ? undefined : NAME_RULES[holder];
  const name = e.keyword === 'propertyNames' ? segments.at(-1) : valueAt(document, segments);
  if (rule === undefined || typeof name !== 'string') return undefined;
  const start = rule.lowercaseStart ? 'starts with a lowercase letter' : 'starts with a letter';
  const suggestion = camelCaseName(name, rule.lowercaseStart);
  return (
    `invalid name "${name}": ${rule.names} ${start} and has only letters and digits (camelCase for several words: no "_", "-" or spaces), at most 63 characters` +
    (suggestion === undefined ? '' : `; use "${suggestion}"`)
  );
}

/** `first_name`, `first-name`, `FIRST NAME` → `firstName`; undefined when no letter starts it. */
function camelCaseName(name: string, lowercaseStart: boolean): string | undefined {
  const words = name
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => (word === word.toUpperCase() ? word.toLowerCase() : word));
  const [first, ...rest] = words;
  if (first === undefined || !/^[A-Za-z]/.test(first)) return undefined;
  const head = lowercaseStart ? first.charAt(0).toLowerCase() + first.slice(1) : first;
  const suggestion = (head + rest.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')).slice(0, 63);
  return suggestion === name ? undefined : suggestion;
}

function valueAt(value: unknown, segments: readonly string[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
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
    case 'oneOf':
      return 'must declare exactly one of hasMany and belongsTo';
    case 'propertyNames':
      return `invalid name "${String(params.propertyName)}"`;
    case 'pattern':
      return `must match ${String(params.pattern)}`;
    default:
      return e.message ?? 'is invalid';
  }
}
