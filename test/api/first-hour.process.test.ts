/**
 * The first-hour traps (what a new user meets in the first hour) that had no test where the user meets them (the others:
 * port in use test/api/port-in-use.process.test.ts, console PRG test/console/prg.test.ts and console.browser.test.ts,
 * templates test/admin/template-checks.test.ts, webhook secrets test/admin/webhook-secrets.test.ts,
 * DELETE with an empty JSON body test/admin/openapi-admin.test.ts). A real `cms serve` process on the
 * embedded database (its logs read from stdout), the `cms` CLI process, and the repository's files:
 *
 * - `GET /` answers a page linking `/docs` and `/console`; `/favicon.ico` is an image;
 * - `/healthz`, `/readyz` and `/metrics` requests are not logged at `info` (other requests are);
 * - no Prometheus gauge is named `*_total` (promtool: counters only);
 * - a loopback or private webhook / event URL is refused with a message naming PROVIDER_ALLOWED_HOSTS;
 * - a failing provider, and a template that fails while rendering, are logged at `warn`/`error` with
 *   company, batch and message ids and the error; a channel
 *   secret that cannot be decrypted (SECRETS_KEY changed) is logged at `error` with the company id
 *   (in-process service with its log captured);
 * - weak `ADMIN_TOKEN` / `SECRETS_KEY` values are refused at start with a clear message, and the README
 *   says how to generate them;
 * - Node older than 22 gets a message naming the required version (when such a Node is installed);
 * - the README and docs link nothing outside the repository;
 * - the CLI lists and shows companies, keys, automations, campaigns and batches (`batch list` pages
 *   newest first through GET /admin/companies/{id}/batches); `batch show
 *   --messages` shows the rendered text; CSV import reads `;` and tab files, reports invalid rows by
 *   line number and refuses an empty file.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/service.ts';
import { CHILD_NODE_FLAGS, eventually, seedDataDir, testTmpDir } from '../helpers/server.ts';
import { cliFor, type CliResult } from '../cli/helpers.ts';

const ROOT = path.join(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/cms.js');
const ADMIN_TOKEN = randomBytes(32).toString('hex');

interface LogLine { level: number; msg?: string; req?: { url?: string }; [k: string]: unknown }

let proc: ChildProcess;
let url: string;
let dataDir: string;
let out = '';
let receiver: http.Server;
let receiverUrl: string;

/** The JSON log lines the process printed so far (complete lines only). */
const logs = (): LogLine[] => out.split('\n').slice(0, -1).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);

/** Runs `cms` with `args` (the real CLI process, test/cli/helpers.ts) against the server. */
function cms(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return cliFor({ url }, ADMIN_TOKEN)(args, { env: { HOME: os.tmpdir(), ...env } });
}

async function adminCall(method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url + p, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

before(async () => {
  // A receiver that refuses every message for good (400): the provider's failure must reach the logs.
  receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"unknown recipient"}')); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/messages`;
  dataDir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-first-hour-'));
  // A migrated database to start from (a fresh one is test/api/start.process.test.ts's).
  await seedDataDir(dataDir);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: os.tmpdir(), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info',
    ADMIN_TOKEN, SECRETS_KEY: randomBytes(32).toString('base64'), PROVIDER_ALLOWED_HOSTS: '127.0.0.1',
  };
  proc = spawn(process.execPath, [...CHILD_NODE_FLAGS, BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  url = await eventually(async () => {
    if (proc.exitCode !== null) throw new Error(`cms serve exited with ${proc.exitCode}:\n${out}`);
    return logs().find((l) => l.msg === 'cms listening')?.address as string | undefined;
  }, 120_000);
});

after(async () => {
  proc?.kill('SIGTERM');
  if (proc && proc.exitCode === null) await new Promise((r) => proc.once('exit', r));
  await new Promise((r) => receiver?.close(r));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test('GET / links the API docs and the console; /favicon.ico is an image', async () => {
  const res = await fetch(url + '/');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const page = await res.text();
  assert.match(page, /href="\/docs"/);
  assert.match(page, /href="\/console"/);
  assert.match(page, /<html lang="en">/);
  const icon = await fetch(url + '/favicon.ico');
  assert.equal(icon.status, 200);
  assert.match(icon.headers.get('content-type') ?? '', /^image\//);
  const bytes = Buffer.from(await icon.arrayBuffer());
  assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
  assert.equal((await fetch(url + '/favicon.svg')).status, 200);
  assert.equal((await (await fetch(url + '/openapi.json')).json()).paths['/'], undefined, 'the landing page is not part of the API');
});

test('probes and metrics are not logged at info; other requests are', async () => {
  for (let i = 0; i < 3; i++) {
    assert.equal((await fetch(url + '/healthz')).status, 200);
    assert.equal((await fetch(url + '/readyz')).status, 200);
    assert.equal((await fetch(url + '/metrics')).status, 200);
  }
  await fetch(url + '/openapi.json');
  await eventually(async () => logs().some((l) => l.req?.url === '/openapi.json'), 10_000);
  const probes = logs().filter((l) => /^\/(healthz|readyz|metrics)/.test(l.req?.url ?? '') || /\/(healthz|readyz|metrics)$/.test(String(l.url ?? '')));
  assert.deepEqual(probes, []);
});

test('no Prometheus gauge is named like a counter (*_total)', async () => {
  const text = await (await fetch(url + '/metrics')).text();
  const gauges = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]);
  assert.ok(gauges.length > 0, 'the exposition has gauges');
  assert.deepEqual(gauges.filter((g) => g.endsWith('_total')), []);
});

test('a loopback or private URL is refused with a message naming PROVIDER_ALLOWED_HOSTS', async () => {
  const company = await adminCall('POST', '/admin/companies', { name: 'Trap Co', subscription_active: true });
  const id = company.json.company_id;
  const channel = await adminCall('PUT', `/admin/companies/${id}/channel`, { provider: 'webhook', url: 'http://10.0.0.7/hooks' });
  assert.equal(channel.status, 422);
  assert.match(JSON.stringify(channel.json), /PROVIDER_ALLOWED_HOSTS/);
  const endpoint = await adminCall('POST', `/admin/companies/${id}/event-endpoints`, { url: 'http://192.168.1.20/events' });
  assert.equal(endpoint.status, 422);
  assert.match(JSON.stringify(endpoint.json), /PROVIDER_ALLOWED_HOSTS/);
});

test('a provider failure is logged at warn or error with company, batch and message ids', async () => {
  const company = await adminCall('POST', '/admin/companies', { name: 'Failing Co', subscription_active: true, default_country: 'DE' });
  const id = company.json.company_id;
  assert.equal((await adminCall('PUT', `/admin/companies/${id}/channel`, { provider: 'webhook', url: receiverUrl })).status, 200);
  const key = (await adminCall('POST', `/admin/companies/${id}/api-keys`, { label: 'first hour' })).json.api_key;
  const automation = (await adminCall('POST', `/admin/companies/${id}/automations`, { name: 'Welcome', type: 'api', active: true, template: { body: 'Hello {{ first_name }}' } })).json;
  const res = await fetch(url + '/api/automations/send', {
    method: 'POST', headers: { 'content-type': 'application/json', 'service-api-key': key },
    body: JSON.stringify({ automation_id: automation.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Anna' }] }),
  });
  assert.equal(res.status, 200);
  const { batch_id: batchId } = await res.json();
  const line = await eventually(async () => logs().find((l) => l.level >= 40 && l.company_id === id && l.batch_id === batchId && typeof l.message_id === 'string'), 20_000);
  assert.ok(line);
  assert.match(String(line.error), /400/, 'the provider\'s answer is in the line');
});

test('a template that fails while rendering is logged at error with company, batch and message ids', async () => {
  const company = await adminCall('POST', '/admin/companies', { name: 'Render Co', subscription_active: true, default_country: 'DE' });
  const id = company.json.company_id;
  const key = (await adminCall('POST', `/admin/companies/${id}/api-keys`, { label: 'render' })).json.api_key;
  // Valid Liquid (saved), but no message of it fits the render's memory bound: it fails at fan-out.
  const automation = await adminCall('POST', `/admin/companies/${id}/automations`, { name: 'Runaway', type: 'api', active: true, template: { body: '{% for i in (1..100000000) %}{{ first_name }}{% endfor %}' } });
  assert.equal(automation.status, 201, JSON.stringify(automation.json));
  const res = await fetch(url + '/api/automations/send', {
    method: 'POST', headers: { 'content-type': 'application/json', 'service-api-key': key },
    body: JSON.stringify({ automation_id: automation.json.automation_id, contacts: [{ phone: '+4915112345679', first_name: 'Bert' }] }),
  });
  assert.equal(res.status, 200);
  const { batch_id: batchId } = await res.json();
  const line = await eventually(async () => logs().find((l) => l.level >= 50 && l.company_id === id && l.batch_id === batchId && typeof l.message_id === 'string'), 20_000);
  assert.match(String(line.error), /template/i);
});

/**
 * Starts `cms serve` with `env` and waits until it exits or listens (then stops it): its exit code
 * (null when it listened) and its output.
 */
async function startOrRefuse(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return await new Promise((resolve) => {
    const onData = (d: string) => {
      output += d;
      if (output.includes('"cms listening"')) {
        child.once('exit', () => resolve({ code: null, output }));
        child.kill('SIGTERM');
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

test('a channel secret that cannot be decrypted is logged at error with the company id (webhook receivers)', async () => {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const l of String(chunk).split('\n')) if (l.startsWith('{')) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  const dir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-undecryptable-'));
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl) await seedDataDir(dir);
  const config = loadConfig({ DATA_DIR: dir, ADMIN_TOKEN, SECRETS_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'info', ...(pgUrl ? { DATABASE_URL: pgUrl } : {}) });
  const service = await startService(config, { role: 'api', logger: pino({ level: 'info' }, stream) });
  try {
    const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    const call = async (method: string, p: string, body: unknown) =>
      (await fetch(base + p, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const { company_id: companyId } = await call('POST', '/admin/companies', { name: 'Rotated Key Co', subscription_active: true });
    const phoneNumberId = String(100000000000000 + Math.floor(Math.random() * 1e14));
    await call('PUT', `/admin/companies/${companyId}/channel`, { provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: 'EAAG-first-hour', app_secret: 'app-secret-1', verify_token: 'verify-1' });
    // What a changed SECRETS_KEY does to a stored secret: it no longer opens.
    await sql`UPDATE companies SET channel = jsonb_set(channel, '{app_secret_sealed}', to_jsonb('v1.not-sealed-with-this-key'::text)) WHERE company_id = ${companyId}`.execute(service.deps.database.db);
    const payload = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: { metadata: { phone_number_id: phoneNumberId }, statuses: [] } }] }] });
    const res = await fetch(`${base}/webhooks/whatsapp`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', 'app-secret-1').update(payload).digest('hex')}` }, body: payload,
    });
    assert.equal(res.status, 401);
    const logged = lines.find((l) => l.level >= 50 && l.company_id === companyId);
    assert.ok(logged, 'an error line with the company id');
    assert.match(String(logged.msg), /SECRETS_KEY/);
  } finally {
    await service.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('weak ADMIN_TOKEN and SECRETS_KEY are refused at start with a clear message', async () => {
  for (const [name, value] of [['ADMIN_TOKEN', 'secret'], ['SECRETS_KEY', '1234'], ['ADMIN_TOKEN', 'changeme-changeme-changeme-changeme'], ['SECRETS_KEY', 'a'.repeat(44)]]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-weak-'));
    try {
      const r = await startOrRefuse({ PATH: process.env.PATH, HOME: os.tmpdir(), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, ADMIN_TOKEN, SECRETS_KEY: randomBytes(32).toString('base64'), [name]: value });
      assert.ok(r.code !== null && r.code !== 0, `${name}=${value} must not start`);
      assert.match(r.output, new RegExp(name));
      assert.match(r.output, /openssl rand -base64 32/, 'names the command that generates a good value');
      assert.doesNotMatch(r.output, /^\s+at /m, 'no stack trace');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('the README says how to generate ADMIN_TOKEN and SECRETS_KEY (one command) and that weak values are refused', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /ADMIN_TOKEN="\$\(openssl rand -base64 32\)" SECRETS_KEY="\$\(openssl rand -base64 32\)"/);
  assert.match(readme, /refuses to\s+start on a value shorter than 32 characters/);
});

/** A Node older than 22 on this machine (the system one), if there is one. */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (r.status === 0 && Number(r.stdout.split('.')[0]) < 22) return candidate;
  }
  return undefined;
}

test('Node older than 22: a message naming the required version, not ERR_UNKNOWN_FILE_EXTENSION', (t) => {
  const node = oldNode();
  if (!node) return t.skip('no Node older than 22 installed here');
  const r = spawnSync(node, [BIN, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(r.status, 0);
  assert.doesNotMatch(r.stderr, /ERR_UNKNOWN_FILE_EXTENSION/);
  assert.match(r.stderr, /Node(\.js)? (>= ?)?22|requires Node(\.js)? 22/i);
});

test('README and docs link nothing outside the repository', () => {
  const files = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const broken: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    if (/shared\/spec/.test(text)) broken.push(`${file}: mentions shared/spec`);
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target)) continue;
      const resolved = path.resolve(path.dirname(path.join(ROOT, file)), target.split('#')[0]);
      if (!resolved.startsWith(ROOT + path.sep)) broken.push(`${file}: ${target} points outside the repository`);
      else if (!fs.existsSync(resolved)) broken.push(`${file}: ${target} does not exist`);
    }
  }
  assert.deepEqual(broken, []);
});

test('CLI: company list|show, key list, automation list|show, campaign list|show, batch show --messages with the rendered text', async () => {
  const c = await cms(['company', 'create', '--name', 'CLI Trap Co', '--subscription-active', '--default-country', 'DE', '--json']);
  assert.equal(c.code, 0, c.stderr);
  const id = String(JSON.parse(c.stdout).company_id);
  assert.match((await cms(['company', 'list'])).stdout, /CLI Trap Co/);
  assert.match((await cms(['company', 'show', id])).stdout, /CLI Trap Co/);
  const k = await cms(['key', 'create', '--company', id, '--label', 'shop', '--json']);
  assert.equal(k.code, 0, k.stderr);
  const key = JSON.parse(k.stdout).api_key as string;
  assert.match((await cms(['key', 'list', '--company', id])).stdout, /shop/);
  const a = await cms(['automation', 'create', '--company', id, '--name', 'Order shipped', '--type', 'api', '--body', 'Hi {{ first_name }}, order {{ order_id }} ships', '--json']);
  assert.equal(a.code, 0, a.stderr);
  const automationId = String(JSON.parse(a.stdout).automation_id);
  assert.match((await cms(['automation', 'list', '--company', id])).stdout, /Order shipped/);
  assert.match((await cms(['automation', 'show', automationId])).stdout, /order_id/);
  const cp = await cms(['campaign', 'create', '--company', id, '--name', 'Summer sale', '--body', 'Sale starts today', '--json']);
  assert.equal(cp.code, 0, cp.stderr);
  assert.match((await cms(['campaign', 'list', '--company', id])).stdout, /Summer sale/);
  assert.match((await cms(['campaign', 'show', String(JSON.parse(cp.stdout).campaign_id)])).stdout, /Sale starts today/);
  const res = await fetch(url + '/api/automations/send', {
    method: 'POST', headers: { 'content-type': 'application/json', 'service-api-key': key },
    body: JSON.stringify({ automation_id: Number(automationId), contacts: [{ phone: '+4915112345678', first_name: 'Anna', variables: { order_id: 'A-1042' } }] }),
  });
  const { batch_id: batchId } = await res.json();
  const shown = await eventually(async () => {
    const r = await cms(['batch', 'show', batchId, '--messages']);
    return r.stdout.includes('Hi Anna, order A-1042 ships') ? r : undefined;
  }, 60_000, 500);
  assert.equal(shown.code, 0);
});

/** A company with an API key and an active API automation, made through the operator API. */
async function sendingCompany(name: string): Promise<{ id: number; key: string; automationId: number }> {
  const id = (await adminCall('POST', '/admin/companies', { name, subscription_active: true, default_country: 'DE' })).json.company_id;
  const key = (await adminCall('POST', `/admin/companies/${id}/api-keys`, { label: 'list' })).json.api_key;
  const automationId = (await adminCall('POST', `/admin/companies/${id}/automations`, { name: 'Ping', type: 'api', active: true, template: { body: 'Ping {{ first_name }}' } })).json.automation_id;
  return { id, key, automationId };
}

/** Triggers the automation once for `phone`; the batch id. */
async function trigger(c: { key: string; automationId: number }, phone: string): Promise<string> {
  const res = await fetch(url + '/api/automations/send', {
    method: 'POST', headers: { 'content-type': 'application/json', 'service-api-key': c.key },
    body: JSON.stringify({ automation_id: c.automationId, contacts: [{ phone, first_name: 'Li' }] }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).batch_id;
}

test('CLI: batch list of a company, newest first, a page at a time', async () => {
  const help = await cms(['batch', '--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^\s+list\b/m);
  const a = await sendingCompany('Batch List Co');
  const other = await sendingCompany('Other Batch Co');
  const sent = [];
  for (const phone of ['+4915112345621', '+4915112345622', '+4915112345623']) sent.push(await trigger(a, phone));
  const otherBatch = await trigger(other, '+4915112345624');

  const first = await cms(['batch', 'list', '--company', String(a.id), '--limit', '2', '--json']);
  assert.equal(first.code, 0, first.stderr);
  const page1 = JSON.parse(first.stdout);
  assert.deepEqual(page1.batches.map((b: { batch_id: string }) => b.batch_id), [sent[2], sent[1]], 'newest first');
  assert.equal(page1.batches[0].company_id, a.id);
  assert.equal(page1.batches[0].counts.total, 1);
  assert.equal(page1.next_before, sent[1]);
  const page2 = JSON.parse((await cms(['batch', 'list', '--company', String(a.id), '--limit', '2', '--before', page1.next_before, '--json'])).stdout);
  assert.deepEqual(page2.batches.map((b: { batch_id: string }) => b.batch_id), [sent[0]]);
  assert.equal(page2.next_before, null);

  const text = await cms(['batch', 'list', '--company', String(a.id), '--limit', '2']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(sent[2]));
  assert.doesNotMatch(text.stdout, new RegExp(sent[0]));
  assert.match(text.stdout, new RegExp(`--before ${sent[1]}`), 'the command for the next page');
  assert.doesNotMatch(text.stdout, new RegExp(otherBatch), 'only this company\'s batches');

  // Another company's batch as the cursor tells nothing about it: an empty page, as for an unknown id.
  const foreign = await adminCall('GET', `/admin/companies/${a.id}/batches?before=${otherBatch}`);
  assert.equal(foreign.status, 200);
  assert.deepEqual(foreign.json, { batches: [], next_before: null });
  assert.deepEqual((await adminCall('GET', `/admin/companies/${a.id}/batches?before=00000000-0000-4000-8000-000000000000`)).json, foreign.json);
  assert.equal((await adminCall('GET', '/admin/companies/2147483000/batches')).status, 404);
  for (const q of ['limit=0', 'limit=101', 'limit=x', 'before=not-a-uuid']) {
    const bad = await adminCall('GET', `/admin/companies/${a.id}/batches?${q}`);
    assert.equal(bad.status, 422, q);
    assert.ok(Array.isArray(bad.json.detail), q);
  }
  const unknown = await cms(['batch', 'list', '--company', '2147483000']);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /Company not found/);
});

/** A temporary directory with CSV files for `cms contacts import`; removed by the caller. */
function csvFiles(): { dir: string; write: (name: string, text: string) => string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-import-'));
  return { dir, write: (name, text) => { const f = path.join(dir, name); fs.writeFileSync(f, text); return f; } };
}

test('CLI: contacts import reads ; and tab separated files', async () => {
  const company = await adminCall('POST', '/admin/companies', { name: 'Import Co', subscription_active: true, default_country: 'DE' });
  const id = String(company.json.company_id);
  const { dir, write } = csvFiles();
  try {
    const semicolon = await cms(['contacts', 'import', '--company', id, write('semi.csv', 'phone;first_name\n+4915112345601;Anna\n+4915112345602;Carla\n')]);
    assert.equal(semicolon.code, 0, semicolon.stderr);
    const tab = await cms(['contacts', 'import', '--company', id, write('tab.csv', 'phone\tfirst_name\n+4915112345603\tDora\n')]);
    assert.equal(tab.code, 0, tab.stderr);
    for (const phone of ['+4915112345602', '+4915112345603']) {
      const stored = await adminCall('GET', `/admin/companies/${id}/contacts/${encodeURIComponent(phone)}`);
      assert.equal(stored.status, 200, `${phone} imported`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: contacts import reports invalid rows by line number and refuses an empty file', async () => {
  const company = await adminCall('POST', '/admin/companies', { name: 'Import Errors Co', subscription_active: true, default_country: 'DE' });
  const id = String(company.json.company_id);
  const { dir, write } = csvFiles();
  try {
    const r = await cms(['contacts', 'import', '--company', id, write('bad.csv', 'phone,first_name\n+4915112345611,Anna\nnot a number,Bob\n')]);
    assert.match(r.stdout + r.stderr, /line 3\b/i, 'the invalid row is named by its line number');
    assert.doesNotMatch(r.stdout, /line 2\b/, 'the valid row is not');
    // National numbers are valid with the company's default country; a row without a phone is named too.
    const mixed = await cms(['contacts', 'import', '--company', id, '--json', write('mixed.csv', 'phone;first_name\n015112345612;Carla\n;Nobody\n12;Dora\n+4915112345613;Emil\n')]);
    assert.equal(mixed.code, 0, mixed.stderr);
    const summary = JSON.parse(mixed.stdout);
    assert.equal(summary.created, 2);
    assert.equal(summary.invalid, 2);
    assert.deepEqual(summary.invalid_rows.map((x: { line: number; phone?: string }) => [x.line, x.phone]), [[3, undefined], [4, '12']]);
    for (const [name, text] of [['empty.csv', ''], ['blank.csv', '\uFEFF\n  \n']]) {
      const empty = await cms(['contacts', 'import', '--company', id, write(name, text)]);
      assert.notEqual(empty.code, 0, name);
      assert.match(empty.stderr, /empty/i, name);
      assert.match(empty.stderr, /header row/, name);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
