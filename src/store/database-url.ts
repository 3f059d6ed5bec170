import { resolve } from 'node:path';

/**
 * What every dialect and command agrees on about a `DATABASE_URL` before anything is opened: the
 * forms it takes, the one folder restgraph creates by itself, and how a URL is shown (never with
 * its credentials).
 */

/** Where the SQLite databases restgraph names by itself live, relative to the working folder: the one folder it creates. */
export const DATA_FOLDER = './data';

/** The forms of a database URL, for the errors that refuse another. */
export const DATABASE_URL_FORMS = 'sqlite:<file>, a file path, or postgres://user:password@host:port/database';

/** Query parameters of a URL that carry a secret (libpq's `password` and `sslpassword`; `sslkey` is a path). */
const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set(['password', 'sslpassword']);

/** A scheme and its slashes, then userinfo: `postgres://user:password@`, also with one slash (a mistyped URL). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/+)[^/?#]*@/i;

/**
 * A URL as it may be shown (logs, messages, printed commands): without its userinfo
 * (`user:password@`) and without the query parameters that carry a secret (`password`,
 * `sslpassword`); the rest as written. Text that is not a URL with a scheme comes back as it is.
 *
 * @example withoutCredentials('postgres://app:s3cret@db/app?password=s3cret&sslmode=require') // 'postgres://db/app?sslmode=require'
 */
export function withoutCredentials(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) return url;
  const shown = url.replace(USERINFO, '$1');
  const query = shown.indexOf('?');
  if (query === -1) return shown;
  const fragment = shown.indexOf('#', query);
  const end = fragment === -1 ? shown.length : fragment;
  const kept = shown
    .slice(query + 1, end)
    .split('&')
    .filter((pair) => !CREDENTIAL_PARAMETERS.has(parameterName(pair)));
  return `${shown.slice(0, query)}${kept.length === 0 ? '' : `?${kept.join('&')}`}${shown.slice(end)}`;
}

/** Whether `folder` is restgraph's own {@link DATA_FOLDER} (of the working folder), which it creates when missing. */
export function isDataFolder(folder: string): boolean {
  return resolve(folder) === resolve(DATA_FOLDER);
}

/** A query parameter's name, decoded and in lower case (`PassWord=`, `pass%77ord=` are `password`). */
function parameterName(pair: string): string {
  const name = pair.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}
