/**
 * Keys and secrets at rest: after an operator has created an API key, set webhook and
 * WhatsApp channels with their secrets, invited a console user, and messages have been delivered
 * through both providers, a dump of the database holds none of: the API key, the admin token, the
 * SECRETS_KEY, the webhook secret (as text or as its decoded HMAC key), the WhatsApp access token, the
 * invitation token.
 *
 * The dump: on PostgreSQL, `pg_dump` of a database created for this test (every schema, pg-boss's
 * included); on PGlite, the raw bytes of every file of its data directory (tables, indexes and WAL) and
 * of `dumpDataDir()`. On both, every row of every table, read back with SELECT.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { freshDatabase, type FreshDatabase } from '../fuzz/fresh-database.ts';
import { graphTemplate } from '../helpers/fake-graph.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { approveTemplates } from '../helpers/whatsapp.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const adminToken = 'cms_admin_' + randomBytes(24).toString('base64url');
const secretsKey = randomBytes(32).toString('base64url');
const webhookKeyBytes = randomBytes(32);
const webhookSecret = 'whsec_' + webhookKeyBytes.toString('base64');
const accessToken = 'EAAG' + randomBytes(40).toString('base64url');
const appSecret = randomBytes(16).toString('hex');
const verifyToken = 'verify-' + randomBytes(18).toString('base64url');

let s: TestServer;
let receiver: WebhookReceiver;
let fresh: FreshDatabase | undefined;

/** An operator API call with this test's own admin token. */
async function admin(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(s.url + p, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

before(async () => {
  // On PostgreSQL, a database of its own, so that the dump holds exactly what this test wrote.
  if (pgUrl) fresh = await freshDatabase(pgUrl, 'secrets');
  // The webhook receiver and the fake Graph API in one (a Graph message answer on /messages).
  receiver = await startReceiver({ answer: (r) => ({ status: 200, body: r.path.includes('/messages') ? '{"messages":[{"id":"wamid.1"}]}' : '{}' }) });
  s = await startTestServer({ env: { ADMIN_TOKEN: adminToken, SECRETS_KEY: secretsKey, ...(fresh ? { DATABASE_URL: fresh.url } : {}) } });
});

after(async () => {
  await s?.close();
  await receiver?.close();
  await fresh?.drop();
});

test('a database dump holds no API key, admin token, SECRETS_KEY, provider secret or invitation token', async () => {
  const template = { body: 'Hi {{ first_name }}', whatsapp: { name: 'hello', language: 'en' } };
  // Company A: webhook channel; company B: WhatsApp channel. Both deliver one message to the receiver.
  const a = await admin('POST', '/admin/companies', { name: 'Secret A', subscription_active: true });
  const b = await admin('POST', '/admin/companies', { name: 'Secret B', subscription_active: true });
  const keyA = (await admin('POST', `/admin/companies/${a.company_id}/api-keys`, { label: 'ci' })).api_key as string;
  const keyB = (await admin('POST', `/admin/companies/${b.company_id}/api-keys`, { label: 'ci' })).api_key as string;
  await admin('PUT', `/admin/companies/${a.company_id}/channel`, { provider: 'webhook', url: `${receiver.origin}/hook`, secret: webhookSecret });
  await admin('PUT', `/admin/companies/${b.company_id}/channel`, { provider: 'whatsapp', phone_number_id: String(100000000 + Math.floor(Math.random() * 899999999)), access_token: accessToken, api_base_url: `${receiver.origin}/v21.0`, app_secret: appSecret, verify_token: verifyToken });
  await approveTemplates(s, b.company_id, [graphTemplate('hello', 'en', { body: 1 })]);
  const invite = await admin('POST', `/admin/companies/${a.company_id}/users/invitations`, { email: 'ops@example.com' });
  const inviteToken = String(invite.invite_url).split('/').at(-1) as string;
  assert.ok(inviteToken.length >= 16, invite.invite_url);
  // Failed attempts with secrets in the wrong place must not be recorded either.
  await fetch(s.url + '/admin/companies', { headers: { authorization: `Bearer ${adminToken}x` } });
  await s.api('/api/segments/create', { key: keyA.slice(0, -1) + 'x', body: { name: 'n' } });

  for (const [company, key] of [[a, keyA], [b, keyB]] as const) {
    const auto = await admin('POST', `/admin/companies/${company.company_id}/automations`, { name: 'a', type: 'api', active: true, template });
    const sent = await s.api('/api/automations/send', { key, body: { automation_id: auto.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Ada' }] }, headers: { 'idempotency-key': 'secret-test' } });
    assert.equal(sent.status, 200, sent.text);
    await eventually(async () => (await admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed');
    const messages = await admin('GET', `/admin/batches/${sent.json.batch_id}/messages`);
    assert.equal(messages.messages[0].status, 'sent', JSON.stringify(messages));
  }
  assert.ok(receiver.seen.length >= 2, 'both providers delivered (so the secrets were used)');

  const secrets: Record<string, string[]> = {
    'API key': [keyA, keyB, keyA.slice('cms_live_'.length + 4), keyB.slice('cms_live_'.length + 4)],
    'admin token': [adminToken],
    SECRETS_KEY: [secretsKey],
    'webhook secret': [webhookSecret, webhookKeyBytes.toString('base64'), webhookKeyBytes.toString('hex'), webhookKeyBytes.toString('base64url')],
    'WhatsApp access token': [accessToken],
    'WhatsApp app secret': [appSecret],
    'WhatsApp verify token': [verifyToken],
    'invitation token': [inviteToken],
  };
  const binary: Record<string, Buffer[]> = { 'webhook secret': [webhookKeyBytes] };

  const dumps: [string, Buffer][] = [];
  const database = s.service.deps.database;
  if (database.kind === 'postgres') {
    const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', '--dbname', (fresh as FreshDatabase).url], { maxBuffer: 1 << 30, encoding: 'buffer' });
    dumps.push(['pg_dump', stdout as unknown as Buffer]);
  } else {
    const tar = Buffer.from(await (await (database.pglite as NonNullable<typeof database.pglite>).dumpDataDir('none')).arrayBuffer());
    dumps.push(['dumpDataDir', tar]);
    const files: string[] = fs.readdirSync(s.service.deps.config.dataDir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile()).map((d) => path.join(d.parentPath, d.name));
    assert.ok(files.length > 100, 'the data directory holds the database files');
    for (const f of files) dumps.push([f, fs.readFileSync(f)]);
  }
  // Every row of every table, in every schema, read back through SQL.
  const tables = await sql<{ table_schema: string; table_name: string }>`
    SELECT table_schema, table_name FROM information_schema.tables
    WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`.execute(database.db);
  assert.ok(tables.rows.some((t) => t.table_name === 'api_keys') && tables.rows.some((t) => t.table_schema === 'pgboss'));
  for (const t of tables.rows) {
    const rows = await sql<Record<string, unknown>>`SELECT * FROM ${sql.id(t.table_schema, t.table_name)}`.execute(database.db);
    const text = JSON.stringify(rows.rows, (_k, v) => (v && v.type === 'Buffer' && Array.isArray(v.data)
      ? [Buffer.from(v.data).toString('hex'), Buffer.from(v.data).toString('base64'), Buffer.from(v.data).toString('latin1')] : v));
    dumps.push([`SELECT * FROM ${t.table_schema}.${t.table_name}`, Buffer.from(text)]);
  }

  const total = dumps.reduce((n, [, d]) => n + d.length, 0);
  assert.ok(total > 10_000, `the dump is not empty (${total} bytes)`);
  // The dump does hold what was written: the positive control for the search.
  assert.ok(dumps.some(([, d]) => d.includes('Secret A') && d.includes('ops@example.com')), 'company and invitation found in the dump');
  for (const [what, values] of Object.entries(secrets)) {
    for (const v of values) {
      for (const [where, d] of dumps) assert.ok(!d.includes(v), `${what} in plain text in ${where}`);
    }
  }
  for (const [what, values] of Object.entries(binary)) {
    for (const v of values) {
      for (const [where, d] of dumps) assert.ok(!d.includes(v), `${what} (raw bytes) in ${where}`);
    }
  }
});
