import { BREAK, Kind, execute, visit, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
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
 * (test/graphql-execution.test.ts) holds both to the same results.
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
      const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      compiled = isCompiledQuery(result) ? result : null;
      byOperation.set(key, compiled);
    }
    if (compiled === null) return execute(args);
    return compiled.query(args.rootValue, args.contextValue, args.variableValues);
  }
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
