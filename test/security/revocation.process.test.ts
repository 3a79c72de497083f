/**
 * Revoked keys: once an operator revokes a key, every public route refuses it with
 * `401 {"detail":"Invalid API key"}`: at once in the process that revoked it, and within 5 seconds in
 * any other process serving the same PostgreSQL database (which may hold the key in its 2-second
 * authentication cache). The second process is a real `cms serve --role api` child process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const INVALID = '{"detail":"Invalid API key"}';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

/** The four public routes, each called with a body that passes validation for `ids`. */
function routes(ids: { segment: number; automation: number; campaign: number }) {
  return [
    { path: '/api/segments/create', body: { name: 'r' } },
    { path: `/api/segments/${ids.segment}/contacts`, body: { contacts: ['+4915112345678'], mode: 'add' } },
    { path: '/api/automations/send', body: { automation_id: ids.automation, contacts: [{ phone: '+4915112345678' }] } },
    { path: '/api/connector/send', body: { campaign_id: ids.campaign, contacts: [{ phone: '+4915112345678' }] } },
  ];
}

async function setup() {
  const c = await s.company();
  await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true });
  const template = { body: 'Hi' };
  const automation = (await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template })).automation_id;
  const campaign = (await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'c', template })).campaign_id;
  const segment = (await s.api('/api/segments/create', { key: c.key, body: { name: 's' } })).json.segment_id;
  return { ...c, ids: { segment, automation, campaign } };
}

test('a revoked key is refused on every public route, at once', async () => {
  const c = await setup();
  for (const r of routes(c.ids)) {
    await s.service.deps.rateLimiter.reset(`${c.companyId}:segment_contacts`);
    const before = await s.api(r.path, { key: c.key, body: r.body });
    assert.equal(before.status, 200, `${r.path} before revocation: ${before.text}`);
  }
  await s.admin('DELETE', `/admin/api-keys/${c.keyId}`, undefined, 204);
  for (const r of routes(c.ids)) {
    const after = await s.api(r.path, { key: c.key, body: r.body });
    assert.equal(after.status, 401, r.path);
    assert.equal(after.text, INVALID, r.path);
  }
  // Another key of the same company still works: revocation is per key.
  const other = await s.admin('POST', `/admin/companies/${c.companyId}/api-keys`, { label: 'second' });
  assert.equal((await s.api('/api/segments/create', { key: other.api_key, body: { name: 'still' } })).status, 200);
});

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

test('a second server process on the same PostgreSQL refuses a revoked key within 5 s', { skip: pgUrl ? false : 'PostgreSQL only: an embedded database belongs to one process' }, async () => {
  const c = await setup();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-second-'));
  const child: ChildProcess = spawn(process.execPath, ['bin/cms.js', 'serve', '--role', 'api'], {
    cwd: path.join(import.meta.dirname, '../..'),
    env: { ...process.env, DATABASE_URL: pgUrl, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, SECRETS_KEY: 'test-secrets-key-8Hm3Tq6Yk1Pd9Wf2', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => { stderr += d; });
  const second = `http://127.0.0.1:${port}`;
  try {
    await eventually(async () => (await fetch(second + '/healthz').catch(() => undefined))?.ok, 30_000, 100)
      .catch((err) => { throw new Error(`second process did not start: ${stderr}`, { cause: err }); });
    // An invalid body is answered 422 only after authentication: proof that the key is accepted (and
    // now cached) there, without spending rate-limit slots.
    const call = (p: string, body: unknown) => fetch(second + p, { method: 'POST', headers: { 'service-api-key': c.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const r of routes(c.ids)) {
      const warm = await call(r.path, { unknown: true });
      assert.equal(warm.status, 422, `${r.path} on the second process before revocation`);
    }
    await s.admin('DELETE', `/admin/api-keys/${c.keyId}`, undefined, 204);
    // Within 5 s of the revocation, every route of the second process refuses the key.
    await eventually(async () => {
      for (const r of routes(c.ids)) {
        const res = await call(r.path, { unknown: true });
        if (res.status !== 401 || (await res.text()) !== INVALID) return false;
      }
      return true;
    }, 5_000, 100);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
