import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asciiJson } from '../src/app/access-log.js';
import { BatchedLogDestination } from '../src/app/log-destination.js';
import { tempDir } from './helpers/test-app.js';

/**
 * The server's log output: batches of lines written to a real file descriptor, ASCII lines copied
 * out as they are and any other line encoded as UTF-8, whatever the order they came in.
 */

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('restgraph-log-');
});
afterEach(() => dir.cleanup());

/** What a destination on a real file wrote, once flushed. */
function written(lines: { text: string; ascii?: boolean }[], flushAfter: number[] = []): string {
  const file = join(dir.path, 'out.log');
  const fd = openSync(file, 'w');
  try {
    const destination = new BatchedLogDestination(fd);
    lines.forEach(({ text, ascii }, index) => {
      if (ascii === true) destination.writeAscii(text);
      else destination.write(text);
      if (flushAfter.includes(index)) destination.flushSync();
    });
    destination.flushSync();
  } finally {
    closeSync(fd);
  }
  return readFileSync(file, 'utf8');
}

describe('BatchedLogDestination', () => {
  it('writes ASCII lines byte for byte', () => {
    expect(written([{ text: '{"a":1}\n', ascii: true }, { text: '{"b":"x"}\n' }])).toBe('{"a":1}\n{"b":"x"}\n');
  });

  it('encodes a batch as UTF-8 when any line in it has other characters, before or after ASCII lines', () => {
    const lines = [
      { text: '{"msg":"request","url":"/users"}\n', ascii: true },
      { text: '{"msg":"listening","database":"sqlite:/tmp/dätä/日本/x.db"}\n' },
      { text: '{"msg":"emoji 🎉 and é"}\n' },
      { text: '{"msg":"request","url":"/posts"}\n', ascii: true },
    ];
    expect(written(lines)).toBe(lines.map((l) => l.text).join(''));
  });

  it('goes back to copying once a batch with other characters has been written', () => {
    const lines = [{ text: 'é\n' }, { text: 'plain\n', ascii: true }, { text: 'ü\n' }];
    expect(written(lines, [0, 1])).toBe('é\nplain\nü\n');
  });

  it('writes a batch out by itself once 16 KiB have gathered, with nothing lost across the boundary', () => {
    // Every third line has characters beyond ASCII (and goes through write); the others are ASCII.
    const lines = Array.from({ length: 400 }, (_, i) => {
      const ascii = i % 3 !== 0;
      return { text: `{"n":${i},"pad":"${'x'.repeat(60)}",${ascii ? '"e":"u"' : '"é":"ü"'}}\n`, ascii };
    });
    expect(written(lines)).toBe(lines.map((l) => l.text).join(''));
  });
});

describe('asciiJson', () => {
  it('is JSON.stringify for ASCII text', () => {
    for (const text of ['/users?sort=name', '', 'a"b\\c', 'tab\there', '\u0000\u001f\u007f']) expect(asciiJson(text)).toBe(JSON.stringify(text));
  });

  it('escapes every character beyond ASCII, to the same string for any JSON reader', () => {
    for (const text of ['/users?name=café', 'Zoë 日本', 'emoji 🎉', 'lone \ud800 surrogate', '\u0080\u00ff\u0100\uffff']) {
      const json = asciiJson(text);
      expect(Array.from({ length: json.length }, (_, i) => json.charCodeAt(i)).filter((code) => code > 0x7f)).toEqual([]);
      expect(JSON.parse(json)).toBe(text);
    }
  });
});
