/**
 * The process as operators run it: `npm start`'s entry point on the embedded
 * default generates the admin token into DATA_DIR, survives kill -9 and restarts on the same data
 * without manual clean-up, refuses a second process on the same data directory, and stops gracefully
 * (exit code 0) on SIGTERM. Embedded database only: it is what `npm start` uses.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CHILD_NODE_FLAGS } from '../helpers/server.ts';

const MAIN = path.join(import.meta.dirname, '../../src/main.ts');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-proc-'));
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

function start(port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.ADMIN_TOKEN;
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

async function ready(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch { /* starting */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('not ready');
}

test('embedded default: token file, kill -9 and restart, one process per data dir, graceful SIGTERM', { timeout: 180_000 }, async () => {
  const port = await freePort();
  const first = start(port);
  await ready(port);
  const tokenFile = path.join(dataDir, 'admin-token');
  assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  assert.match(first.output(), /admin-token/, 'the log says where the generated token is');
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await (await fetch(`http://127.0.0.1:${port}/admin/companies`, { method: 'POST', headers: auth, body: '{"name":"Survivor"}' })).json();

  first.child.kill('SIGKILL');
  await first.exited;

  const second = start(port);
  await ready(port);
  const again = await (await fetch(`http://127.0.0.1:${port}/admin/companies/${created.company_id}`, { headers: auth })).json();
  assert.equal(again.name, 'Survivor');

  const intruder = start(await freePort());
  assert.notEqual(await intruder.exited, 0, 'a second process on the same data directory refuses to start');
  assert.match(intruder.output(), /in use by process/);

  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
  assert.match(second.output(), /shutting down/);
});
