/**
 * The console's one way to the server: the public REST API, with `Authorization: Bearer <token>`
 * on every call. No cookies are sent (`credentials: 'omit'`): a page of another site cannot act
 * through the console, and anything the console does, a script with the same token can do.
 */

/** One entry of a problem document's `errors` (docs/errors.md). */
export interface ProblemError {
  pointer?: string;
  parameter?: string;
  header?: string;
  /** Where in the parameter's value the problem is (a filter expression's character offset). */
  offset?: number;
  detail: string;
}

/** An RFC 9457 problem document, as restgraph answers errors. */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  code: string;
  errors?: ProblemError[];
}

/** A failed call: the server's problem document (or one made up for a network failure). */
export class ApiError extends Error {
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail);
    this.name = 'ApiError';
    this.problem = problem;
  }

  get status(): number {
    return this.problem.status;
  }
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text) as Partial<Problem>;
    if (typeof parsed.detail === 'string') {
      return { status: response.status, title: parsed.title ?? response.statusText, detail: parsed.detail, code: parsed.code ?? String(response.status), ...(parsed.errors === undefined ? {} : { errors: parsed.errors }) };
    }
  } catch {
    // Not a problem document: described below by its status.
  }
  return { status: response.status, title: response.statusText, detail: `The server answered ${response.status} ${response.statusText}.`, code: String(response.status) };
}

/** Calls the API with a token; resolves to status, headers and the parsed body, or throws ApiError. */
export class Api {
  #token: string | undefined;

  constructor(token: string | undefined) {
    this.#token = token;
  }

  /** Sends `token` from now on (an account's renewed access token). */
  useToken(token: string): void {
    this.#token = token;
  }

  /** Whether the token is the API key with this prefix (`rg_AbCdEfGh`: the key's first characters). */
  isKeyWithPrefix(prefix: string): boolean {
    return prefix !== '' && this.#token?.startsWith(prefix) === true;
  }

  /** The Authorization header (for the event stream, read with fetch: EventSource cannot send it). */
  get authorization(): Record<string, string> {
    return this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` };
  }

  async call<T>(path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await this.fetch(path, { method: options.method ?? 'GET', headers, body, signal: options.signal ?? null });
    const text = response.status === 204 || response.status === 202 ? '' : await response.text();
    return { status: response.status, headers: response.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  /**
   * A request with the token whose body and answer are bytes (a file's upload and download): the
   * answer as it came, or ApiError with the server's problem when it is not a 2xx.
   */
  async fetch(path: string, init: { method?: string; headers?: Record<string, string>; body?: BodyInit | undefined; signal?: AbortSignal | null }): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(path, { method: init.method ?? 'GET', headers: { ...this.authorization, ...init.headers }, body: init.body ?? null, credentials: 'omit', cache: 'no-store', signal: init.signal ?? null });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiError({ status: 0, title: 'No answer', detail: `The server could not be reached (${error instanceof Error ? error.message : String(error)}).`, code: 'network' });
    }
    if (!response.ok) throw new ApiError(await problemOf(response));
    return response;
  }

  async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return (await this.call<T>(path, signal === undefined ? {} : { signal })).body;
  }
}

/** The URL of `rel="next"` in a Link header, as a path on this server (the header's URLs are absolute). */
export function nextLink(link: string | null): string | undefined {
  if (link === null) return undefined;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) {
      const url = new URL(match[1], location.href);
      return url.pathname + url.search;
    }
  }
  return undefined;
}

/** What to tell someone about a failed call: the problem's detail (401 and 403 say why themselves). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.problem.status === 0 ? error.problem.detail : `${error.problem.detail} (${error.problem.status} ${error.problem.code})`;
  return error instanceof Error ? error.message : String(error);
}
