import secureJson from 'secure-json-parse';

/**
 * The rules every JSON value a client sends must follow, whatever the interface: REST bodies, and
 * GraphQL literals and variables. Deeper values would exhaust the stack of what reads them; a
 * `__proto__` member, or a `constructor` member holding a `prototype`, could reach an object's
 * prototype (secure-json-parse's rules, which REST's body parser applies while parsing).
 */

/** Deepest nesting of arrays and objects a value may have, counting the value itself. */
export const MAX_JSON_DEPTH = 64;

/** Why a member name is refused, for messages: "The body contains …". */
export const FORBIDDEN_MEMBER_DETAIL = 'a "__proto__" or "constructor.prototype" member, which is never accepted';

export type JsonInputProblem = 'too-deep' | 'forbidden-member';

/**
 * What is wrong with an already parsed value under these rules, if anything. Walks it without
 * recursion: the depth is checked before anything else looks inside.
 */
export function jsonInputProblem(value: unknown): JsonInputProblem | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return 'too-deep';
  try {
    secureJson.scan(value, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return 'forbidden-member';
  }
  return undefined;
}

/** Whether arrays and objects in `value` nest more than `max` levels (the value itself is level 1). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth > max) return true;
    for (const member of Array.isArray(next.value) ? next.value : Object.values(next.value)) {
      if (typeof member === 'object' && member !== null) pending.push({ value: member, depth: next.depth + 1 });
    }
  }
  return false;
}
