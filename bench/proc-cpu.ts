// CPU time of processes from /proc: what the CPU benchmarks compare. Per request it varies far less
// than req/s or latency on a shared machine, and it counts every thread (V8's helpers, the embedded
// database's) and every process (a primary's workers, PostgreSQL's backends, Redis).
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ: 100 on Linux

type Stat = { pid: number; ppid: number; comm: string; ticks: number; childTicks: number };

/** One /proc …/stat line. The command may hold spaces and parentheses: the fields follow the last ')'. */
function parseStat(stat: string): Omit<Stat, 'pid'> {
  // state, ppid, …, utime (14th field), stime, cutime, cstime.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: Number(f[11]) + Number(f[12]), childTicks: Number(f[13]) + Number(f[14]) };
}

function readStats(): Stat[] {
  const out: Stat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push({ pid: Number(entry), ...parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8')) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * CPU ms of a process and all its descendants. The root's reaped children count too (cutime), so a
 * child that exits during a measurement is not lost.
 */
export function treeCpuMs(root: number): number {
  const stats = readStats();
  const children = new Map<number, Stat[]>();
  for (const s of stats) {
    const siblings = children.get(s.ppid);
    if (siblings) siblings.push(s);
    else children.set(s.ppid, [s]);
  }
  let ticks = 0;
  const rootStat = stats.find((s) => s.pid === root);
  if (!rootStat) return NaN;
  ticks += rootStat.childTicks;
  const queue = [rootStat];
  while (queue.length) {
    const s = queue.pop()!;
    ticks += s.ticks;
    queue.push(...(children.get(s.pid) ?? []));
  }
  return ticks * TICK_MS;
}

/**
 * CPU ms of every process whose command is `comm` (e.g. `postgres`, `redis-server`). The topmost of
 * them (the postmaster) also counts its reaped children, so a backend that exits is not lost.
 */
export function commandCpuMs(comm: string): number {
  const stats = readStats();
  const mine = new Set(stats.filter((s) => s.comm.startsWith(comm)).map((s) => s.pid));
  let ticks = 0;
  for (const s of stats) if (mine.has(s.pid)) ticks += s.ticks + (mine.has(s.ppid) ? 0 : s.childTicks);
  return ticks * TICK_MS;
}

/**
 * Bytes allocated on the V8 heaps, summed from `--trace-gc` lines (one per collection:
 * `… Scavenge 12.1 (14.0) -> 4.3 (15.0) MB, …`): what each collection found minus what the
 * previous one left, per isolate (the main thread and each worker thread print their own).
 * Read the count before and after a window; the bytes since the window's last collection are not
 * counted yet (at most a young generation's worth, small beside a window's total).
 */
export class GcTrace {
  private readonly lastAfter = new Map<string, number>();
  private buffered = '';
  allocatedMb = 0;
  feed(chunk: string | Buffer) {
    const lines = (this.buffered + chunk.toString()).split('\n');
    this.buffered = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^\[\d+:(0x[0-9a-f]+)\]\s+[\d.]+ ms: [A-Za-z -]+?(?:\([^)]*\) )?([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/.exec(line);
      if (!m) continue;
      const [, isolate, before, after] = m;
      const prev = this.lastAfter.get(isolate!);
      if (prev !== undefined) this.allocatedMb += Math.max(0, Number(before) - prev);
      this.lastAfter.set(isolate!, Number(after));
    }
  }
}

/** CPU ms of each thread of a process, by thread id, with the thread's name. */
export function threadsCpuMs(pid: number): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { comm, ticks } = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      out.set(tid, { name: comm, ms: ticks * TICK_MS });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** CPU ms of one thread of a process (its main thread: `tid` = `pid`). */
export function threadCpuMs(pid: number, tid = pid): number {
  try {
    return parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')).ticks * TICK_MS;
  } catch {
    return NaN;
  }
}
