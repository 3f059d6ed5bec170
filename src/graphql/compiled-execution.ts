import {
  BREAK,
  Kind,
  execute,
  getNamedType,
  isInputObjectType,
  typeFromAST,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLInputObjectType,
  type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { PromiseOrValue } from '../promise-or-value.js';

/**
 * Executes operations with graphql-js, or compiled by graphql-jit where that is known to give the
 * same result: documents made of fields alone (with arguments, variables and aliases), with no
 * fragment spread, inline fragment or directive. There GraphQL's field collection (the
 * specification's CollectFields) merely groups fields by response name, and graphql-jit does the
 * same. Fragments and @skip/@include are where it has parted from the specification (0.8.9:
 * `{ user(id: "1") { ...A @skip(if: true) ...B } } fragment A on User { name } fragment B on User { ...A }`
 * answered `{"user": {}}`), so documents using them run on graphql-js. A differential property test
 * (test/graphql-execution.test.ts) holds both to the same results. Operations declaring a variable
 * of a recursive input type (`$where: UserWhere`) run on graphql-js too: graphql-jit's compiled
 * variable parsing unrolls such types, which took 24 s for one `UserWhere` of a small schema.
 */
export class CompiledExecution {
  /** Compiled operations (by operation name; null: not compilable) of the documents it may compile. */
  readonly #compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

  /** Notes a parsed and validated document; it will run compiled if it is made of fields alone. */
  admit(document: DocumentNode): void {
    if (isFieldsOnly(document)) this.#compiled.set(document, new Map());
  }

  execute(args: ExecutionArgs): PromiseOrValue<ExecutionResult> {
    const byOperation = this.#compiled.get(args.document);
    if (byOperation === undefined) return execute(args);
    const key = args.operationName ?? '';
    let compiled = byOperation.get(key);
    if (compiled === undefined) {
      const result = takesRecursiveInput(args.schema, args.document) ? undefined : compileQuery(args.schema, args.document, args.operationName ?? undefined);
      compiled = result !== undefined && isCompiledQuery(result) ? result : null;
      byOperation.set(key, compiled);
    }
    if (compiled === null) return execute(args);
    return compiled.query(args.rootValue, args.contextValue, args.variableValues);
  }
}

/** Whether an operation of the document declares a variable whose input type contains itself. */
function takesRecursiveInput(schema: GraphQLSchema, document: DocumentNode): boolean {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const variable of definition.variableDefinitions ?? []) {
      const type = typeFromAST(schema, variable.type);
      const named = type === undefined ? undefined : getNamedType(type);
      if (named !== undefined && isInputObjectType(named) && isRecursive(named)) return true;
    }
  }
  return false;
}

const RECURSIVE = new WeakMap<GraphQLInputObjectType, boolean>();

/** Whether an input object type reaches itself through its fields (a walk of the types it reaches, each once). */
function isRecursive(type: GraphQLInputObjectType): boolean {
  let known = RECURSIVE.get(type);
  if (known !== undefined) return known;
  const seen = new Set<GraphQLInputObjectType>();
  const pending = [type];
  known = false;
  for (let next = pending.pop(); next !== undefined && !known; next = pending.pop()) {
    for (const field of Object.values(next.getFields())) {
      const inner = getNamedType(field.type);
      if (!isInputObjectType(inner)) continue;
      if (inner === type) known = true;
      else if (!seen.has(inner)) {
        seen.add(inner);
        pending.push(inner);
      }
    }
  }
  RECURSIVE.set(type, known);
  return known;
}

/** Whether a document has no fragment (named or inline) and no directive anywhere. */
export function isFieldsOnly(document: DocumentNode): boolean {
  let fieldsOnly = true;
  visit(document, {
    enter(node) {
      if (node.kind === Kind.FRAGMENT_DEFINITION || node.kind === Kind.FRAGMENT_SPREAD || node.kind === Kind.INLINE_FRAGMENT || node.kind === Kind.DIRECTIVE) {
        fieldsOnly = false;
        return BREAK;
      }
      return undefined;
    },
  });
  return fieldsOnly;
}
