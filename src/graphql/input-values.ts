import { BREAK, GraphQLError, Kind, visit, valueFromASTUntyped, type DocumentNode, type ValueNode } from 'graphql';
import { FORBIDDEN_MEMBER_DETAIL, MAX_JSON_DEPTH, jsonInputProblem } from '../core/json-input-rules.js';

/**
 * REST's rules for JSON values (core/json-input-rules.ts) applied to GraphQL's input values: every
 * literal in a document (arguments, directive arguments, variable defaults) and the variables of
 * each request, on every transport. A value breaking them is refused with `bad-request` before
 * validation or execution.
 */

/** The first literal of the document breaking the rules, as the error to answer, if any. */
export function literalValuesProblem(document: DocumentNode): GraphQLError | undefined {
  let problem: GraphQLError | undefined;
  const check = (value: ValueNode): void => {
    // The depth first, without recursion: converting the literal to check its members recurses.
    if (literalDeeperThan(value, MAX_JSON_DEPTH)) problem = valueError('An argument value nests lists and objects more than 64 levels deep.', value);
    else if (jsonInputProblem(valueFromASTUntyped(value)) === 'forbidden-member') problem = valueError(`An argument value contains ${FORBIDDEN_MEMBER_DETAIL}.`, value);
  };
  // graphql-js's visit keeps its own stack; a document reaching here nests a bounded number of levels.
  visit(document, {
    Argument(node) {
      check(node.value);
      // Its value is checked whole: no need to visit inside.
      return problem === undefined ? false : BREAK;
    },
    VariableDefinition(node) {
      if (node.defaultValue !== undefined) check(node.defaultValue);
      return problem === undefined ? undefined : BREAK;
    },
  });
  return problem;
}

/** The error to answer when a request's variables break the rules, if they do. */
export function variablesProblem(variables: Readonly<Record<string, unknown>>): GraphQLError | undefined {
  switch (jsonInputProblem(variables)) {
    case 'too-deep':
      return valueError(`The variables nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
    case 'forbidden-member':
      return valueError(`The variables contain ${FORBIDDEN_MEMBER_DETAIL}.`);
    case undefined:
      return undefined;
  }
}

function literalDeeperThan(value: ValueNode, max: number): boolean {
  const pending: { node: ValueNode; depth: number }[] = [{ node: value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, depth } = next;
    if (node.kind !== Kind.LIST && node.kind !== Kind.OBJECT) continue;
    if (depth > max) return true;
    if (node.kind === Kind.LIST) for (const item of node.values) pending.push({ node: item, depth: depth + 1 });
    else for (const field of node.fields) pending.push({ node: field.value, depth: depth + 1 });
  }
  return false;
}

function valueError(message: string, node?: ValueNode): GraphQLError {
  return new GraphQLError(message, { ...(node === undefined ? {} : { nodes: node }), extensions: { code: 'bad-request', status: 400 } });
}
