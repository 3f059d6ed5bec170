/**
 * "a" or "an" before a name from a schema (a resource's singular, a type's name), chosen by how
 * the name is said rather than by its first letter: an author, a user, an hour, a unicorn, an ID,
 * a URL. Generated descriptions and summaries (OpenAPI, GraphQL, `init --from` notes) use it, so
 * that none reads "A author.".
 */

/** Letters whose name starts with a vowel sound, for names said letter by letter (ID, SKU, HTML). */
const VOWEL_SOUND_LETTERS = new Set('AEFHILMNORSX');

/** Words that start with a vowel letter but a consonant sound: user, unit, unique, euro, one. */
const CONSONANT_SOUND_START = /^(?:u[bcfgklmnpqrstvz][aeiouy]|u[bcfgklmnpqrstvz]$|ur[aeiouy]|eu|ewe|one(?![aeiou])|once|uk)/;

/** Words that start with a consonant letter but a vowel sound (a silent h). */
const VOWEL_SOUND_START = /^(?:hour|honest|honou?r|heir)/;

/** Where a lower-case word would start with a vowel sound but does not (un- before a consonant: an unread, an update). */
const UN_PREFIX = /^un(?![aeiouy])|^up|^us(?:[^aeiouy]|$)/;

/** The first word of a name: `orderItem` → `order`, `API key` → `API`, `user_profile` → `user`. */
function firstWord(name: string): string {
  return /^[A-Z0-9]+(?![a-z])|^[A-Za-z][a-z0-9]*/.exec(name.trim())?.[0] ?? name.trim();
}

/** The indefinite article for a name, by its sound. */
export function indefiniteArticle(name: string): 'a' | 'an' {
  const word = firstWord(name);
  if (word === '') return 'a';
  // An all-capital word of two letters or more, or a single capital, is said letter by letter.
  if (/^[A-Z][A-Z0-9]*$/.test(word) && (word.length > 1 || name.trim().length === 1)) return VOWEL_SOUND_LETTERS.has(word.charAt(0)) ? 'an' : 'a';
  const lower = word.toLowerCase();
  if (VOWEL_SOUND_START.test(lower)) return 'an';
  if (!/^[aeiou]/.test(lower)) return 'a';
  if (UN_PREFIX.test(lower) && !/^uni/.test(lower)) return 'an';
  return CONSONANT_SOUND_START.test(lower) ? 'a' : 'an';
}

/** The name after its indefinite article: `an author`, `a user`; `capital` starts it with `An`/`A`. */
export function withIndefiniteArticle(name: string, capital = false): string {
  const article = indefiniteArticle(name);
  return `${capital ? (article === 'an' ? 'An' : 'A') : article} ${name}`;
}
