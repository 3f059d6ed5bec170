import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

/** What the server said is wrong with a filter expression: its words, and where (a character offset). */
export interface ExpressionProblem {
  detail: string;
  offset: number | undefined;
}

/** The problem with the `filter` parameter in a 400 `invalid-query` (docs/list-queries.md#filter-expressions), if that is what failed. */
export function expressionProblemOf(error: unknown): ExpressionProblem | undefined {
  if (!(error instanceof ApiError) || error.status !== 400) return undefined;
  const entry = error.problem.errors?.find((candidate) => candidate.parameter === 'filter');
  if (entry === undefined) return undefined;
  return { detail: entry.detail, offset: typeof entry.offset === 'number' && entry.offset >= 0 ? entry.offset : undefined };
}

/** Words that cannot name a field in an expression (docs/list-queries.md). */
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'true', 'false', 'any', 'none']);

/** Whether `field` can be named in an expression (a plain name that is not a keyword). */
export function nameableInExpression(field: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(field) && !KEYWORDS.has(field.toLowerCase());
}

/** A text as an expression's quoted string. */
export function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** `condition` ANDed to `expression` (the condition alone when there is no expression). */
export function andExpression(expression: string, condition: string): string {
  return expression.trim() === '' ? condition : `(${expression}) and ${condition}`;
}

/**
 * The expression as it was sent, with the place the server named marked and a caret under it, as
 * a compiler shows it (monospace, so the caret lines up; no inline style, which the CSP forbids).
 */
function Caret({ expression, offset }: { expression: string; offset: number }) {
  // One column per character: line breaks and tabs are shown as spaces.
  const shown = expression.replace(/[\t\n\r]/g, ' ');
  const at = Math.min(offset, shown.length);
  return (
    <pre class="filter-caret" aria-hidden="true" data-offset={at}>
      {shown.slice(0, at)}
      <mark>{shown.charAt(at) === '' ? ' ' : shown.charAt(at)}</mark>
      {shown.slice(at + 1)}
      {'\n'}
      {' '.repeat(at)}^
    </pre>
  );
}

/**
 * The filter expression of a list (`filter=`): typed, applied with Enter. When the server refuses
 * it, its words are shown under the input, the place is marked with a caret, and the text cursor
 * is put there.
 */
export function ExpressionBar({ expression, problem, onApply }: { expression: string; problem: ExpressionProblem | undefined; onApply: (expression: string) => void }) {
  const [text, setText] = useState(expression);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => setText(expression), [expression]);
  useEffect(() => {
    const element = input.current;
    if (problem === undefined || element === null) return;
    element.focus();
    const at = Math.min(problem.offset ?? element.value.length, element.value.length);
    element.setSelectionRange(at, at);
  }, [problem]);
  const submit = (event: Event): void => {
    event.preventDefault();
    onApply(text.trim());
  };
  const clear = (): void => {
    setText('');
    onApply('');
  };
  return (
    <form class="expression-bar" onSubmit={submit} aria-label="Filter by expression">
      <label for="filter-expression">Filter expression</label>
      <div class="expression-row">
        <input
          id="filter-expression"
          ref={input}
          type="text"
          value={text}
          spellcheck={false}
          autoComplete="off"
          placeholder="status = 'paid' or total > 100"
          aria-invalid={problem === undefined ? undefined : 'true'}
          aria-describedby={problem === undefined ? 'filter-expression-hint' : 'filter-expression-error'}
          onInput={(event) => setText(event.currentTarget.value)}
        />
        <button type="submit">Apply</button>
        {expression !== '' && (
          <button type="button" onClick={clear}>
            Clear
          </button>
        )}
      </div>
      {problem === undefined ? (
        <p class="hint" id="filter-expression-hint">
          <code>=</code> <code>!=</code> <code>&lt;</code> <code>&gt;</code> <code>~</code> (contains) <code>^=</code> (starts with) <code>in (…)</code> <code>is null</code>, with <code>and</code>, <code>or</code>, <code>not</code>, parentheses, and paths such as <code>author.name</code> or <code>posts.any(…)</code>. Enter applies it.
        </p>
      ) : (
        <div class="error" id="filter-expression-error" role="alert">
          <p>{problem.detail}</p>
          {problem.offset !== undefined && <Caret expression={expression} offset={problem.offset} />}
        </div>
      )}
    </form>
  );
}
