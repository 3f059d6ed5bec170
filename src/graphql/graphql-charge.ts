import { GraphQLError } from 'graphql';
import type { RateLimitResult } from '../core/rate-limits.js';
import type { OperationArgs } from 'graphql-http';
import type { GraphqlCharge, GraphqlContext, PreparedArgs } from './graphql-context.js';


/** The operation's arguments with what it was charged, or the error of a used-up budget. */
export function charge(args: PreparedArgs, result: RateLimitResult, cost: number): OperationArgs<GraphqlContext> | readonly GraphQLError[] {
  const state = result.states[0];
  if (state === undefined) return args;
  const charged: GraphqlCharge = { cost, limit: state.policy.limit, windowSeconds: state.policy.windowSeconds, remaining: state.remaining, resetSeconds: state.resetSeconds };
  if (!result.allowed) {
    const message = `This operation costs ${cost} points and ${state.remaining} of the ${state.policy.limit} per ${state.policy.windowSeconds} s are left; try again in ${result.retryAfterSeconds} s.`;
    return [new GraphQLError(message, { extensions: { code: 'rate-limited', status: 429, retryAfter: result.retryAfterSeconds, rateLimit: { ...charged, cost: 0 } } })];
  }
  args.contextValue.charge = charged;
  return args;
}

/** A result with its operation's charge in `extensions.rateLimit` (when the operation was charged). */
export function withCharge<R extends { extensions?: Record<string, unknown> | undefined }>(result: R, context: unknown): R {
  const charged = (context as Partial<GraphqlContext> | undefined)?.charge;
  if (charged === undefined) return result;
  return { ...result, extensions: { ...result.extensions, rateLimit: charged } };
}
