import type { FilterCondition } from '../../store/list-spec.js';
import type { FilterLimits } from './filter-parser.js';

/**
 * The size of a checked filter tree, for trees built other than by the expression parser (which
 * bounds its input as it reads it): GraphQL's typed `where:` input, say, translated to the same
 * {@link FilterCondition} tree and held to the same {@link FilterLimits}.
 */
export interface FilterSize {
  /** Comparisons: the tree's leaves (`none` included). */
  conditions: number;
  /** The most `any`, `all`, `not`, `related`, `some` and `noneOf` nodes on one path from the root. */
  depth: number;
  /** The most relation nodes (`related`, `some`, `noneOf`) on one path from the root. */
  hops: number;
}

/** Measures a tree; recursion follows the tree's depth, which the caller's input format bounds. */
export function measureFilter(condition: FilterCondition): FilterSize {
  switch (condition.op) {
    case 'any':
    case 'all': {
      const size: FilterSize = { conditions: 0, depth: 0, hops: 0 };
      for (const part of condition.value as readonly FilterCondition[]) {
        const inner = measureFilter(part);
        size.conditions += inner.conditions;
        size.depth = Math.max(size.depth, inner.depth);
        size.hops = Math.max(size.hops, inner.hops);
      }
      return { ...size, depth: size.depth + 1 };
    }
    case 'not':
    case 'related':
    case 'some':
    case 'noneOf': {
      const inner = measureFilter(condition.value as FilterCondition);
      const hop = condition.op === 'not' ? 0 : 1;
      return { conditions: inner.conditions, depth: inner.depth + 1, hops: inner.hops + hop };
    }
    default:
      return { conditions: 1, depth: 0, hops: 0 };
  }
}

/**
 * The first of `limits` a tree exceeds (`maxConditions`, `maxDepth` counting every combinator and
 * relation node, `maxHops`), as a sentence for a 400, or undefined when it fits. The `in` values
 * and text length are the builder's to check as it reads its input.
 */
export function filterBoundsProblem(condition: FilterCondition, limits: FilterLimits): string | undefined {
  const size = measureFilter(condition);
  if (size.conditions > limits.maxConditions) return `has ${size.conditions} conditions; at most ${limits.maxConditions} are allowed`;
  if (size.depth > limits.maxDepth) return `nests ${size.depth} levels deep; at most ${limits.maxDepth} are allowed`;
  if (size.hops > limits.maxHops) return `follows relations ${size.hops} deep; at most ${limits.maxHops} are allowed`;
  return undefined;
}
