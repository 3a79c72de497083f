/**
 * `npm test`: runs the given test files (globs) with Node's test runner, each file in a process of its own,
 * and prints one line per file, the output of every failing file, and the slowest files at the end.
 *
 * Scheduling: on the embedded PGlite every file has a database of its own (a copy of the migrated
 * template, `pgliteTemplate` in test/helpers/server.ts) and listens on ports of its own, so files run
 * TEST_CONCURRENCY at a time (default 3: the files wait on I/O and timers a good part of their time, so a
 * third process keeps 2 cores busy). Longest files start first (wall times of the last run, kept in
 * node_modules/.cache/cms-test/timings.json; a file never timed counts as long), so the run does not end
 * with one long file alone. On PostgreSQL (TEST_DATABASE_URL) the files share one database and pg-boss's
 * queues in it — one file's workers would take another file's jobs — so they run one at a time.
 *
 * What each file costs before its first test (starting Node, loading the service's modules, starting
 * PGlite) is most of the suite's CPU time on PGlite, so the runner keeps it down without changing what
 * any test runs or asserts:
 * - the migrated PGlite template is made once, before the files start (not by the first files at once);
 * - the files' database directories go to a directory of this run on a RAM file system (/dev/shm when
 *   there is one; CMS_TEST_TMPDIR), removed when the run ends, whatever the files left behind;
 * - Node's compile cache (NODE_COMPILE_CACHE, node_modules/.cache/cms-test/compile) keeps the
 *   compiled service modules between the file processes, so Node does not compile them again each time
 *   (`cms` does the same in production);
 * - V8 compiles PGlite's WebAssembly with its baseline compiler only (`--liftoff-only`): the optimising
 *   compiler's background work on the 8 MB module cost more CPU time than it saved in files that run
 *   a few seconds. It changes how fast the same code runs, nothing else.
 *
 * Options (environment): TEST_CONCURRENCY=n; TEST_VERBOSE=1 prints every file's output, not only the
 * failing ones'; TEST_CPU=1 measures each file's CPU time (user + system, its child processes included)
 * and peak memory with /usr/bin/time; TEST_NODE_FLAGS replaces the extra Node flags (default
 * `--liftoff-only`). Exit code: 0 when every file passed, 1 otherwise.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What one file's run showed: wall time in seconds, the spec reporter's counts, CPU time if measured. */
interface FileResult {
  file: string;
  ok: boolean;
  wallS: number;
  counts: Record<string, number>;
  cpuS?: number;
  maxRssMb?: number;
  output: string;
}

const root = path.resolve(import.meta.dirname, '..');
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const cacheDir = path.join(root, 'node_modules', '.cache', 'cms-test');
const timingsFile = path.join(cacheDir, 'timings.json');
const concurrency = onPostgres ? 1 : Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 3));
const verbose = process.env.TEST_VERBOSE === '1';
const measureCpu = process.env.TEST_CPU === '1' && fs.existsSync('/usr/bin/time');
const nodeFlags = (process.env.TEST_NODE_FLAGS ?? '--liftoff-only').split(/\s+/).filter(Boolean);
/** This run's directory for the files' databases (RAM file system when there is one). */
const runTmp = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'cms-run-'));
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  FORCE_COLOR: '0',
  CMS_TEST_TMPDIR: runTmp,
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(cacheDir, 'compile'),
};

/** The files the globs name, relative to the repository root, each once, sorted by name. */
function expand(globs: string[]): string[] {
  const files = new Set<string>();
  for (const g of globs) for (const f of fs.globSync(g, { cwd: root })) files.add(f);
  return [...files].sort();
}

/** Wall times (s) of the last run by file; empty when there was none. */
function readTimings(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(timingsFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The spec reporter's closing counts (`ℹ tests 12`, `ℹ pass 12`, ...). */
function parseCounts(output: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of output.matchAll(/^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

/** Runs one test file in its own process and collects its output. */
function runFile(file: string): Promise<FileResult> {
  const node = [process.execPath, ...nodeFlags, '--test', '--test-isolation=none', '--test-reporter=spec', file];
  const timeOut = measureCpu ? path.join(os.tmpdir(), `cms-test-time-${process.pid}-${file.replace(/\W/g, '_')}`) : '';
  const [cmd, ...args] = measureCpu ? ['/usr/bin/time', '-f', '%U %S %M', '-o', timeOut, ...node] : node;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('close', (code) => {
      const result: FileResult = { file, ok: code === 0, wallS: (performance.now() - started) / 1000, counts: parseCounts(output), output };
      if (measureCpu) {
        try {
          const [user, sys, rssKb] = fs.readFileSync(timeOut, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
          result.cpuS = user + sys;
          result.maxRssMb = rssKb / 1024;
          fs.rmSync(timeOut, { force: true });
        } catch { /* time(1) wrote nothing: leave the CPU time out */ }
      }
      resolve(result);
    });
  });
}

/** One summary line for a finished file. */
function line(r: FileResult): string {
  const c = r.counts;
  const cpu = r.cpuS !== undefined ? `, cpu ${r.cpuS.toFixed(1)} s, ${Math.round(r.maxRssMb ?? 0)} MB` : '';
  return `${r.ok ? '✔' : '✖'} ${r.file} (${c.pass ?? 0}/${c.tests ?? 0} passed${c.fail ? `, ${c.fail} failed` : ''}, ${r.wallS.toFixed(1)} s${cpu})`;
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
    console.error('no test files match', process.argv.slice(2).join(' '));
    return 1;
  }
  if (!onPostgres && !(await makeTemplate())) {
    console.error('could not make the PGlite template');
    return 1;
  }
  const last = readTimings();
  // Longest first; a file never timed first of all (it may be long).
  const queue = [...files].sort((a, b) => (last[b] ?? Infinity) - (last[a] ?? Infinity));
  const started = performance.now();
  const results: FileResult[] = [];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const r = await runFile(file);
      results.push(r);
      console.log(line(r));
      if (!r.ok || verbose) console.log(r.output);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  const wallS = (performance.now() - started) / 1000;

  fs.mkdirSync(path.dirname(timingsFile), { recursive: true });
  fs.writeFileSync(timingsFile, JSON.stringify({ ...last, ...Object.fromEntries(results.map((r) => [r.file, Number(r.wallS.toFixed(2))])) }, null, 1));

  const sum = (k: string) => results.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const failed = results.filter((r) => !r.ok);
  console.log('\nslowest files:');
  for (const r of [...results].sort((a, b) => b.wallS - a.wallS).slice(0, 12)) console.log(`  ${r.wallS.toFixed(1).padStart(6)} s  ${r.file}`);
  const cpu = results.every((r) => r.cpuS !== undefined) ? `, cpu ${results.reduce((n, r) => n + (r.cpuS ?? 0), 0).toFixed(0)} s` : '';
  console.log(
    `\n${files.length} files, ${sum('tests')} tests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skipped')} skipped, ${sum('todo')} todo, ${sum('cancelled')} cancelled` +
      ` in ${wallS.toFixed(1)} s (${concurrency} at a time${onPostgres ? ', PostgreSQL' : ', PGlite'}${cpu})`,
  );
  if (failed.length > 0) console.log(`failed files:\n${failed.map((r) => `  ${r.file}`).join('\n')}`);
  return failed.length === 0 ? 0 : 1;
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
