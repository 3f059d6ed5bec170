import { describe, expect, it } from 'vitest';
import { compareOutput, consoleBlocks, substitute, type ValueMap } from './helpers/doc-examples.js';

/** The comparison itself, on made-up outputs (it needs no database: the SQLite pass runs it, scripts/database-independent-tests.mjs). */
describe('comparing an example output with the one shown', () => {
  const shown = '{"id":1,"key":"rg_nACiMm8wrVFG5Ovx6ArozuWaP7-yQklgKHiy_Aqkk7c","createdAt":"2026-11-22T13:51:10.390Z"}';
  const printed = '{"id":1,"key":"rg_bS91b9OaidV4mCfnQgwmv2WlGdJmHacL0oCd722gnIE","createdAt":"2026-11-26T07:57:29.006Z"}';

  it('takes volatile values by their form, and gives later commands the real ones', () => {
    const values: ValueMap = new Map();
    expect(compareOutput(shown, printed, values)).toBeUndefined();
    expect(substitute('KEY=rg_nACiMm8wrVFG5Ovx6ArozuWaP7-yQklgKHiy_Aqkk7c; revoke rg_nACiMm8w', values)).toBe('KEY=rg_bS91b9OaidV4mCfnQgwmv2WlGdJmHacL0oCd722gnIE; revoke rg_bS91b9Oa');
  });

  it('fails when anything else differs, or a value shown twice is two values', () => {
    expect(compareOutput(shown, printed.replace('"id":1', '"id":2'), new Map())).toBe('the output differs');
    expect(compareOutput(`${shown}\n${shown}`, `${printed}\n${printed.replace('rg_bS91', 'rg_XXXX')}`, new Map())).toMatch(/stood for/);
  });

  it('reads a line of … as any number of lines', () => {
    expect(compareOutput('…\nlast', 'first\nsecond\nlast', new Map())).toBeUndefined();
    expect(compareOutput('first\n…', 'first', new Map())).toBeUndefined();
    expect(compareOutput('first\n…\nlast', 'first\nlast', new Map())).toBeUndefined();
    expect(compareOutput('first\n…\nlast', 'first\nlater', new Map())).toBe('the output differs');
  });

  it('splits console blocks into commands and outputs, continuing open quotes and here-documents', () => {
    const blocks = consoleBlocks("text\n\n```console\n$ echo 'a\nb'\na\nb\n\n$ cat <<'EOF'\nx\nEOF\nx\n```\n\n```sh\n$ not run\n```\n");
    expect(blocks.map((block) => block.commands.map((c) => [c.command, c.expected, c.line]))).toEqual([
      [
        ["echo 'a\nb'", 'a\nb', 4],
        ["cat <<'EOF'\nx\nEOF", 'x', 9],
      ],
    ]);
  });
});
