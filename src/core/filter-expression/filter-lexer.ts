/**
 * The tokens of a filter expression (docs/list-queries.md#filter-expressions), each with the
 * character offset where it starts. One pass, no backtracking: linear in the input.
 */

/** `reference`: `@auth.sub`, `@auth.claims.org`, `@now` (access rules only: see core/access-rules). */
export type TokenKind = 'name' | 'number' | 'string' | 'reference' | 'operator' | 'punctuation' | 'end';

export interface Token {
  kind: TokenKind;
  /** The text as written (for strings: the value, escapes resolved). */
  text: string;
  /** Character offset of the token's first character. */
  offset: number;
}

/** A lexical problem: what was found at `offset` and what was expected. */
export class FilterSyntaxError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

const OPERATORS = ['!=', '<=', '>=', '!~', '^=', '=', '<', '>', '~'] as const;
const PUNCTUATION = new Set(['(', ')', ',', '.']);
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' };

/** The tokens of `text`, ending with an `end` token. @throws FilterSyntaxError */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (/[A-Za-z_$]/.test(c)) {
      while (i < text.length && /[A-Za-z0-9_$]/.test(text.charAt(i))) i++;
      tokens.push({ kind: 'name', text: text.slice(start, i), offset: start });
      continue;
    }
    if (c === '@') {
      i++;
      while (i < text.length && /[A-Za-z0-9_.]/.test(text.charAt(i))) i++;
      const path = text.slice(start + 1, i);
      if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path)) throw new FilterSyntaxError(`malformed reference at ${start}; expected a name such as @auth.sub after "@"`, start);
      tokens.push({ kind: 'reference', text: path, offset: start });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(text.charAt(i + 1)))) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      const number = match?.[0] ?? c;
      i += number.length;
      if (/[A-Za-z0-9_.]/.test(text.charAt(i))) throw new FilterSyntaxError(`malformed number at ${start}`, start);
      tokens.push({ kind: 'number', text: number, offset: start });
      continue;
    }
    if (c === "'" || c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterSyntaxError(`unterminated string starting at ${start}; expected a closing ${c}`, start);
        const d = text.charAt(i);
        if (d === c) break;
        if (d === '\\') {
          const escaped = ESCAPES[text.charAt(i + 1)];
          if (escaped === undefined) throw new FilterSyntaxError(`unknown escape \\${text.charAt(i + 1)} at ${i}; expected one of \\' \\" \\\\ \\n \\t \\r`, i);
          value += escaped;
          i += 2;
          continue;
        }
        value += d;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', text: value, offset: start });
      continue;
    }
    const operator = OPERATORS.find((op) => text.startsWith(op, i));
    if (operator !== undefined) {
      tokens.push({ kind: 'operator', text: operator, offset: start });
      i += operator.length;
      continue;
    }
    if (PUNCTUATION.has(c)) {
      tokens.push({ kind: 'punctuation', text: c, offset: start });
      i++;
      continue;
    }
    throw new FilterSyntaxError(`unexpected character ${JSON.stringify(c)} at ${start}`, start);
  }
  tokens.push({ kind: 'end', text: '', offset: text.length });
  return tokens;
}
