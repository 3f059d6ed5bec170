import {
  GraphQLError,
  GraphQLObjectType,
  Kind,
  OperationTypeNode,
  getNamedType,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/** Protection limits of the GraphQL endpoint; every one is configurable. */
export interface GraphqlLimits {
  /** Deepest nesting of fields. @default 10 */
  maxDepth: number;
  /** Most objects a query may ask for: list fields count their page size. @default 50_000 */
  maxCost: number;
  /** Most aliases in one document. @default 30 */
  maxAliases: number;
  /** Most directives in one document. @default 50 */
  maxDirectives: number;
  /** Most lexical tokens in one document (checked while parsing). @default 5_000 */
  maxTokens: number;
  /** Whether introspection queries are answered. @default true, false when NODE_ENV=production */
  introspection: boolean;
}

export interface LimitProblem {
  message: string;
  limit: 'maxDepth' | 'maxCost' | 'maxAliases' | 'maxDirectives';
  actual: number;
  max: number;
}

/** What a document asks for, counted over the operation with its fragments expanded. */
export interface DocumentShape {
  depth: number;
  aliases: number;
  directives: number;
}

/**
 * Depth, aliases and directives of one operation (fragments expanded once per use; cycles, which
 * validation refuses, are cut). Variables do not change these, so they are measured once per document.
 */
export function measureDocument(document: DocumentNode, operation: OperationDefinitionNode): DocumentShape {
  const fragments = fragmentsOf(document);
  const shape: DocumentShape = { depth: 0, aliases: 0, directives: operation.directives?.length ?? 0 };
  // `depth` is undefined inside introspection (__schema, __type): its size is bounded by the
  // schema, not by data, and its standard query (GraphiQL's) nests 15 deep, so it is governed by
  // the introspection switch instead. Aliases and directives count everywhere.
  const walk = (set: SelectionSetNode, depth: number | undefined, visiting: Set<string>): void => {
    for (const selection of set.selections) {
      shape.directives += selection.directives?.length ?? 0;
      if (selection.kind === Kind.FIELD) {
        if (selection.alias !== undefined) shape.aliases++;
        const fieldDepth = depth === undefined || selection.name.value.startsWith('__') ? undefined : depth + 1;
        if (fieldDepth !== undefined && fieldDepth > shape.depth) shape.depth = fieldDepth;
        if (selection.selectionSet !== undefined) walk(selection.selectionSet, fieldDepth, visiting);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, depth, visiting);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment === undefined || visiting.has(name)) continue;
        shape.directives += fragment.directives?.length ?? 0;
        visiting.add(name);
        walk(fragment.selectionSet, depth, visiting);
        visiting.delete(name);
      }
    }
  };
  walk(operation.selectionSet, 0, new Set());
  return shape;
}

/** The limits a document's shape is over, if any. */
export function shapeProblems(shape: DocumentShape, limits: GraphqlLimits): LimitProblem[] {
  const problems: LimitProblem[] = [];
  if (shape.depth > limits.maxDepth) {
    problems.push({ limit: 'maxDepth', actual: shape.depth, max: limits.maxDepth, message: `The query is nested ${shape.depth} levels deep; at most ${limits.maxDepth} are allowed.` });
  }
  if (shape.aliases > limits.maxAliases) {
    problems.push({ limit: 'maxAliases', actual: shape.aliases, max: limits.maxAliases, message: `The query uses ${shape.aliases} aliases; at most ${limits.maxAliases} are allowed.` });
  }
  if (shape.directives > limits.maxDirectives) {
    problems.push({ limit: 'maxDirectives', actual: shape.directives, max: limits.maxDirectives, message: `The query uses ${shape.directives} directives; at most ${limits.maxDirectives} are allowed.` });
  }
  return problems;
}

/**
 * The cost of an operation: how many resource objects it may return at most. A field returning
 * one object costs 1; a paged field (list or connection) multiplies everything below it by its
 * page size (`first` or `last`, else the default page size). Only resource objects count, not the
 * connections, edges and page infos around them, nor scalars.
 * `users(first: 100) { posts(first: 10) { title } }` costs 100 + 100 × 10 = 1,100, and so does
 * `usersConnection(first: 100) { edges { node { postsConnection(first: 10) { nodes { title } } } } }`.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  defaultPageSize: number,
  resourceTypes: ReadonlySet<string>,
): number {
  const fragments = fragmentsOf(document);
  const root = operation.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : operation.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
  if (root === null || root === undefined) return 0;
  const walk = (set: SelectionSetNode, type: GraphQLObjectType, multiplier: number, visiting: Set<string>): number => {
    let cost = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = type.getFields()[selection.name.value];
        if (field === undefined || selection.selectionSet === undefined) continue;
        const named = getNamedType(field.type);
        if (!(named instanceof GraphQLObjectType)) continue;
        const args = new Map((selection.arguments ?? []).map((a) => [a.name.value, a.value]));
        // Paged fields (lists and connections) take first/last; the edges and nodes lists of a
        // connection hold what its page size already counted.
        const paged = field.args.some((a) => a.name === 'first');
        const size = paged ? (intValue(args.get('first'), variables) ?? intValue(args.get('last'), variables) ?? defaultPageSize) : 1;
        const objects = multiplier * size;
        if (resourceTypes.has(named.name)) cost += objects;
        cost += walk(selection.selectionSet, named, objects, visiting);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition === undefined ? type : schema.getType(selection.typeCondition.name.value);
        if (condition instanceof GraphQLObjectType) cost += walk(selection.selectionSet, condition, multiplier, visiting);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment === undefined || visiting.has(name)) continue;
        const condition = schema.getType(fragment.typeCondition.name.value);
        if (!(condition instanceof GraphQLObjectType)) continue;
        visiting.add(name);
        cost += walk(fragment.selectionSet, condition, multiplier, visiting);
        visiting.delete(name);
      }
    }
    return cost;
  };
  return walk(operation.selectionSet, root, 1, new Set());
}

/** A GraphQL error for a query over a limit, with what the client needs to fix it. */
export function limitError(problem: LimitProblem): GraphQLError {
  return new GraphQLError(problem.message, {
    extensions: { code: 'query-too-complex', status: 400, limit: problem.limit, actual: problem.actual, max: problem.max },
  });
}

function intValue(node: ValueNode | undefined, variables: Readonly<Record<string, unknown>> | null | undefined): number | undefined {
  if (node === undefined) return undefined;
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.VARIABLE) {
    const value = variables?.[node.name.value];
    return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
  }
  return undefined;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}
