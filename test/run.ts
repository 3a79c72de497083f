/**
 * `npm test` and its tiers: runs the given test files (globs) with Node's test runner and prints one
 * line per file, the output of every failing process, the slowest files and the totals. What Node's
 * runner does not do, and this file adds:
 *
 * - tiers (test/README.md): a file named `*.browser.test.ts` drives Chromium, `*.process.test.ts`
 *   starts child processes, any other `*.test.ts` runs in the test's process. TEST_TIERS (a comma
 *   list of `unit`, `process`, `browser`; default all three) keeps the files of those tiers only;
 * - several files to a test process, each in a suite of its own (test/helpers/run-files.ts: the
 *   process's start, module loading, PGlite's WebAssembly and cold JIT paid once per process, not per
 *   file), TEST_CONCURRENCY processes at a time (default 3 on PGlite: the files wait on I/O and timers
 *   a good part of their time; 1 on PostgreSQL, where the files share one database and pg-boss's
 *   queues). Files that read the process's Prometheus counters (ALONE) get a process of their own;
 * - packing, longest first, by the wall times of the last run (node_modules/.cache/cms-test/timings.json
 *   over the committed test/timings.json, a quiet PGlite run; TEST_SAVE_TIMINGS=1 writes this run's
 *   into it, without files that no longer exist), into about TEST_PROCESSES_PER_WORKER (4) processes
 *   per worker, so that the run does not end with one long process alone;
 * - the migrated PGlite template made once before the files start (test/helpers/server.ts
 *   ensurePgliteTemplate); the files' databases in a directory of this run on a RAM file system
 *   (/dev/shm; CMS_TEST_TMPDIR), removed at the end; Node's compile cache between processes; V8's
 *   baseline WebAssembly compiler only (`--liftoff-only`: the optimising one cost more CPU time than it
 *   saved in processes that live seconds).
 *
 * Other options (environment): TEST_GROUP=0 gives every file a process of its own; CMS_TEST_POOL=0
 * starts a new server for every file; TEST_VERBOSE=1 prints every process's output; TEST_CPU=1 adds
 * each process's CPU time and peak memory (/usr/bin/time); TEST_NODE_FLAGS replaces `--liftoff-only`.
 * Exit code: 0 when every file passed, 1 otherwise.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What one file's run showed (from test/helpers/file-reporter.ts). */
interface FileResult {
  file: string;
  ok: boolean;
  wallS: number;
}

/** What one test process showed: its files, the spec reporter's counts, CPU time if measured. */
interface ProcessResult {
  files: FileResult[];
  ok: boolean;
  wallS: number;
  counts: Record<string, number>;
  cpuS?: number;
  maxRssMb?: number;
  output: string;
}

/**
 * Files that read the Prometheus registry, which is one per process (src/metrics.ts): the counters of
 * another file's server in the same process would show in theirs.
 */
const ALONE = new Set(['test/pipeline/metrics.test.ts', 'test/events/delivery.test.ts', 'test/receipts/whatsapp-receipts.test.ts']);

const root = path.resolve(import.meta.dirname, '..');
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const cacheDir = path.join(root, 'node_modules', '.cache', 'cms-test');
const timingsFile = path.join(cacheDir, 'timings.json');
/** Committed wall times (refresh: copy timingsFile there after a quiet run on PGlite). */
const seedTimingsFile = path.join(root, 'test', 'timings.json');
const concurrency = onPostgres ? 1 : Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 3));
const grouping = process.env.TEST_GROUP !== '0';
const verbose = process.env.TEST_VERBOSE === '1';
const measureCpu = process.env.TEST_CPU === '1' && fs.existsSync('/usr/bin/time');
const nodeFlags = (process.env.TEST_NODE_FLAGS ?? '--liftoff-only').split(/\s+/).filter(Boolean);
/** This run's directory for the files' databases and the reporters' files (RAM file system when there is one). */
const runTmp = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'cms-run-'));
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  FORCE_COLOR: '0',
  CMS_TEST_TMPDIR: runTmp,
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(cacheDir, 'compile'),
};
/** Processes per worker the files are packed into (see the module comment). */
const PROCESSES_PER_WORKER = Number(process.env.TEST_PROCESSES_PER_WORKER ?? 4);
/** Estimated seconds of a file never timed. */
const UNKNOWN_S = 20;

/** The tiers of test files (test/README.md), and the tier of a file by its name. */
type Tier = 'unit' | 'process' | 'browser';
function tierOf(file: string): Tier {
  return file.endsWith('.browser.test.ts') ? 'browser' : file.endsWith('.process.test.ts') ? 'process' : 'unit';
}
const tiers = new Set((process.env.TEST_TIERS ?? 'unit,process,browser').split(',').map((t) => t.trim()).filter(Boolean));

/** The files the globs name, of the tiers kept, relative to the repository root, each once, sorted by name. */
function expand(globs: string[]): string[] {
  const files = new Set<string>();
  for (const g of globs) for (const f of fs.globSync(g, { cwd: root })) if (tiers.has(tierOf(f))) files.add(f);
  return [...files].sort();
}

/** The JSON object in `file`, or an empty one when it is missing or unreadable. */
function readJson(file: string): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Wall times (s) by file: the last run's on this machine over the committed ones (test/timings.json,
 * a quiet PGlite run), so that a fresh clone packs its processes as well as a second run does.
 */
function readTimings(): Record<string, number> {
  return { ...readJson(seedTimingsFile), ...readJson(timingsFile) };
}

/** The spec reporter's closing counts (`ℹ tests 12`, `ℹ pass 12`, ...). */
function parseCounts(output: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of output.matchAll(/^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

/**
 * Packs the files, longest first, into processes of at most `target` estimated seconds (a longer file
 * alone; ALONE files alone; every file alone without grouping).
 */
function pack(files: string[], estimate: (f: string) => number, target: number): string[][] {
  const sorted = [...files].sort((a, b) => estimate(b) - estimate(a));
  const groups: { files: string[]; s: number }[] = [];
  for (const f of sorted) {
    const open = grouping && !ALONE.has(f) ? groups.find((g) => !ALONE.has(g.files[0]) && g.s + estimate(f) <= target) : undefined;
    if (open) {
      open.files.push(f);
      open.s += estimate(f);
    } else {
      groups.push({ files: [f], s: estimate(f) });
    }
  }
  return groups.sort((a, b) => b.s - a.s).map((g) => g.files);
}

/** Runs `files` in one test process (test/helpers/run-files.ts) and collects its output. */
function runProcess(files: string[], id: number): Promise<ProcessResult> {
  const reportFile = path.join(runTmp, `files-${id}.jsonl`);
  const node = [
    process.execPath, ...nodeFlags, '--test', '--test-isolation=none', '--test-force-exit',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'test/helpers/file-reporter.ts')}`, `--test-reporter-destination=${reportFile}`,
    path.join(root, 'test/helpers/run-files.ts'),
  ];
  const timeOut = path.join(runTmp, `time-${id}`);
  const [cmd, ...args] = measureCpu ? ['/usr/bin/time', '-f', '%U %S %M', '-o', timeOut, ...node] : node;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnv, CMS_TEST_FILES: JSON.stringify(files) } });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('close', (code) => {
      const seen = new Map<string, FileResult>();
      try {
        for (const l of fs.readFileSync(reportFile, 'utf8').split('\n').filter(Boolean)) {
          const r = JSON.parse(l) as { file: string; ok: boolean; durationMs: number };
          seen.set(r.file, { file: r.file, ok: r.ok, wallS: r.durationMs / 1000 });
        }
      } catch { /* the process died before reporting */ }
      const wallS = (performance.now() - started) / 1000;
      // A file the reporter never saw finish failed (the process died or hung in it).
      const results = files.map((f) => seen.get(f) ?? { file: f, ok: false, wallS: 0 });
      const result: ProcessResult = { files: results, ok: code === 0 && results.every((r) => r.ok), wallS, counts: parseCounts(output), output };
      if (measureCpu) {
        try {
          const [user, sys, rssKb] = fs.readFileSync(timeOut, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
          result.cpuS = user + sys;
          result.maxRssMb = rssKb / 1024;
        } catch { /* time(1) wrote nothing: leave the CPU time out */ }
      }
      resolve(result);
    });
  });
}

/** The lines printed for a finished process: one per file, then its totals. */
function lines(p: ProcessResult): string {
  const c = p.counts;
  const cpu = p.cpuS !== undefined ? `, cpu ${p.cpuS.toFixed(1)} s, peak ${Math.round(p.maxRssMb ?? 0)} MB` : '';
  const files = p.files.map((r) => `${r.ok ? '✔' : '✖'} ${r.file} (${r.wallS.toFixed(1)} s)`).join('\n');
  return `${files}\n  └ process: ${c.pass ?? 0}/${c.tests ?? 0} tests passed${c.fail ? `, ${c.fail} failed` : ''} in ${p.wallS.toFixed(1)} s${cpu}`;
}

/** Makes the migrated PGlite template (test/helpers/server.ts) in a process of its own; false if that failed. */
function makeTemplate(): Promise<boolean> {
  const script = "await (await import('./test/helpers/server.ts')).ensurePgliteTemplate();";
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], { cwd: root, stdio: 'inherit', env: childEnv });
    child.on('close', (code) => resolve(code === 0));
  });
}

async function main(): Promise<number> {
  const files = expand(process.argv.slice(2));
  if (files.length === 0) {
    console.error('no test files match', process.argv.slice(2).join(' '), `(tiers ${[...tiers].join(', ')})`);
    return 1;
  }
  if (!onPostgres && !(await makeTemplate())) {
    console.error('could not make the PGlite template');
    return 1;
  }
  const last = readTimings();
  const estimate = (f: string) => last[f] ?? UNKNOWN_S;
  const total = files.reduce((n, f) => n + estimate(f), 0);
  // Browser files are packed apart, and one browser process runs at a time beside the others (two when
  // there are only browser files): Chromium takes a core of its own, and three at once (the longest
  // files, so the first ones started) slowed each past 15 s.
  const target = Math.max(25, total / concurrency / PROCESSES_PER_WORKER);
  const isBrowser = (group: string[]) => tierOf(group[0]) === 'browser';
  const queue = [...pack(files.filter((f) => tierOf(f) === 'browser'), estimate, target), ...pack(files.filter((f) => tierOf(f) !== 'browser'), estimate, target)]
    .sort((a, b) => b.reduce((n, f) => n + estimate(f), 0) - a.reduce((n, f) => n + estimate(f), 0));
  const started = performance.now();
  const results: ProcessResult[] = [];
  let nextId = 0;
  let browsers = 0;
  const browserLimit = files.every((f) => tierOf(f) === 'browser') ? Math.min(2, concurrency) : 1;
  let finished: () => void = () => {};
  /** The next group a worker may start (no browser process past the limit), waiting for one to end if need be. */
  const take = async (): Promise<string[] | undefined> => {
    for (;;) {
      const i = queue.findIndex((g) => !isBrowser(g) || browsers < browserLimit);
      if (i >= 0) return queue.splice(i, 1)[0];
      if (queue.length === 0) return undefined;
      await new Promise<void>((resolve) => { const prev = finished; finished = () => { prev(); resolve(); }; });
    }
  };
  const worker = async () => {
    for (let group = await take(); group !== undefined; group = await take()) {
      if (isBrowser(group)) browsers++;
      const r = await runProcess(group, nextId++);
      if (isBrowser(group)) browsers--;
      const wake = finished;
      finished = () => {};
      wake();
      results.push(r);
      console.log(lines(r));
      if (!r.ok || verbose) console.log(r.output);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  const wallS = (performance.now() - started) / 1000;

  const fileResults = results.flatMap((r) => r.files);
  fs.mkdirSync(path.dirname(timingsFile), { recursive: true });
  const measured = fileResults.filter((r) => r.ok).map((r) => [r.file, Number(r.wallS.toFixed(2))]);
  fs.writeFileSync(timingsFile, JSON.stringify({ ...last, ...Object.fromEntries(measured) }, null, 1));
  if (process.env.TEST_SAVE_TIMINGS === '1') {
    const kept = Object.entries({ ...readJson(seedTimingsFile), ...Object.fromEntries(measured) }).filter(([f]) => fs.existsSync(path.join(root, f)));
    fs.writeFileSync(seedTimingsFile, JSON.stringify(Object.fromEntries(kept.sort(([a], [b]) => a.localeCompare(b))), null, 1) + '\n');
  }

  const sum = (k: string) => results.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const failed = fileResults.filter((r) => !r.ok);
  console.log('\nslowest files:');
  for (const r of [...fileResults].sort((a, b) => b.wallS - a.wallS).slice(0, 12)) console.log(`  ${r.wallS.toFixed(1).padStart(6)} s  ${r.file}`);
  const cpu = results.every((r) => r.cpuS !== undefined) ? `, cpu ${results.reduce((n, r) => n + (r.cpuS ?? 0), 0).toFixed(0)} s` : '';
  console.log(
    `\n${files.length} files in ${results.length} processes, ${sum('tests')} tests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skipped')} skipped, ${sum('todo')} todo, ${sum('cancelled')} cancelled` +
      ` in ${wallS.toFixed(1)} s (${concurrency} at a time${onPostgres ? ', PostgreSQL' : ', PGlite'}, tiers ${[...tiers].join(', ')}${cpu})`,
  );
  if (failed.length > 0) console.log(`failed files:\n${failed.map((r) => `  ${r.file}`).join('\n')}`);
  return failed.length === 0 && results.every((r) => r.ok) ? 0 : 1;
}

process.on('SIGINT', () => {
  fs.rmSync(runTmp, { recursive: true, force: true });
  process.exit(130);
});
try {
  process.exitCode = await main();
} finally {
  fs.rmSync(runTmp, { recursive: true, force: true });
}
