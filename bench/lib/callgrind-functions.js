// Where a server's instructions go, by function, from one callgrind dump (bench/instructions.js
// with BENCH_INSTR_FUNCTIONS=1).
//
// callgrind names the functions of Node, V8's builtins and SQLite from their symbols, but V8's
// generated code (every optimised JavaScript function) has none: it is counted at addresses. Run
// under `node --perf-basic-prof`, Node writes /tmp/perf-<pid>.map, one line per piece of generated
// code ("<start> <size> <name>", hex); with callgrind's --dump-instr=yes every count carries its
// address, and the map names it. Code can be moved or collected and its addresses reused: the
// map's later lines win.
import { readFileSync } from 'node:fs';

/** Address ranges of generated code, from a perf map; `name(address)` is the newest covering it. */
function perfMap(file) {
  const ranges = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match) ranges.push({ start: parseInt(match[1], 16), end: parseInt(match[1], 16) + parseInt(match[2], 16), name: match[3], order: ranges.length });
  }
  const sorted = ranges.sort((a, b) => a.start - b.start);
  return (address) => {
    let low = 0;
    let high = sorted.length - 1;
    let last = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (sorted[middle].start <= address) {
        last = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    let best;
    // Pieces of code are small: a covering range starts among the few before the address.
    for (let i = last; i >= 0 && i > last - 200; i--) {
      const range = sorted[i];
      if (range.end > address && (best === undefined || range.order > best.order)) best = range;
    }
    return best === undefined ? 'generated code (unnamed)' : best.name.replace(/^(JS|LazyCompile|Function):[*~^+]?/, 'JS ');
  };
}

/**
 * Self instructions per function in a callgrind file written with --dump-instr=yes, divided by
 * `requests`, the largest first: [{ name, perRequest }]. Generated code is named through `mapFile`.
 */
export function instructionsByFunction(callgrindFile, mapFile, requests) {
  const nameAt = perfMap(mapFile);
  const compressed = { ob: new Map(), fn: new Map() };
  // "fn=(12) name" defines a name once; "fn=(12)" refers to it.
  const expand = (kind, text) => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(text);
    if (!match) return text;
    if (match[2] !== undefined) compressed[kind].set(match[1], match[2]);
    return compressed[kind].get(match[1]) ?? text;
  };
  const totals = new Map();
  let object = '';
  let fn = '';
  let address = 0;
  let callCost = false;
  let positions = ['line'];
  for (const line of readFileSync(callgrindFile, 'utf8').split('\n')) {
    if (line.startsWith('positions:')) positions = line.slice(10).trim().split(/\s+/);
    else if (line.startsWith('ob=')) object = expand('ob', line.slice(3));
    else if (line.startsWith('fn=')) fn = expand('fn', line.slice(3));
    else if (line.startsWith('cob=')) expand('ob', line.slice(4));
    else if (line.startsWith('cfn=')) expand('fn', line.slice(4));
    else if (line.startsWith('calls=')) callCost = true; // the next cost line is the call's inclusive cost
    else if (/^[0-9+*-]/.test(line)) {
      const fields = line.split(' ');
      if (positions[0] === 'instr') {
        const position = fields[0];
        if (position.startsWith('+')) address += Number(position.slice(1));
        else if (position.startsWith('-')) address -= Number(position.slice(1));
        else if (position !== '*') address = Number(position);
      }
      if (callCost) {
        callCost = false;
        continue;
      }
      const cost = Number(fields[positions.length] ?? 0);
      if (!cost) continue;
      const generated = object === '???' || /^0x/.test(fn);
      const name = generated ? nameAt(address) : `${fn.replace(/\(.*$/, '')} [${object.split('/').pop()}]`;
      totals.set(name, (totals.get(name) ?? 0) + cost);
    }
  }
  return [...totals]
    .map(([name, cost]) => ({ name, perRequest: Math.round(cost / requests) }))
    .sort((a, b) => b.perRequest - a.perRequest);
}
