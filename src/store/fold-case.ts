/**
 * The case folding of filter expressions' `~` and `!~` (containsIgnoringCase): Unicode's full
 * default lowercase mapping (SpecialCasing included: `İ` → `i̇`, a final `Σ` → `ς`). SQLite
 * calls it as the SQL function {@link FOLD_CASE_FUNCTION} (registered on every connection);
 * PostgreSQL's `lower()` under the ICU root collation (`und-x-icu`) maps the same; the in-memory
 * evaluator calls it directly. All three must agree: a filter finds the same rows everywhere.
 */
export function foldCase(text: string): string {
  return text.toLowerCase();
}

/** The name of {@link foldCase} as an SQL function on SQLite connections. */
export const FOLD_CASE_FUNCTION = 'restgraph_fold_case';
