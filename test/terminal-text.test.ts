import { describe, expect, it } from 'vitest';
import { redactedUrl, terminalSafe, terminalSafeValues } from '../src/app/terminal-text.js';
import { ranInSqlitePass } from './helpers/test-database.js';

/**
 * What the readable log does to text before a terminal gets it (src/app/terminal-text.ts), and
 * the credentials left out of request URLs in both log forms. No database: the SQLite pass only.
 */
describe.skipIf(ranInSqlitePass)('text for a terminal', () => {
  it('shows control characters, C1 controls and bidirectional overrides as escapes, and leaves other text alone', () => {
    expect(terminalSafe('/users/\u001b[2J\u001b]0;owned\u0007')).toBe('/users/\\x1b[2J\\x1b]0;owned\\x07');
    expect(terminalSafe('a\u009b31mb\u007fc\rd')).toBe('a\\x9b31mb\\x7fc\\rd');
    expect(terminalSafe('evil\u202egnp.exe')).toBe('evil\\u202egnp.exe');
    expect(terminalSafe('two\nlines\tand a tab')).toBe('two\\nlines\\tand a tab');
    expect(terminalSafe('two\nlines\tand a tab', true)).toBe('two\nlines\tand a tab');
    expect(terminalSafe('/café/ünïcode €')).toBe('/café/ünïcode €');
  });

  it('makes every string of a parsed log line safe, keys included, keeping line breaks in stack traces only', () => {
    const line = JSON.parse('{"msg":"a\\u001bb","err":{"message":"x\\ny","stack":"Error: x\\n    at f"},"list":["\\u001b"],"k\\u001b":1,"__proto__":"kept"}') as unknown;
    const safe = terminalSafeValues(line) as Record<string, unknown>;
    expect(Object.entries(safe)).toEqual([
      ['msg', 'a\\x1bb'],
      ['err', { message: 'x\\ny', stack: 'Error: x\n    at f' }],
      ['list', ['\\x1b']],
      ['k\\x1b', 1],
      ['__proto__', 'kept'],
    ]);
  });

  it('redacts credentials in a URL query, and only those', () => {
    expect(redactedUrl('/users?limit=2&sort=name')).toBe('/users?limit=2&sort=name');
    expect(redactedUrl('/v1/auth/verify-email?token=abc.def&next=/')).toBe('/v1/auth/verify-email?token=[redacted]&next=/');
    expect(redactedUrl('/x?ACCESS_TOKEN=a&api_key=b&password=c&client_secret=d&q=1')).toBe('/x?ACCESS_TOKEN=[redacted]&api_key=[redacted]&password=[redacted]&client_secret=[redacted]&q=1');
    expect(redactedUrl('/v1/auth/oidc/github/callback?state=s&code=c0de')).toBe('/v1/auth/oidc/github/callback?state=s&code=[redacted]');
    // A field named `code` (or `tokens`) is a filter, not a credential.
    expect(redactedUrl('/products?code=AB-1&tokens=3')).toBe('/products?code=AB-1&tokens=3');
    expect(redactedUrl('/x?token=')).toBe('/x?token=');
  });
});
