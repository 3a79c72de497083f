/**
 * A `cms serve --role worker` process takes its young generation (src/cli/worker-heap.ts,
 * WORKER_SEMI_SPACE_MB, docs/operations.md "Sizing"): the arguments it restarts with, when it does
 * not restart, and a real worker process whose command line shows the flag under the same PID.
 *
 * The real process runs on a database of its own (a copy of the test template's PGlite in a temporary
 * directory, whatever database the suite uses): a worker attached to the suite's PostgreSQL would take
 * other tests' jobs. WORKER_SEMI_SPACE_MB=0 is checked above with a stand-in for `execve`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execWorkerHeap, workerExecArgv, type ProcessImage } from '../../src/cli/worker-heap.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { CHILD_NODE_FLAGS, seedDataDir } from '../helpers/server.ts';

const CMS = path.resolve('bin/cms.js');

describe('the arguments of a worker', () => {
  it('drops every young-generation flag, in any spelling, and puts the wanted one last', () => {
    assert.deepEqual(workerExecArgv(['--max-semi-space-size=8', '--max-old-space-size=1024'], 32), ['--max-old-space-size=1024', '--max-semi-space-size=32']);
    assert.deepEqual(workerExecArgv(['--max_semi_space_size', '16', '--enable-source-maps'], 32), ['--enable-source-maps', '--max-semi-space-size=32']);
    assert.deepEqual(workerExecArgv(['--max-semi-space-size=8', '--max-semi-space-size=64'], 24), ['--max-semi-space-size=24']);
    assert.deepEqual(workerExecArgv([], 32), ['--max-semi-space-size=32']);
    assert.deepEqual(workerExecArgv(['--max-semi-space-sizes=3'], 32), ['--max-semi-space-sizes=3', '--max-semi-space-size=32'], 'only the flag itself');
  });

  it('restarts with the same script and arguments, and not at all when it has nothing to change', () => {
    const calls: [string, string[]][] = [];
    const image = (execArgv: string[], withExecve = true): ProcessImage => ({
      execPath: '/usr/bin/node', execArgv, argv: ['/usr/bin/node', '/srv/cms/bin/cms.js', 'serve', '--role', 'worker'], env: { A: '1' },
      ...(withExecve ? { execve: ((file: string, args: string[]) => { calls.push([file, args]); }) as unknown as ProcessImage['execve'] } : {}),
    });
    execWorkerHeap(32, image(['--max-semi-space-size=8', '--max-old-space-size=1024']));
    assert.deepEqual(calls, [['/usr/bin/node', ['/usr/bin/node', '--max-old-space-size=1024', '--max-semi-space-size=32', '/srv/cms/bin/cms.js', 'serve', '--role', 'worker']]]);
    calls.length = 0;
    execWorkerHeap(32, image(['--max-old-space-size=1024', '--max-semi-space-size=32']));
    execWorkerHeap(0, image(['--max-semi-space-size=8']));
    execWorkerHeap(32, image(['--max-semi-space-size=8'], false));
    assert.deepEqual(calls, [], 'already 32, switched off, or no execve: nothing');
  });

  it('WORKER_SEMI_SPACE_MB: 32 by default, 0 to keep Node\'s flags, a whole number of MB up to 1024', () => {
    assert.equal(loadConfig({}).workerSemiSpaceMb, 32);
    assert.equal(loadConfig({ WORKER_SEMI_SPACE_MB: '0' }).workerSemiSpaceMb, 0);
    assert.equal(loadConfig({ WORKER_SEMI_SPACE_MB: '64' }).workerSemiSpaceMb, 64);
    for (const bad of ['-1', '1025', '16MB', 'x']) assert.throws(() => loadConfig({ WORKER_SEMI_SPACE_MB: bad }), ConfigError, bad);
  });
});

/** `cms`'s own Node flags, as its first line and `npm start` give them. */
const CMS_FLAGS = ['--max-semi-space-size=8', '--max-old-space-size=1024'];

/** Starts `node <CMS_FLAGS> bin/cms.js serve --role worker` until it runs; resolves to its PID's command line. */
async function workerCommandLine(): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-worker-heap-'));
  await seedDataDir(dataDir);
  const childEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete childEnv.DATABASE_URL;
  delete childEnv.WORKER_SEMI_SPACE_MB;
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, ...CMS_FLAGS, CMS, 'serve', '--role', 'worker'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (b: Buffer) => { out += b.toString(); if (out.includes('cms worker running')) resolve(); });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before running: ${out}`)));
    });
    // The PID spawn() returned: the process image was replaced, not a new process started.
    return fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } finally {
    const exited = new Promise((resolve) => { if (child.exitCode !== null) resolve(child.exitCode); else child.once('exit', resolve); });
    child.kill('SIGTERM');
    assert.equal(await exited, 0, 'the worker stops cleanly on SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('a real worker process', { skip: !fs.existsSync('/proc/self/cmdline') && 'needs /proc' }, () => {
  it('runs under the PID it was started with, with --max-semi-space-size=32 and the rest of its arguments', async () => {
    const cmdline = await workerCommandLine();
    assert.deepEqual(cmdline.slice(1), [...CHILD_NODE_FLAGS, '--max-old-space-size=1024', '--max-semi-space-size=32', CMS, 'serve', '--role', 'worker']);
  });
});
