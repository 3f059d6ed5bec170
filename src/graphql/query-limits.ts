import type { ListLimits } from '../core/list-query.js';
import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { MAX_JSON_DEPTH } from '../core/json-input-rules.js';

/** Protection limits of the GraphQL endpoint; every one is configurable. */
export interface GraphqlLimits {
  /** Deepest nesting of fields. @default 10 */
  maxDepth: number;
  /** Most objects a query may ask for: list fields count their page size. @default 50_000 */
  maxCost: number;
  /**
   * Page size of a relation list (`author { books }`, `booksConnection`) without first/last,
   * counted as such in the cost; at most the default page size of top-level lists. @default 10
   */
  relationPageSize: number;
  /** Most aliases in one document. @default 30 */
  maxAliases: number;
  /** Most directives in one document. @default 50 */
  maxDirectives: number;
  /**
   * Most selections (fields, fragment spreads, inline fragments) of a document's operations once
   * their fragments are expanded: each use of a fragment counts its selections again. @default 10_000
   */
  maxSelections: number;
  /** Most lexical tokens in one document (checked before parsing). @default 5_000 */
  maxTokens: number;
  /** Whether introspection queries are answered. @default true, false when NODE_ENV=production */
  introspection: boolean;
}

export type LimitName = 'maxDepth' | 'maxCost' | 'maxAliases' | 'maxDirectives' | 'maxSelections' | 'maxFieldPairs';

export interface LimitProblem {
  message: string;
  limit: LimitName;
  actual: number;
  max: number;
  /** For maxCost: the path of the field whose first: would lower the cost most. */
  field?: string;
}

/** What a document asks for once its fragments are expanded: the largest figures of any of its operations, and their selections together. */
export interface DocumentShape {
  depth: number;
  aliases: number;
  directives: number;
  /** Selections (fields, fragment spreads, inline fragments), each use of a fragment counting its own again. */
  selections: number;
}

/** A document measured: its shape, and what the cost of an operation needs. */
export interface MeasuredDocument {
  shape: DocumentShape;
  /** Selections (fields, fragment spreads, inline fragments) walked: each of the document once. */
  visited: number;
  /** The fragment definitions, each after the fragments it spreads; spreads that close a cycle are left out. */
  fragmentOrder: readonly FragmentDefinitionNode[];
  /** Whether fragments spread each other in a cycle (which validation refuses). */
  cyclic: boolean;
}

/**
 * Brackets a document may nest before it is parsed: fields nest up to maxDepth, values up to the
 * 64 levels REST bodies may nest, and a few more for the operation and argument lists.
 */
export function maxNestingOf(limits: Pick<GraphqlLimits, 'maxDepth'>): number {
  return limits.maxDepth + MAX_JSON_DEPTH + 8;
}

/**
 * Most pairs of fields sharing a response path in a document (see field-pairs.ts): enough for
 * fragments that select the same fields side by side, as generated client code does (fifty
 * fragments with `id` at one place make 1,225), and few enough that validation takes
 * milliseconds.
 */
export const MAX_FIELD_PAIRS = 10_000;

/**
 * Figures that can grow exponentially (2^levels of fragments spreading the next twice) stop here,
 * where numbers are still exact integers; any limit is far below.
 */
const SATURATED = Number.MAX_SAFE_INTEGER;
export const saturated = (n: number): number => (n > SATURATED ? SATURATED : n);

const EMPTY: DocumentShape = Object.freeze({ depth: 0, aliases: 0, directives: 0, selections: 0 });

/**
 * Depth, aliases, directives and expanded selections of the operations in a document, in time
 * linear in its size: each fragment is measured once, and each use adds its figures (a walk per
 * use would take time exponential in the number of fragments). Runs before validation, so it
 * needs no valid document: unknown fragments count nothing, and a spread closing a cycle counts
 * nothing (validation refuses both afterwards). Variables do not change these figures.
 */
export function measureDocument(document: DocumentNode): MeasuredDocument {
  const { order: fragmentOrder, cyclic } = orderFragments(document);
  const summaries = new Map<string, DocumentShape>();
  let visited = 0;
  // `depth` is not counted inside introspection (__schema, __type): its size is bounded by the
  // schema, not by data, and its standard query (GraphiQL's) nests 15 deep, so it is governed by
  // the introspection switch instead. Everything else counts everywhere.
  const measureSet = (set: SelectionSetNode): DocumentShape => {
    const shape = { ...EMPTY };
    for (const selection of set.selections) {
      visited++;
      shape.selections = saturated(shape.selections + 1);
      shape.directives = saturated(shape.directives + (selection.directives?.length ?? 0));
      let below: DocumentShape;
      let depth: number;
      if (selection.kind === Kind.FIELD) {
        below = selection.selectionSet === undefined ? EMPTY : measureSet(selection.selectionSet);
        if (selection.alias !== undefined) shape.aliases = saturated(shape.aliases + 1);
        depth = selection.name.value.startsWith('__') ? 0 : below.depth + 1;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        below = measureSet(selection.selectionSet);
        depth = below.depth;
      } else {
        below = summaries.get(selection.name.value) ?? EMPTY;
        depth = below.depth;
      }
      shape.depth = Math.max(shape.depth, depth);
      shape.aliases = saturated(shape.aliases + below.aliases);
      shape.directives = saturated(shape.directives + below.directives);
      shape.selections = saturated(shape.selections + below.selections);
    }
    return shape;
  };
  for (const fragment of fragmentOrder) {
    const shape = measureSet(fragment.selectionSet);
    shape.directives = saturated(shape.directives + (fragment.directives?.length ?? 0));
    summaries.set(fragment.name.value, shape);
  }
  const worst = { ...EMPTY };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const shape = measureSet(definition.selectionSet);
    worst.depth = Math.max(worst.depth, shape.depth);
    worst.aliases = Math.max(worst.aliases, shape.aliases);
    worst.directives = Math.max(worst.directives, saturated(shape.directives + (definition.directives?.length ?? 0)));
    // Together: what is expanded is bounded for the whole document.
    worst.selections = saturated(worst.selections + shape.selections);
  }
  return { shape: worst, visited, fragmentOrder, cyclic };
}

/**
 * The fragments of a document in an order where each comes after those it spreads (a depth-first
 * post-order, with its own stack: a chain of fragments is as long as the document allows).
 */
function orderFragments(document: DocumentNode): { order: FragmentDefinitionNode[]; cyclic: boolean } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) fragments.set(definition.name.value, definition);
  }
  const order: FragmentDefinitionNode[] = [];
  let cyclic = false;
  const state = new Map<string, 'open' | 'done'>();
  for (const root of fragments.values()) {
    if (state.has(root.name.value)) continue;
    state.set(root.name.value, 'open');
    const stack = [{ fragment: root, spreads: spreadNames(root.selectionSet), next: 0 }];
    for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
      const name = top.spreads[top.next++];
      if (name === undefined) {
        stack.pop();
        state.set(top.fragment.name.value, 'done');
        order.push(top.fragment);
        continue;
      }
      const fragment = fragments.get(name);
      // An unknown fragment, one already placed, or one still open (a cycle): nothing to do.
      if (state.get(name) === 'open') cyclic = true;
      if (fragment === undefined || state.has(name)) continue;
      state.set(name, 'open');
      stack.push({ fragment, spreads: spreadNames(fragment.selectionSet), next: 0 });
    }
  }
  return { order, cyclic };
}

/** The names of the fragments spread in a selection set, at any depth (each once). */
function spreadNames(set: SelectionSetNode): string[] {
  const names = new Set<string>();
  const walk = (inner: SelectionSetNode): void => {
    for (const selection of inner.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) names.add(selection.name.value);
      else if (selection.selectionSet !== undefined) walk(selection.selectionSet);
    }
  };
  walk(set);
  return [...names];
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
  if (shape.selections > limits.maxSelections) {
    problems.push({
      limit: 'maxSelections',
      actual: shape.selections,
      max: limits.maxSelections,
      message: `The query has ${shape.selections} selections (fields, fragment spreads, inline fragments) once its fragments are expanded; at most ${limits.maxSelections} are allowed.`,
    });
  }
  return problems;
}

/** A GraphQL error for a query over a limit, with what the client needs to fix it. */
export function limitError(problem: LimitProblem): GraphQLError {
  return new GraphQLError(problem.message, {
    extensions: {
      code: 'query-too-complex',
      status: 400,
      limit: problem.limit,
      actual: problem.actual,
      max: problem.max,
      ...(problem.field === undefined ? {} : { field: problem.field }),
    },
  });
}

/**
 * Rows a relation list (`author { books }`) returns without first/last: the configured relation
 * page size, but never more than a top-level list's default page.
 */
export function relationPageSizeOf(limits: Pick<GraphqlLimits, 'relationPageSize'>, listLimits: ListLimits): number {
  return Math.min(limits.relationPageSize, listLimits.defaultLimit);
}
