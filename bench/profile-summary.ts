/**
 * `npx tsx bench/profile-summary.ts DIR [--top N] [--skip SECONDS]`: summarizes the V8 CPU
 * profiles (.cpuprofile) a bench run wrote with BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR",
 * one block per process: which process it was (from the project files it ran), its busy share
 * (everything but idle), the functions with the most self time (file:line, shortened to the
 * package or the project-relative path), and self time per package (node_modules/<pkg>, project
 * file, node internals). `--skip` leaves out each profile's first seconds (start-up: loading and
 * compiling modules). No dependencies: a .cpuprofile is JSON with `nodes` (id, callFrame),
 * `samples` (node ids) and `timeDeltas` (µs before each sample).
 *
 * Project TypeScript files run through tsx, whose compiled code keeps few line breaks, so V8's
 * line numbers for them are meaningless; their line is looked up by function name in the source
 * (shown as `file:~line`), or left out when the function is anonymous or not found.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber?: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** V8's pseudo-frames: not functions of any file. */
const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** A file URL shortened: `pkg/lib/file.js` inside node_modules, project-relative inside the project. */
export function shortFile(url: string): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  if (file.startsWith(ROOT + '/')) return file.slice(ROOT.length + 1);
  const project = file.match(/\/((?:services|packages|bench|scripts|test)\/.*)$/);
  if (project) return project[1]!;
  return file;
}

const sourceLines = new Map<string, string[] | undefined>();

/** The line (1-based) where a function of a project TypeScript file is declared, by its name. */
function tsLine(file: string, name: string): number | undefined {
  if (!name || name.startsWith('(')) return undefined;
  if (!sourceLines.has(file)) {
    const abs = path.join(ROOT, file);
    sourceLines.set(file, existsSync(abs) ? readFileSync(abs, 'utf8').split('\n') : undefined);
  }
  const lines = sourceLines.get(file);
  if (!lines) return undefined;
  // V8 names methods and class members `Class.method` or `inst._zod.parse`: the last part is declared.
  const short = name
    .split('.')
    .pop()!
    .replace(/[^\w$]/g, '');
  if (!short) return undefined;
  const patterns = [
    new RegExp(`\\bfunction\\s*\\*?\\s*${short}\\s*[<(]`),
    new RegExp(`\\b(?:const|let|var)\\s+${short}\\s*[:=]`),
    new RegExp(`^\\s*(?:(?:public|private|protected|static|async|override|readonly|get|set)\\s+)*${short}\\s*[<(]`),
    new RegExp(`\\b${short}\\s*[:=]\\s*(?:async\\s*)?(?:function\\b|\\(|[\\w$]+\\s*=>)`),
  ];
  for (const re of patterns) {
    const i = lines.findIndex((l) => re.test(l));
    if (i >= 0) return i + 1;
  }
  return undefined;
}

/** `file:line` of a frame: V8's line for JavaScript, the looked-up line for project TypeScript. */
function location(frame: CallFrame): string {
  const where = shortFile(frame.url);
  if (!where) return '';
  if (/\.[cm]?tsx?$/.test(where) && !where.includes('node_modules')) {
    const line = tsLine(where, frame.functionName);
    return line ? `${where}:~${line}` : where;
  }
  return `${where}:${frame.lineNumber + 1}`;
}

/** The group a frame's self time counts for: a package, a project file, node internals or V8. */
export function packageOf(frame: CallFrame): string {
  if (SPECIAL.has(frame.functionName) && !frame.url) return frame.functionName;
  const url = frame.url;
  if (!url) return '(V8 builtins, native)';
  if (url.startsWith('node:')) return 'node (internals)';
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return shortFile(url);
}

/** Which process of the stack a profile is, from the project files it ran. */
function processName(p: Profile): string {
  const counts = new Map<string, number>();
  for (const n of p.nodes) {
    const f = shortFile(n.callFrame.url);
    const m = f.match(/^services\/([a-z-]+)\/src\//) ?? f.match(/^(bench\/[a-z-]+)\.ts$/) ?? f.match(/^(scripts\/[a-z-]+)\.ts$/);
    if (m) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  }
  const names = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return names[0]?.[0] ?? 'unknown process';
}

/** Self time (µs) per node id from `from` (µs, profile clock) on: each sample holds until the next one. */
function selfTimes(p: Profile, from: number): Map<number, number> {
  const self = new Map<number, number>();
  let t = p.startTime;
  const stamps = p.timeDeltas.map((d) => (t += d));
  for (let i = 0; i < p.samples.length; i++) {
    if (stamps[i]! < from) continue;
    const dt = (i + 1 < stamps.length ? stamps[i + 1]! : p.endTime) - stamps[i]!;
    if (dt > 0) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + dt);
  }
  return self;
}

const pct = (n: number, of: number) => (of > 0 ? `${((n / of) * 100).toFixed(1)}%` : '–');
const ms = (us: number) => (us / 1000).toFixed(0);

export function summarize(file: string, p: Profile, o: { top: number; skipSeconds: number; name: string }): string {
  const top = o.top;
  const from = p.startTime + o.skipSeconds * 1e6;
  const self = selfTimes(p, from);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const total = Math.max(0, p.endTime - Math.max(p.startTime, from));
  let idle = 0;
  let gc = 0;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    if (frame.functionName === '(garbage collector)') gc += us;
    const where = location(frame);
    const key = `${frame.functionName || '(anonymous)'}${where ? `  ${where}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg = packageOf(frame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const busy = Math.max(0, total - idle);
  const lines = [
    `== ${o.name} (${path.basename(file)})`,
    `   ${(total / 1e6).toFixed(1)} s profiled${o.skipSeconds ? ` after the first ${o.skipSeconds} s` : ''}, busy ${pct(busy, total)} (${(busy / 1e6).toFixed(1)} s), garbage collection ${pct(gc, busy)} of busy`,
  ];
  if (busy < total * 0.02) {
    lines.push('   (almost idle: functions not listed)');
    return lines.join('\n');
  }
  lines.push(`   top ${top} functions by self time (share of busy):`);
  const sorted = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  for (const [key, us] of sorted(byFunction, top)) lines.push(`   ${ms(us).padStart(7)} ms ${pct(us, busy).padStart(6)}  ${key}`);
  lines.push(`   top ${Math.min(10, top)} by package or project file:`);
  for (const [pkg, us] of sorted(byPackage, Math.min(10, top))) lines.push(`   ${ms(us).padStart(7)} ms ${pct(us, busy).padStart(6)}  ${pkg}`);
  return lines.join('\n');
}

function main(): number {
  const args = process.argv.slice(2);
  const option = (flag: string, fallback: number) => {
    const at = args.indexOf(flag);
    return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback;
  };
  const top = option('--top', 15);
  const skipSeconds = option('--skip', 0);
  const dir = args[0];
  if (!dir || args.length > 1 || !Number.isInteger(top) || top < 1 || !(skipSeconds >= 0)) {
    console.error(
      'Usage: npx tsx bench/profile-summary.ts DIR [--top N] [--skip SECONDS]\n' +
        '  DIR holds .cpuprofile files, e.g. from BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" npm run bench;\n' +
        '  --top: functions listed per process (default 15); --skip: leave out the first seconds of each profile.',
    );
    return 2;
  }
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort();
  } catch {
    console.error(`Cannot read ${dir}.`);
    return 1;
  }
  if (!files.length) {
    console.error(`No .cpuprofile files in ${dir}.`);
    return 1;
  }
  // Node names profiles CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main
  // thread, others are workers (tsx's module loader runs in one). Workers take their process's name.
  type Parsed = { f: string; pid?: string; thread: number } & ({ p: Profile } | { error: string });
  const parsed = files.map((f): Parsed => {
    const [, , , pid, thread] = f.split('.');
    try {
      return { f, pid, thread: Number(thread), p: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Profile };
    } catch (err) {
      return { f, pid, thread: Number(thread), error: err instanceof Error ? err.message : String(err) };
    }
  });
  const names = new Map<string | undefined, string>();
  for (const x of parsed) if ('p' in x && x.thread === 0) names.set(x.pid, processName(x.p));
  const blocks = parsed.map((x) => {
    const proc = names.get(x.pid) ?? ('p' in x ? processName(x.p) : 'unknown process');
    const name = `${proc} (pid ${x.pid ?? '?'}${x.thread ? `, worker thread ${x.thread}` : ''})`;
    const key = `${proc} ${x.pid} ${x.thread}`;
    if ('error' in x) return { key, text: `== ${name}: ${x.f} is not a readable profile (${x.error})` };
    return { key, text: summarize(path.join(dir, x.f), x.p, { top, skipSeconds, name }) };
  });
  console.log(
    blocks
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((b) => b.text)
      .join('\n\n'),
  );
  return 0;
}

process.exitCode = main();
