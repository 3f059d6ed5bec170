/**
 * Text made safe for a terminal, and what restgraph writes to one for people: the first admin
 * key's box and the start banner. Whatever a client sends (a path, a header) may reach a log
 * line; on a terminal, a control character in it could move the cursor, rewrite earlier lines,
 * set the window title or worse, so every such character is shown as an escape instead.
 */

/**
 * The characters shown escaped: C0 controls and DEL (ESC among them) but for newline and tab,
 * C1 controls (some terminals take U+009B as the start of a control sequence) and the
 * bidirectional overrides and isolates (which reorder what a line seems to say).
 */
// eslint-disable-next-line no-control-regex -- control characters are what these find
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- control characters are what these find
const UNSAFE_WITH_LINES = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f', '\u001b': '\\x1b' };

function escaped(c: string): string {
  return NAMED[c] ?? (c.charCodeAt(0) < 0x100 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text` with every character that could act on a terminal escaped (`\x1b`); line breaks too unless `keepLines`. */
export function terminalSafe(text: string, keepLines = false): string {
  const unsafe = keepLines ? UNSAFE : UNSAFE_WITH_LINES;
  unsafe.lastIndex = 0;
  return unsafe.test(text) ? text.replace(unsafe, escaped) : text;
}

/**
 * A parsed log line with every string in it, keys included, made terminal-safe. Line breaks are
 * kept in stack traces only (shown over several lines); anywhere else they would let a value
 * pass for a log line of its own.
 */
export function terminalSafeValues(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return terminalSafe(value, key === 'stack');
  if (Array.isArray(value)) return value.map((item) => terminalSafeValues(item));
  if (value !== null && typeof value === 'object') {
    const safe: Record<string, unknown> = {};
    // Defined, not assigned: a key `__proto__` (JSON.parse makes it an own key) stays a key.
    for (const [name, item] of Object.entries(value)) Object.defineProperty(safe, terminalSafe(name), { value: terminalSafeValues(item, name), enumerable: true, writable: true, configurable: true });
    return safe;
  }
  return value;
}

/** Query parameters whose values are credentials (an email link's token, a key someone put in a URL). */
const SECRET_NAMES = 'access_token|refresh_token|id_token|token|api_key|apikey|password|secret|client_secret';
const SECRET_PARAMETERS = new RegExp(`(?<=[?&](?:${SECRET_NAMES})=)[^&#]+`, 'gi');
/** Where a sign-in provider sends the browser back: its `code` is a credential too. */
const SIGN_IN_CALLBACK_CODE = /(?<=\/oidc\/[^?]*\/callback\?(?:[^#]*&)?code=)[^&#]+/i;
const HAS_SECRET = new RegExp(`[?&](?:${SECRET_NAMES}|code)=`, 'i');

/**
 * A request URL as logged: the values of query parameters that carry credentials replaced by
 * `[redacted]` (`/v1/auth/verify-email?token=[redacted]`, a sign-in callback's `code`). Most URLs
 * have none, and are returned as they are after one search for `?`.
 */
export function redactedUrl(url: string): string {
  if (url.indexOf('?') < 0 || !HAS_SECRET.test(url)) return url;
  return url.replace(SECRET_PARAMETERS, '[redacted]').replace(SIGN_IN_CALLBACK_CODE, '[redacted]');
}

/** The first admin key in a box, with one sentence on keeping it. */
export function firstKeyBox(key: string): string {
  const lines = ['First admin API key (shown only this once):', '', key, '', 'Copy it into a password manager now: only its hash is stored.'];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = '─'.repeat(width + 2);
  return [`┌${rule}┐`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `└${rule}┘`].join('\n');
}

/** What the start banner shows. */
export interface StartBanner {
  /** `http://127.0.0.1:3000`. */
  address: string;
  /** The database, as printed (no credentials). */
  database: string;
  resources: string[];
}

/** The start banner: where the server, its admin console and its API docs are. */
export function startBanner({ address, database, resources }: StartBanner): string {
  const rows = [
    ['Admin console', `${address}/admin`],
    ['API docs', `${address}/docs`],
    ['Database', database],
    ['Resources', resources.join(', ')],
  ];
  return [`restgraph listening on ${address}`, ...rows.map(([name = '', value = '']) => `  ${name.padEnd(15)}${terminalSafe(value)}`), 'Press Ctrl+C to stop.'].join('\n');
}
