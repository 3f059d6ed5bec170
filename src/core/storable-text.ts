/**
 * Text restgraph stores must not contain U+0000: PostgreSQL's text and jsonb cannot hold it. It is
 * refused in every input (write bodies, filters, cursors, tokens, webhooks) on every database, so
 * an API behaves the same on SQLite and PostgreSQL.
 */
export const NUL_DETAIL = 'must not contain the NUL character (U+0000)';

export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * The RFC 6901 pointer (below `pointer`) of the first string or object key in a JSON value that
 * contains U+0000, or undefined when there is none.
 */
export function nulPointer(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return hasNul(value) ? pointer : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPointer(value[i], `${pointer}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (hasNul(key)) return at;
      const found = nulPointer(member, at);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
