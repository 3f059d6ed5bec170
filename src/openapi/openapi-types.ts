/**
 * The parts of an OpenAPI 3.1 document restgraph generates, typed as far as we build them.
 * Schema Objects are JSON Schema 2020-12 and stay loose (they are data we generate).
 *
 * @see https://spec.openapis.org/oas/v3.1.0
 */
import type { JsonSchema } from '../schema/field-json-schema.js';

export type SchemaObject = JsonSchema;

/** A type alias, not an interface: a reference is also a Schema Object (JSON Schema's `$ref`). */
export type ReferenceObject = { $ref: string };

export interface ParameterObject {
  name: string;
  in: 'query' | 'header' | 'path';
  description?: string;
  required?: boolean;
  deprecated?: boolean;
  /** `form` with `explode: false` reads arrays as comma-separated values (`fields=id,name`). */
  style?: 'form' | 'simple';
  explode?: boolean;
  schema: SchemaObject;
}

export interface HeaderObject {
  description?: string;
  required?: boolean;
  deprecated?: boolean;
  schema: SchemaObject;
}

export interface MediaTypeObject {
  schema?: SchemaObject;
  example?: unknown;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | ReferenceObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface RequestBodyObject {
  description?: string;
  required?: boolean;
  content: Record<string, MediaTypeObject>;
}

/** Alternatives (any one will do); within one, every named scheme with all its scopes. */
export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  parameters?: (ParameterObject | ReferenceObject)[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | ReferenceObject>;
  security?: SecurityRequirement[];
}

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

export type PathItemObject = Partial<Record<HttpMethod, OperationObject>> & {
  parameters?: (ParameterObject | ReferenceObject)[];
};

export interface TagObject {
  name: string;
  description?: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  tags: TagObject[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    responses: Record<string, ResponseObject>;
    parameters: Record<string, ParameterObject>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

/** A `$ref` to a component of this document. */
export function ref(kind: 'schemas' | 'parameters' | 'headers', name: string): ReferenceObject {
  return { $ref: `#/components/${kind}/${name}` };
}
