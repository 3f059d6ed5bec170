import {
  GraphQLObjectType,
  Kind,
  OperationTypeNode,
  getNamedType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { saturated, type LimitProblem, type MeasuredDocument } from './query-limits.js';

/** One field on the way down to objects a cost counts: its response name, and its page size when it is a list or connection. */
interface CostStep {
  key: string;
  size: number | undefined;
}

/** The field whose objects count most in a cost: the fields from the operation down to it, and how many objects it may return. */
export interface HeaviestField {
  objects: number;
  steps: readonly CostStep[];
}

/** What an operation may cost, and where most of it comes from. */
export interface OperationCost {
  /** Resource objects the operation may return at most. */
  cost: number;
  /** Undefined when no field returns a resource object. */
  heaviest: HeaviestField | undefined;
}

const NOTHING: OperationCost = Object.freeze({ cost: 0, heaviest: undefined });

/**
 * The name under which the schema keeps, on each list and connection field, the page size it
 * returns without first/last (`extensions`): the resolver pages by it, and the cost counts it.
 */
export const DEFAULT_PAGE_SIZE = 'defaultPageSize';

/**
 * The name under which the schema keeps, on each aggregate field, how many groups it returns
 * without `limit:` (the most groups at the top level, 1 under a parent): each group counts as an object.
 */
export const AGGREGATE_GROUPS = 'aggregateGroups';

/** The page size a list or connection field returns without first/last, as the schema set it on the field. */
function defaultPageSizeOf(field: GraphQLField<unknown, unknown>, fallback: number): number {
  const size = field.extensions[DEFAULT_PAGE_SIZE];
  return typeof size === 'number' ? size : fallback;
}

/**
 * The cost of an operation: how many resource objects it may return at most. A field returning
 * one object costs 1; a paged field (list or connection) multiplies everything below it by its
 * page size (`first` or `last`, else its default page size: the top-level lists' default, or the
 * smaller one of relation lists). Only resource objects count, not the connections, edges and page
 * infos around them, nor scalars. Each use of a fragment counts.
 * `users(first: 100) { posts(first: 10) { title } }` costs 100 + 100 × 10 = 1,100, and so does
 * `usersConnection(first: 100) { edges { node { postsConnection(first: 10) { nodes { title } } } } }`.
 *
 * It also finds the field whose objects count most (the 1,000 posts there), with its path: what a
 * refusal names. The walk is linear in the multiplier above a selection, so each fragment's cost
 * is computed once for a multiplier of 1 and scaled: linear in the document's size (a path is at
 * most the depth limit long).
 */
export function operationCost(
  schema: GraphQLSchema,
  measured: MeasuredDocument,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  defaultPageSize: number,
  resourceTypes: ReadonlySet<string>,
): OperationCost {
  const root = operation.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : operation.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
  if (root === null || root === undefined) return NOTHING;
  // Most documents have no fragment: no map to make for them.
  let fragmentCosts: ReadonlyMap<string, OperationCost> = NO_FRAGMENTS;
  const costOf = (set: SelectionSetNode, type: GraphQLObjectType): OperationCost => {
    let cost = 0;
    let heaviest: HeaviestField | undefined;
    const add = (part: OperationCost): void => {
      cost = saturated(cost + part.cost);
      heaviest = heavier(heaviest, part.heaviest);
    };
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = type.getFields()[selection.name.value];
        if (field === undefined || selection.selectionSet === undefined) continue;
        const named = getNamedType(field.type);
        if (!(named instanceof GraphQLObjectType)) continue;
        // Paged fields (lists and connections) take first/last; the edges and nodes lists of a
        // connection hold what its page size already counted.
        const paged = field.args.some((a) => a.name === 'first');
        const groups = field.extensions[AGGREGATE_GROUPS];
        const aggregate = typeof groups === 'number';
        const size = aggregate
          ? (pageSize(selection.arguments, 'limit', variables) ?? groups)
          : paged ? (pageSize(selection.arguments, 'first', variables) ?? pageSize(selection.arguments, 'last', variables) ?? defaultPageSizeOf(field, defaultPageSize)) : 1;
        const below = costOf(selection.selectionSet, named);
        const own = aggregate || resourceTypes.has(named.name) ? size : 0;
        const step: CostStep = { key: selection.alias?.value ?? selection.name.value, size: paged || aggregate ? size : undefined };
        // On a tie the objects further down are named: their list is the one that multiplies.
        const deeper = below.heaviest === undefined ? undefined : { objects: saturated(size * below.heaviest.objects), steps: [step, ...below.heaviest.steps] };
        const here = own > 0 ? { objects: own, steps: [step] } : undefined;
        add({ cost: saturated(own + saturated(size * below.cost)), heaviest: deeper !== undefined && deeper.objects >= (here?.objects ?? 0) ? deeper : here });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition === undefined ? type : schema.getType(selection.typeCondition.name.value);
        if (condition instanceof GraphQLObjectType) add(costOf(selection.selectionSet, condition));
      } else {
        add(fragmentCosts.get(selection.name.value) ?? NOTHING);
      }
    }
    return { cost, heaviest };
  };
  if (measured.fragmentOrder.length > 0) {
    const costs = new Map<string, OperationCost>();
    fragmentCosts = costs;
    for (const fragment of measured.fragmentOrder) {
      const condition = schema.getType(fragment.typeCondition.name.value);
      costs.set(fragment.name.value, condition instanceof GraphQLObjectType ? costOf(fragment.selectionSet, condition) : NOTHING);
    }
  }
  return costOf(operation.selectionSet, root);
}

/** The heavier of two fields; the first one seen on a tie. */
function heavier(a: HeaviestField | undefined, b: HeaviestField | undefined): HeaviestField | undefined {
  return b !== undefined && (a === undefined || b.objects > a.objects) ? b : a;
}

const NO_FRAGMENTS: ReadonlyMap<string, OperationCost> = new Map();

/**
 * A cost over the limit, with what the client needs to bring it under: the field whose objects
 * count most, how its path multiplies them, and which list on that path would lower the cost most
 * with a smaller `first:` (the largest page; of equal ones the deepest), also as `field`.
 */
export function costProblem(estimate: OperationCost, max: number, pageSizes: { top: number; relation: number }): LimitProblem {
  const { cost, heaviest } = estimate;
  const defaults = `A list field counts its first/last, or without them ${pageSizes.top} at the top level and ${pageSizes.relation} as a relation of another object.`;
  const problem = { limit: 'maxCost' as const, actual: cost, max };
  if (heaviest === undefined) return { ...problem, message: `The query may return ${cost} objects; at most ${max} are allowed. ${defaults}` };
  const pathTo = (end: number): string => heaviest.steps.slice(0, end + 1).map((s) => s.key).join('.');
  const path = pathTo(heaviest.steps.length - 1);
  let trim = -1;
  let trimSize = -1;
  heaviest.steps.forEach((step, i) => {
    if (step.size !== undefined && step.size >= trimSize) [trim, trimSize] = [i, step.size];
  });
  const factors = heaviest.steps.flatMap((s) => (s.size === undefined ? [] : [`${s.key} ${s.size}`]));
  const how = factors.length === 0 ? String(heaviest.objects) : factors.length === 1 ? factors.join('') : `${factors.join(' × ')} = ${heaviest.objects}`;
  const where = `Most would come from ${path} (${how})`;
  if (trim < 0) return { ...problem, message: `The query may return ${cost} objects; at most ${max} are allowed. ${where}. ${defaults}` };
  const field = pathTo(trim);
  return {
    ...problem,
    field,
    message: `The query may return ${cost} objects; at most ${max} are allowed. ${where}; a smaller first: (or last:) on ${field} would help most, paging on with after:. ${defaults}`,
  };
}

function pageSize(args: readonly { name: { value: string }; value: ValueNode }[] | undefined, name: string, variables: Readonly<Record<string, unknown>> | null | undefined): number | undefined {
  const node = args?.find((a) => a.name.value === name)?.value;
  if (node === undefined) return undefined;
  // A negative size is refused when the field runs; counted as nothing, it cannot lower the cost of the rest.
  if (node.kind === Kind.INT) return Math.max(0, Number(node.value));
  if (node.kind === Kind.VARIABLE) {
    const value = variables?.[node.name.value];
    return typeof value === 'number' && Number.isInteger(value) ? Math.max(0, value) : undefined;
  }
  return undefined;
}
