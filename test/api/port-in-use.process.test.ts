/**
 * First-hour trap "port already in use": `cms serve` (what `npm start` runs) and
 * `node src/main.ts` on a busy port print one error and exit 1 before opening anything, leaving
 * nothing behind: the data directory stays empty (no embedded database, no `cms.pid`, no generated
 * `admin-token` or `secrets-key`), no process (its workers included) is still running, and the data
 * directory can be used right away by the next process. Real processes; the next start runs on a copy
 * of the tests' migrated template, so that it starts without migrating (a fresh start's migrations are
 * what `ensurePgliteTemplate` and test/api/start.process.test.ts go through). On PostgreSQL
 * (TEST_DATABASE_URL) also `cms serve --role api` with DATABASE_URL: nothing in the data directory.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CHILD_NODE_FLAGS, seedDataDir, testTmpDir } from '../helpers/server.ts';

const BIN = path.join(import.meta.dirname, '../../bin/cms.js');
const MAIN = path.join(import.meta.dirname, '../../src/main.ts');
const dirs: string[] = [];
after(() => { for (const d of dirs) fs.rmSync(d, { recursive: true, force: true }); });

async function busyPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const srv = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as net.AddressInfo).port, close: () => new Promise((r) => srv.close(() => r())) };
}

function run(args: string[], port: number, dataDir: string, databaseUrl?: string): Promise<{ code: number | null; output: string; pid: number }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.ADMIN_TOKEN;
  delete env.SECRETS_KEY;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(killer);
    resolve({ code, output, pid: child.pid! });
  }));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const [name, args] of [['cms serve', [BIN, 'serve']], ['node src/main.ts', [MAIN]]] as const) {
  test(`${name} on a busy port exits 1 and writes nothing into the data directory`, { timeout: 120_000 }, async () => {
    const busy = await busyPort();
    const dataDir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-busy-'));
    dirs.push(dataDir);
    try {
      const result = await run([...args], busy.port, dataDir);
      assert.equal(result.code, 1, result.output);
      assert.match(result.output, /EADDRINUSE/);
      // Checked before the database is opened and before the admin token and secrets key are generated.
      assert.deepEqual(fs.readdirSync(dataDir), [], 'no pglite, cms.pid, admin-token or secrets-key');
      assert.doesNotMatch(result.output, /migrations applied|generated one/);
      assert.ok(!alive(result.pid));
      if (name === 'cms serve') assert.match(result.output, /cannot listen: .*\(set HOST\/PORT\)/);
    } finally {
      await busy.close();
    }
    await seedDataDir(dataDir);
    // The data directory is free: the next start on a free port succeeds (and is stopped with SIGTERM).
    const next = spawn(process.execPath, [...CHILD_NODE_FLAGS, MAIN], { env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    next.stdout.on('data', (d) => { out += d; });
    next.stderr.on('data', (d) => { out += d; });
    const exited = new Promise<number | null>((r) => next.on('exit', (c) => r(c)));
    const deadline = Date.now() + 60_000;
    while (!/cms listening/.test(out) && Date.now() < deadline && next.exitCode === null) await new Promise((r) => setTimeout(r, 100));
    assert.match(out, /cms listening/, out);
    next.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
}

test('cms serve --role api with DATABASE_URL on a busy port exits 1 and writes nothing into the data directory', {
  timeout: 120_000, skip: process.env.TEST_DATABASE_URL ? false : 'PostgreSQL only (TEST_DATABASE_URL unset)',
}, async () => {
  const busy = await busyPort();
  const dataDir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-busy-pg-'));
  dirs.push(dataDir);
  try {
    const result = await run([BIN, 'serve', '--role', 'api'], busy.port, dataDir, process.env.TEST_DATABASE_URL);
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /cannot listen: .*EADDRINUSE.*\(set HOST\/PORT\)/);
    assert.deepEqual(fs.readdirSync(dataDir), [], 'no admin-token or secrets-key');
  } finally {
    await busy.close();
  }
});
