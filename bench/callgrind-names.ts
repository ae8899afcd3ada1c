// Read one of figure i's callgrind dumps with the JavaScript named: callgrind knows V8's
// compiled code only by address, and node's `--perf-basic-prof` map (saved beside each dump)
// gives each address range its function ("JS:*name file:line" optimized, "JS:^name"
// baseline). Prints every function by its own instructions, and the JavaScript functions by
// everything they called (inclusive), largest first.
//
//   node --import tsx bench/callgrind-names.ts DUMP MAP [ROWS]
//   node --import tsx bench/callgrind-names.ts DUMP MAP [ROWS] --callees TEXT
//   node --import tsx bench/callgrind-names.ts DUMP MAP [ROWS] --callers TEXT
//   node --import tsx bench/callgrind-names.ts DUMP MAP --kinds
//
// --callees and --callers list, for each function whose name holds TEXT, what it called or
// what called it, by the instructions of those calls. --kinds sums own instructions by the
// kind of code: SQLite, V8's collector, compiler, builtins and API, compiled JavaScript, node
// and libuv, the C library (docs/performance.md, item 4, session 53).
//
// Inclusive counts add a function's own cost to the cost of its calls as callgrind recorded
// them, so a function that recurses counts its inner calls again (as callgrind_annotate's
// --inclusive does). Callgrind may split one code object at an inner entry (baseline code's
// prologue), which then shows twice, with its two addresses. Node never takes a range out of
// the map: an address is named after the latest range written over it, which is right unless
// V8 reused it for code the map never heard of; read a surprising name against its callers.
import { readFileSync } from 'node:fs';

interface AddressRange {
  start: number;
  end: number;
  name: string;
  /** Its line in the map: node appends, so of two ranges at one address the later is current. */
  line: number;
}

function readMap(file: string): AddressRange[] {
  const ranges: AddressRange[] = [];
  for (const [line, text] of readFileSync(file, 'utf8').split('\n').entries()) {
    const [start, size, ...name] = text.split(' ');
    if (!start || !size) continue;
    const at = parseInt(start, 16);
    ranges.push({ start: at, end: at + parseInt(size, 16), name: name.join(' '), line });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

/** Ranges before the address looked at for one that holds it (code objects are small). */
const LOOK_BACK = 256;

/** The map's name for a bare address callgrind printed (0x…), or the name as it was. */
function namer(ranges: AddressRange[]): (name: string) => string {
  return (name) => {
    const m = /^0x([0-9a-f]+)/.exec(name);
    if (!m) return name;
    const at = parseInt(m[1], 16);
    let lo = 0;
    let hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid].start <= at) lo = mid + 1;
      else hi = mid - 1;
    }
    let found: AddressRange | undefined;
    for (let i = hi; i >= 0 && i > hi - LOOK_BACK; i--) {
      const range = ranges[i];
      if (at < range.end && (!found || range.line > found.line)) found = range;
    }
    return found ? `${found.name} [${m[0]}]` : name;
  };
}

/** Own and inclusive instructions by function name. */
function readDump(
  dump: string,
  name: (raw: string) => string,
): {
  total: number;
  own: Map<string, number>;
  inclusive: Map<string, number>;
  edges: Map<string, Map<string, number>>;
  objects: Map<string, string>;
} {
  const own = new Map<string, number>();
  const calls = new Map<string, number>();
  /** Caller, then callee: the instructions of the caller's calls of it. */
  const edges = new Map<string, Map<string, number>>();
  /** Each function's object file (the node binary, a library, better-sqlite3's addon). */
  const objects = new Map<string, string>();
  const objectNames = new Map<string, string>();
  let object = '';
  // Callgrind writes a name once with its number, "(12) name", and "(12)" after that.
  const names = new Map<string, string>();
  const nameOf = (spec: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (!m) return name(spec);
    if (m[2] !== undefined) names.set(m[1], name(m[2]));
    return names.get(m[1]) ?? spec;
  };
  let current = '';
  let callee = '';
  let inCall = false;
  let total = 0;
  for (const line of readFileSync(dump, 'utf8').split('\n')) {
    if (line.startsWith('ob=') || line.startsWith('cob=')) {
      const m = /^c?ob=\((\d+)\)(?: (.*))?$/.exec(line);
      if (m?.[2] !== undefined) objectNames.set(m[1], m[2]);
      if (m && line.startsWith('ob=')) object = objectNames.get(m[1]) ?? '';
    } else if (line.startsWith('fn=')) {
      current = nameOf(line.slice(3));
      objects.set(current, object);
    } else if (line.startsWith('cfn=')) callee = nameOf(line.slice(4));
    else if (line.startsWith('calls=')) inCall = true;
    else if (/^[0-9+*-]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (inCall) {
        calls.set(current, (calls.get(current) ?? 0) + cost);
        let out = edges.get(current);
        if (!out) edges.set(current, (out = new Map()));
        out.set(callee, (out.get(callee) ?? 0) + cost);
      } else {
        own.set(current, (own.get(current) ?? 0) + cost);
        total += cost;
      }
      inCall = false;
    }
  }
  const inclusive = new Map<string, number>();
  for (const [fn, cost] of own) inclusive.set(fn, cost + (calls.get(fn) ?? 0));
  for (const [fn, cost] of calls) if (!own.has(fn)) inclusive.set(fn, cost);
  return { total, own, inclusive, edges, objects };
}

/** The kind of code a function is, by its name and object file (--kinds). */
function kindOf(fn: string, object: string): string {
  if (object.includes('better_sqlite3')) return 'SQLite, better-sqlite3';
  if (fn.startsWith('JS:') || fn.startsWith('RegExp:') || fn.startsWith('0x')) return 'JavaScript';
  if (/\/lib[^/]*\.so/.test(object)) return 'the C library, other libraries';
  if (fn.startsWith('Builtins_')) return "V8's builtins";
  if (/Scaveng|Marking|Sweep|Evacuat|heap::|Heap::|Remembered/.test(fn)) return "V8's collector";
  if (/compiler::|maglev|Maglev|turboshaft|Parser|Scanner|interpreter::/.test(fn))
    return "V8's compiler";
  if (fn.startsWith('v8::')) return "V8's API and runtime";
  return 'node, libuv, other';
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    if (at < 0) return undefined;
    const [, value] = args.splice(at, 2);
    return value ?? '';
  };
  const calleesOf = option('--callees');
  const callersOf = option('--callers');
  const kinds = args.includes('--kinds');
  const [dump, map, rowsArg] = args.filter((a) => a !== '--kinds');
  if (!dump || !map || calleesOf === '' || callersOf === '') {
    console.error(
      'usage: node --import tsx bench/callgrind-names.ts DUMP MAP [ROWS] [--callees TEXT | --callers TEXT | --kinds]',
    );
    process.exit(2);
  }
  const rows = Number(rowsArg) || 40;
  const { total, own, inclusive, edges, objects } = readDump(dump, namer(readMap(map)));
  const print = (title: string, costs: Map<string, number>) => {
    console.log(`\n${title}`);
    const top = [...costs].sort((a, b) => b[1] - a[1]).slice(0, rows);
    for (const [fn, cost] of top) {
      const share = ((100 * cost) / total).toFixed(2).padStart(6);
      console.log(`${cost.toLocaleString('en').padStart(14)} ${share} %  ${fn.slice(0, 140)}`);
    }
  };
  console.log(`${total.toLocaleString('en')} instructions in all`);
  if (kinds) {
    const byKind = new Map<string, number>();
    for (const [fn, cost] of own) {
      const kind = kindOf(fn, objects.get(fn) ?? '');
      byKind.set(kind, (byKind.get(kind) ?? 0) + cost);
    }
    return print('own instructions by kind of code', byKind);
  }
  if (calleesOf !== undefined) {
    for (const [fn, out] of edges) {
      if (fn.includes(calleesOf)) print(`what ${fn} called (own ${own.get(fn) ?? 0})`, out);
    }
    return;
  }
  if (callersOf !== undefined) {
    const callers = new Map<string, Map<string, number>>();
    for (const [caller, out] of edges) {
      for (const [fn, cost] of out) {
        if (!fn.includes(callersOf)) continue;
        let into = callers.get(fn);
        if (!into) callers.set(fn, (into = new Map()));
        into.set(caller, (into.get(caller) ?? 0) + cost);
      }
    }
    for (const [fn, into] of callers) print(`what called ${fn}`, into);
    return;
  }
  print('own instructions', own);
  // V8's trampolines and recursion levels (callgrind's "name'2") would head the inclusive list.
  const javascript = new Map([...inclusive].filter(([fn]) => /^JS:[*^~]?[^']*$/.test(fn)));
  print('JavaScript, inclusive (own and callees)', javascript);
}

main();
