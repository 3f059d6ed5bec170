import { useEffect, useState } from 'preact/hooks';

/**
 * The console's pages, addressed by the URL's fragment (`/admin#/r/users`), so the server serves
 * only /admin and its assets.
 */
export type Route =
  | { page: 'home' }
  | { page: 'list'; resource: string; query: URLSearchParams }
  | { page: 'new'; resource: string }
  | { page: 'record'; resource: string; id: string }
  | { page: 'keys' }
  | { page: 'accounts' }
  | { page: 'webhooks' }
  | { page: 'webhook'; id: string }
  | { page: 'events' }
  | { page: 'status' }
  | { page: 'unknown'; hash: string };

const ID = /^[1-9][0-9]{0,15}$/;

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  let parts: string[];
  try {
    parts = path.split('/').filter((part) => part !== '').map((part) => decodeURIComponent(part));
  } catch {
    // A malformed escape (a hand-edited address): an unknown page, not a blank console.
    return { page: 'unknown', hash };
  }
  const [first, second, third] = parts;
  if (parts.length === 0) return { page: 'home' };
  if (first === 'r' && second !== undefined && parts.length === 2) return { page: 'list', resource: second, query: new URLSearchParams(search) };
  if (first === 'r' && second !== undefined && third === 'new' && parts.length === 3) return { page: 'new', resource: second };
  // Ids are positive integers: anything else (such as `..`) must never become part of a request's path.
  if (first === 'r' && second !== undefined && third !== undefined && ID.test(third) && parts.length === 3) return { page: 'record', resource: second, id: third };
  if (first === 'keys' && parts.length === 1) return { page: 'keys' };
  if (first === 'accounts' && parts.length === 1) return { page: 'accounts' };
  if (first === 'webhooks' && parts.length === 1) return { page: 'webhooks' };
  if (first === 'webhooks' && second !== undefined && ID.test(second) && parts.length === 2) return { page: 'webhook', id: second };
  if (first === 'events' && parts.length === 1) return { page: 'events' };
  if (first === 'status' && parts.length === 1) return { page: 'status' };
  return { page: 'unknown', hash };
}

/** Links to the pages. */
export const href = {
  list: (resource: string, query?: URLSearchParams) => `#/r/${encodeURIComponent(resource)}${query === undefined || query.size === 0 ? '' : `?${query.toString()}`}`,
  create: (resource: string) => `#/r/${encodeURIComponent(resource)}/new`,
  record: (resource: string, id: string | number) => `#/r/${encodeURIComponent(resource)}/${encodeURIComponent(String(id))}`,
  webhook: (id: string | number) => `#/webhooks/${encodeURIComponent(String(id))}`,
};

/** The current route, following hashchange. */
export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = (): void => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}
