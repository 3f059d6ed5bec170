import type { ErrorDetail } from '../errors.js';
import { searchableFields, type ResourceModel } from '../schema/schema-model.js';
import type { SearchTerm, TextSearch } from '../store/list-spec.js';
import { hasNul, NUL_DETAIL } from './storable-text.js';

/** The longest search text accepted, in characters. */
export const MAX_SEARCH_LENGTH = 1000;
/** The most words one search may hold (phrases' words included). */
export const MAX_SEARCH_WORDS = 32;

/** A word as the full-text indexes split text: letters, digits and combining marks. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * A search as clients write it (`sqlite index`, `"exact phrase" words`) → its terms: each word a
 * term, each double-quoted part a phrase (an unclosed quote runs to the end), every term required,
 * the last word (outside quotes) a prefix. Everything else (punctuation, operators of any search
 * syntax) only separates words. When the text cannot be a search, the problem joins `problems`,
 * naming `parameter`.
 */
export function parseSearch(resource: ResourceModel, text: string, parameter: string, problems: ErrorDetail[]): TextSearch | undefined {
  const searchable = searchableFields(resource);
  if (searchable.length === 0) {
    const candidates = [...resource.writableFields].filter((f) => f.type === 'string').map((f) => f.name);
    const could = candidates.length === 0 ? 'it has no string fields to make searchable' : `string fields that could be made searchable (searchable: true in the schema): ${candidates.join(', ')}`;
    problems.push({ parameter, detail: `${resource.name} has no searchable fields; ${could}` });
    return undefined;
  }
  if (text.length > MAX_SEARCH_LENGTH) {
    problems.push({ parameter, detail: `is ${text.length} characters long; at most ${MAX_SEARCH_LENGTH} are allowed` });
    return undefined;
  }
  if (hasNul(text)) {
    problems.push({ parameter, detail: NUL_DETAIL });
    return undefined;
  }
  const terms: SearchTerm[] = [];
  let words = 0;
  const parts = text.split('"');
  for (const [i, part] of parts.entries()) {
    const found = part.match(WORD) ?? [];
    words += found.length;
    if (i % 2 === 1) {
      if (found.length > 0) terms.push({ words: found, prefix: false });
    } else {
      for (const word of found) terms.push({ words: [word], prefix: false });
    }
  }
  if (words > MAX_SEARCH_WORDS) {
    problems.push({ parameter, detail: `has ${words} words; at most ${MAX_SEARCH_WORDS} are allowed` });
    return undefined;
  }
  if (terms.length === 0) {
    const detail = text.trim() === '' ? 'is empty; give words to search for' : 'has no words to search for (only punctuation and spaces)';
    problems.push({ parameter, detail });
    return undefined;
  }
  // The last word typed, outside quotes, may be unfinished: it matches as a prefix.
  const lastPart = parts[parts.length - 1] ?? '';
  const last = terms[terms.length - 1];
  if (parts.length % 2 === 1 && last !== undefined && /[\p{L}\p{N}\p{M}]/u.test(lastPart)) terms[terms.length - 1] = { ...last, prefix: true };
  return { terms };
}
