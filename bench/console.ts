/**
 * Console benchmark: every console page with 100,000 contacts and 1,000,000
 * messages on PostgreSQL, and the contacts CSV export's memory.
 *
 *   node bench/console.ts [--db postgres://postgres@127.0.0.1:5432/postgres] [--contacts 100000]
 *                         [--messages 1000000] [--requests 30] [--warmup 3] [--reuse] [--only PATH]
 *
 * Setup (not measured; `--reuse` keeps the data of an earlier run): a fresh database
 * `cms_bench_console` next to the one in the URL; four companies through the operator API, one of
 * them ("Bench", delivery hours in Europe/Berlin) with an owner user, 2 API keys, 3 automations,
 * 3 campaigns, 5 segments and an event endpoint; then set-based SQL (generate_series) writes its
 * `--contacts` contacts (3 % opted out, with variables), segment members (50 %, 20 %, 10 %, 1,000 and
 * 100 of the contacts), and `--messages` messages: 90 % in campaign batches of 500 and 10 % in
 * automation batches of one, accepted over the last 30 days, with statuses spread like a real month
 * (read, delivered, sent, pending, skipped for three reasons, failed with five error codes) and their
 * lifecycle times; a few hundred inbound replies. The three other companies get 1,000 contacts and
 * 10,000 messages each. VACUUM ANALYZE at the end (what autovacuum would have done by then).
 *
 * Measured: the service runs as its own process (`node bin/cms.js serve --role api`, as deployed).
 * A signed-in owner requests every console page — enumerated from the app's GET routes
 * (bench/console-pages.ts, so pages added later are measured too) with real ids, plus the search
 * and paging variants — `--warmup` times, then `--requests` times one after another, each timed to
 * the last byte of the body; p50, p95 and max per page. Then the contacts CSV export
 * (`/console/contacts/export.csv`, when the route exists) is downloaded while the server process's
 * RSS is sampled every 10 ms from /proc: RSS at rest before, the peak during, bytes and rows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceNodeOptions } from './lib/accept-load.ts';
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service.ts';
import { consoleGetRoutes, consolePages } from './console-pages.ts';

const ADMIN = 'bench-console-admin-5Dn8Gk2Wq7Rx4Vm';
const SECRETS = 'bench-console-secrets-9Lb3Ft6Yh1Pz8Kc';
const PASSWORD = 'correct horse battery staple';
const EMAIL = 'owner@bench.example.com';
const DB_NAME = 'cms_bench_console';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function dbUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A cookie-keeping client that fills console forms with their CSRF token (no redirects followed). */
class Browser {
  cookies = new Map<string, string>();
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  async request(method: string, p: string, form?: Record<string, string>): Promise<{ status: number; text: string; location: string | null }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(this.base + p, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0];
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(pair.slice(0, eq).trim());
      else this.cookies.set(pair.slice(0, eq).trim(), value);
    }
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  }
  async submit(page: string, action: string, form: Record<string, string>) {
    const { text } = await this.request('GET', page);
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (!token) throw new Error(`no CSRF token on ${page}`);
    return this.request('POST', action, { _csrf: token, ...form });
  }
}

interface Ids { [name: string]: string }

/** Companies, users, sources, segments, endpoint through the APIs; returns the ids the pages need. */
async function setupThroughApi(base: string, contacts: number): Promise<{ companyId: number; ids: Ids }> {
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(base + p, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const hours = { start: '08:00', end: '21:00', timezone: 'Europe/Berlin' };
  const bench = await admin('POST', '/admin/companies', { name: 'Bench', subscription_active: true, delivery_hours: hours });
  for (const name of ['Small A', 'Small B', 'Small C']) await admin('POST', '/admin/companies', { name, subscription_active: true });
  const companyId: number = bench.company_id;
  const key = await admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'shop backend' });
  await admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'crm sync' });
  const template = (body: string) => ({ body, buttons: [{ text: 'Open', url: 'https://shop.example.com/orders' }] });
  let automationId = 0;
  for (const name of ['Order shipped', 'Password reset', 'Welcome']) {
    const a = await admin('POST', `/admin/companies/${companyId}/automations`, { name, type: 'api', active: true, template: template(`Hi {{ first_name }}, ${name.toLowerCase()}: {{ city }}`) });
    automationId ||= a.automation_id;
  }
  let campaignId = 0;
  for (const name of ['Spring sale', 'Newsletter March', 'Loyalty points']) {
    const c = await admin('POST', `/admin/companies/${companyId}/campaigns`, { name, template: template(`{{ first_name }}, ${name} is here`) });
    campaignId ||= c.campaign_id;
  }
  let segmentId = 0;
  for (const name of ['Every second', 'Every fifth', 'Every tenth', 'First thousand', 'VIP']) {
    const res = await fetch(`${base}/api/segments/create`, { method: 'POST', headers: { 'service-api-key': key.api_key, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    const seg = await res.json() as { segment_id: number };
    segmentId ||= seg.segment_id;
  }
  const endpoint = await admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/cms-events', events: ['batch.completed'], description: 'Data warehouse' });
  const inv = await admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: EMAIL, role: 'owner' });
  const invPath = new URL(inv.invite_url).pathname;
  const accepted = await new Browser(base).submit(invPath, invPath, { password: PASSWORD, password_confirm: PASSWORD });
  if (accepted.status !== 303) throw new Error(`accepting the invitation: ${accepted.status} ${accepted.text.slice(0, 200)}`);
  // An open invitation, for the invitation page.
  const open = await admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: 'marketer@bench.example.com', role: 'marketer' });
  return {
    companyId,
    ids: {
      'automations/id': String(automationId), 'campaigns/id': String(campaignId), segmentId: String(segmentId),
      keyId: String(key.key_id), endpointId: String(endpoint.endpoint_id ?? endpoint.id), 'invite/token': new URL(open.invite_url).pathname.split('/').pop()!,
      contacts: String(contacts),
    },
  };
}

/** A second user of the company, a password reset link for it (made on every run: links are one-time), a contacts import. */
async function peopleIds(base: string, client: pg.Client, companyId: number): Promise<Ids> {
  const email = `second-${Date.now()}@bench.example.com`;
  const res = await fetch(`${base}/admin/companies/${companyId}/users/invitations`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const inv = await res.json() as { invite_url: string };
  const invPath = new URL(inv.invite_url).pathname;
  await new Browser(base).submit(invPath, invPath, { password: PASSWORD, password_confirm: PASSWORD });
  const userId = String((await client.query('SELECT user_id FROM console_users WHERE email = $1', [email])).rows[0].user_id);
  const owner = new Browser(base);
  await owner.submit('/console/login', '/console/login', { email: EMAIL, password: PASSWORD });
  const page = `/console/settings/users/${userId}`;
  await owner.submit(page, `${page}/reset-link`, {});
  const token = /\/console\/password-reset\/([A-Za-z0-9_-]+)/.exec((await owner.request('GET', page)).text)?.[1];
  // A contacts import, for its progress page (the api-only server leaves it queued).
  const imported = await fetch(`${base}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'text/csv' }, body: 'phone,first_name\n+4915199999999,Radia\n',
  });
  const importId = String(((await imported.json()) as { import_id: number }).import_id);
  return { userId, importId, ...(token ? { 'password-reset/token': token } : {}) };
}

/** The set-based part of the setup (see the module comment). */
async function generateData(client: pg.Client, companyId: number, contacts: number, messages: number): Promise<void> {
  const t0 = Date.now();
  const step = async (what: string, text: string, params: unknown[] = []) => {
    const s = Date.now();
    const r = await client.query(text, params);
    console.error(`  ${what}: ${r.rowCount ?? ''} rows, ${((Date.now() - s) / 1000).toFixed(1)} s`);
  };
  const companies = (await client.query<{ company_id: number }>('SELECT company_id FROM companies ORDER BY company_id')).rows.map((r) => r.company_id);
  const small = companies.filter((c) => c !== companyId);
  const NAMES = "ARRAY['Ada','Grace','Linus','Margaret','Alan','Barbara','Ken','Frances','Dennis','Radia']";
  const CITIES = "ARRAY['Berlin','Köln','Hamburg','München','Leipzig','Dresden','Bremen']";
  const insertContacts = (company: number, n: number, prefix: string) => step(`contacts of company ${company}`, `
    INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out, opt_out_source, opt_out_at, created_at, updated_at)
    SELECT $1, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')),
           (${NAMES})[1 + i % 10], 'Tester ' || i,
           jsonb_build_object('city', (${CITIES})[1 + i % 7], 'order_id', 'A' || (100000 + i), 'tier', CASE WHEN i % 9 = 0 THEN 'gold' ELSE 'basic' END),
           i % 33 = 0, CASE WHEN i % 33 = 0 THEN 'keyword' END, CASE WHEN i % 33 = 0 THEN now() - (i % 45) * interval '1 day' END,
           now() - (i % 90) * interval '1 day', now() - (i % 30) * interval '1 day'
    FROM generate_series(1, $2) AS i, LATERAL (SELECT '${prefix}' || lpad(i::text, 8, '0') AS phone) p`, [company, n]);
  await insertContacts(companyId, contacts, '+49151');
  for (const [k, c] of small.entries()) await insertContacts(c, 1000, `+4916${k}`);

  const segments = (await client.query<{ segment_id: number }>('SELECT segment_id FROM segments WHERE company_id = $1 ORDER BY segment_id', [companyId])).rows.map((r) => r.segment_id);
  const every = [2, 5, 10];
  for (const [k, seg] of segments.entries()) {
    const where = k < 3 ? `n % ${every[k]} = 0` : k === 3 ? 'n <= 1000' : 'n % 1000 = 0';
    await step(`members of segment ${seg}`, `
      INSERT INTO segment_members (segment_id, contact_id, added_at)
      SELECT $1, contact_id, now() - (n % 20) * interval '1 day'
      FROM (SELECT contact_id, row_number() OVER (ORDER BY contact_id) AS n FROM contacts WHERE company_id = $2) c WHERE ${where}`, [seg, companyId]);
  }

  const sources = async (table: string, idCol: string, company: number) => (await client.query(`SELECT ${idCol} AS id FROM ${table} WHERE company_id = $1 ORDER BY 1`, [company])).rows.map((r) => r.id as number);
  const insertMessages = async (company: number, total: number) => {
    const auto = (await sources('automations', 'automation_id', company))[0] ?? 1;
    const camp = (await sources('campaigns', 'campaign_id', company))[0] ?? 1;
    const firstContact = (await client.query('SELECT min(contact_id)::int AS id, count(*)::int AS n FROM contacts WHERE company_id = $1', [company])).rows[0];
    const campaignBatches = Math.floor((total * 0.9) / 500);
    const automationBatches = total - campaignBatches * 500;
    // Batches: campaign ones of 500, automation ones of 1, accepted at spread minutes of the last 30 days.
    await step(`batches of company ${company}`, `
      INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
      SELECT gen_random_uuid(), $1, kind, src, 'completed', size, '[]', '{"body":"Hi {{ first_name }}"}', at, at + interval '2 minutes'
      FROM (SELECT 'campaign' AS kind, $2::int AS src, 500 AS size, i, now() - ((i::bigint * 7919) % 43200) * interval '1 minute' AS at FROM generate_series(1, $4::int) AS i
            UNION ALL
            SELECT 'automation', $3::int, 1, i, now() - ((i::bigint * 104729) % 43200) * interval '1 minute' - (i % 60) * interval '1 second' FROM generate_series(1, $5::int) AS i) b`,
    [company, camp, auto, campaignBatches, automationBatches]);
    // Messages: one per (batch, seq); the status from a hash of the position, its times after the batch's.
    await step(`messages of company ${company}`, `
      INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, reason, error, error_code, attempts,
                            sent_at, delivered_at, read_at, failed_at, held_until, scheduled_for, rendered, updated_at)
      SELECT gen_random_uuid(), b.batch_id, $1, s.seq, $2::bigint + (x.pos % $3::int), '+49151' || lpad((1 + x.pos % $3::int)::text, 8, '0'),
             st.status, st.reason, st.error, st.code, CASE WHEN st.status IN ('skipped', 'pending') THEN 0 ELSE 1 END,
             CASE WHEN st.status IN ('sent', 'delivered', 'read') THEN b.created_at + interval '3 seconds' END,
             CASE WHEN st.status IN ('delivered', 'read') THEN b.created_at + interval '9 seconds' END,
             CASE WHEN st.status = 'read' THEN b.created_at + interval '40 minutes' END,
             CASE WHEN st.status = 'failed' THEN b.created_at + interval '4 seconds' END,
             CASE WHEN st.status = 'pending' THEN b.created_at + interval '1 day' END,
             CASE WHEN st.status = 'pending' THEN b.created_at + interval '1 day' END,
             CASE WHEN st.status IN ('sent', 'delivered', 'read', 'failed') THEN jsonb_build_object('body', 'Hi there, your order is on its way. Track it at https://shop.example.com/o/A' || x.pos) END,
             b.created_at + interval '1 hour'
      FROM (SELECT batch_id, created_at, total, row_number() OVER (ORDER BY batch_id) AS bn FROM batches WHERE company_id = $1) b
      CROSS JOIN LATERAL generate_series(0, b.total - 1) AS s(seq)
      CROSS JOIN LATERAL (SELECT (b.bn * 500 + s.seq)::int AS pos, ((b.bn * 500 + s.seq) * 2654435761 % 1000)::int AS h) x
      CROSS JOIN LATERAL (SELECT
        CASE WHEN x.h < 450 THEN 'read' WHEN x.h < 750 THEN 'delivered' WHEN x.h < 850 THEN 'sent' WHEN x.h < 870 THEN 'pending'
             WHEN x.h < 940 THEN 'skipped' ELSE 'failed' END AS status,
        CASE WHEN x.h >= 870 AND x.h < 940 THEN (ARRAY['opted_out', 'opted_out', 'invalid_phone', 'cancelled'])[1 + x.h % 4] END AS reason,
        CASE WHEN x.h >= 940 THEN (ARRAY['Message undeliverable (HTTP 400)', 'Re-engagement message (HTTP 400)', 'HTTP 503', 'timeout after 15000 ms', 'Message failed to send because of an unknown error (HTTP 400)'])[1 + x.h % 5] END AS error,
        CASE WHEN x.h >= 940 THEN (ARRAY['131026', '131047', '503', NULL, '131049'])[1 + x.h % 5] END AS code) st`,
    [company, firstContact.id, firstContact.n]);
  };
  await insertMessages(companyId, messages);
  for (const c of small) await insertMessages(c, 10_000);
  await step('inbound replies', `
    INSERT INTO inbound_messages (company_id, contact_id, provider_message_id, type, text, received_at)
    SELECT $1, contact_id, 'wamid.in' || contact_id, 'text', CASE WHEN opted_out THEN 'STOP' ELSE 'Thanks!' END, now() - (contact_id % 30) * interval '1 day'
    FROM contacts WHERE company_id = $1 AND contact_id % 200 = 0`, [companyId]);
  await step('vacuum analyze', 'VACUUM ANALYZE');
  console.error(`  data ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Starts `cms serve --role api` on the database; resolves when /readyz answers. */
async function startServer(url: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...serviceNodeOptions(), 'bin/cms.js', 'serve', '--role', 'api'], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn', DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-console-')) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return child;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('the server did not start');
}

/** Resident set size of a process, in MiB (from /proc; `VmHWM` is the peak since start). */
function memory(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      contacts: { type: 'string', default: '100000' },
      messages: { type: 'string', default: '1000000' },
      requests: { type: 'string', default: '30' },
      warmup: { type: 'string', default: '3' },
      reuse: { type: 'boolean', default: false },
      only: { type: 'string' },
    },
  });
  const contacts = Number(values.contacts);
  const messages = Number(values.messages);
  const url = dbUrl(values.db!, DB_NAME);
  const idsFile = path.join(os.tmpdir(), `${DB_NAME}-ids.json`);

  // Setup through an in-process service (it migrates the database), and the route list.
  if (!values.reuse) {
    const maint = new pg.Client({ connectionString: values.db });
    await maint.connect();
    await maint.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
    await maint.query(`CREATE DATABASE ${DB_NAME}`);
    await maint.end();
  }
  const config = loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn', DATA_DIR: os.tmpdir(), PROVIDER_ALLOWED_HOSTS: '127.0.0.1' });
  const setupService = await startService(config, { role: 'api', logger: pino({ level: 'warn' }) });
  const setupBase = await setupService.app.listen({ port: 0, host: '127.0.0.1' });
  const patterns = consoleGetRoutes(setupService.app);
  let ids: Ids;
  let companyId: number;
  if (values.reuse) {
    ({ ids, companyId } = JSON.parse(fs.readFileSync(idsFile, 'utf8')));
  } else {
    console.error(`setup: ${contacts} contacts, ${messages} messages in ${DB_NAME}`);
    ({ ids, companyId } = await setupThroughApi(setupBase, contacts));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await generateData(client, companyId, contacts, messages);
    await client.end();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Ids that exist only after the data: a big campaign batch, a contact (by phone and by id).
  const batch = (await client.query(`SELECT batch_id FROM batches WHERE company_id = $1 AND kind = 'campaign' ORDER BY created_at DESC LIMIT 1`, [companyId])).rows[0];
  const contact = (await client.query(`SELECT contact_id, phone FROM contacts WHERE company_id = $1 ORDER BY contact_id OFFSET $2 LIMIT 1`, [companyId, Math.min(4999, Math.floor(contacts / 2))])).rows[0];
  ids = { ...ids, batchId: batch.batch_id, key: contact.phone };
  fs.writeFileSync(idsFile, JSON.stringify({ ids, companyId }));
  ids = { ...ids, ...await peopleIds(setupBase, client, companyId) };
  const counts = (await client.query(`SELECT (SELECT count(*) FROM contacts WHERE company_id = $1)::int AS contacts, (SELECT count(*) FROM messages WHERE company_id = $1)::int AS messages,
    (SELECT count(*) FROM messages)::int AS all_messages, (SELECT count(*) FROM batches WHERE company_id = $1)::int AS batches`, [companyId])).rows[0];
  await client.end();
  await setupService.close();
  console.error(`data: company ${companyId} has ${counts.contacts} contacts, ${counts.messages} messages in ${counts.batches} batches (${counts.all_messages} messages in all)`);

  const { pages, missing } = consolePages(patterns, ids);
  const anonymous = pages.filter((p) => /^\/console\/(login|invite\/|password-reset)/.test(p));
  const signedIn = pages.filter((p) => !anonymous.includes(p));
  const digits = contact.phone.slice(-6);
  signedIn.push('/console/sends?page=2', `/console/sends?phone=${digits}`, `/console/contacts?q=${digits}`, '/console/contacts?q=Ada', `/console/contacts/${contact.contact_id}`, `/console/sends/${batch.batch_id}?phone=${digits}`);
  if (missing.length) console.error(`pages without an id (not measured): ${missing.join(', ')}`);

  const port = 20000 + Math.floor(Math.random() * 20000);
  const server = await startServer(url, port);
  const base = `http://127.0.0.1:${port}`;
  try {
    const browser = new Browser(base);
    const signIn = await browser.submit('/console/login', '/console/login', { email: EMAIL, password: PASSWORD });
    if (signIn.status !== 303) throw new Error(`sign-in: ${signIn.status}`);
    const requests = Number(values.requests);
    const warmup = Number(values.warmup);
    const rows: { page: string; status: number; p50: number; p95: number; max: number; kb: number }[] = [];
    const list = values.only ? [values.only] : [...signedIn, ...anonymous];
    for (const page of list) {
      const anon = anonymous.includes(page);
      const b = anon ? new Browser(base) : browser;
      let status = 0;
      let size = 0;
      for (let i = 0; i < warmup; i++) await b.request('GET', page);
      const times: number[] = [];
      for (let i = 0; i < requests; i++) {
        const t = performance.now();
        const r = await b.request('GET', page);
        times.push(performance.now() - t);
        status = r.status;
        size = r.text.length;
      }
      times.sort((a, c) => a - c);
      rows.push({ page, status, p50: percentile(times, 50), p95: percentile(times, 95), max: times[times.length - 1], kb: size / 1024 });
      console.error(`  ${page}: ${status} p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`);
    }
    console.log(`\n${counts.contacts} contacts, ${counts.messages} messages in ${counts.batches} batches for the measured company (${counts.all_messages} in all); ${requests} requests per page after ${warmup} warm-up, one at a time; ${os.cpus().length} CPUs, ${os.cpus()[0]?.model}\n`);
    console.log('| page | status | p50 ms | p95 ms | max ms | KiB |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| \`${r.page}\` | ${r.status} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.kb.toFixed(0)} |`);
    const over = rows.filter((r) => r.p95 >= 300 || r.status !== 200);
    console.log(over.length ? `\nOver 300 ms p95 or not 200: ${over.map((r) => r.page).join(', ')}` : '\nEvery page under 300 ms p95.');

    // The contacts export: RSS at rest, then sampled every 10 ms during the download.
    if (patterns.some((p) => p.endsWith('/contacts/export.csv'))) {
      await new Promise((r) => setTimeout(r, 1000));
      const rest = memory(server.pid!);
      let peak = rest.rss;
      const sampler = setInterval(() => { peak = Math.max(peak, memory(server.pid!).rss); }, 10);
      const t = performance.now();
      const res = await fetch(`${base}/console/contacts/export.csv`, { headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        for (const c of chunk) if (c === 10) lines++;
      }
      clearInterval(sampler);
      const after = memory(server.pid!);
      console.log(`\nExport: ${res.status}, ${(bytes / 1048576).toFixed(1)} MiB, ${lines} lines in ${((performance.now() - t) / 1000).toFixed(2)} s; server RSS at rest ${rest.rss.toFixed(0)} MiB, peak during the export ${Math.max(peak, after.rss).toFixed(0)} MiB (+${(Math.max(peak, after.rss) - rest.rss).toFixed(0)} MiB), VmHWM ${rest.hwm.toFixed(0)} -> ${after.hwm.toFixed(0)} MiB`);
    } else {
      console.log('\nExport: no /console/contacts/export.csv route yet, not measured.');
    }
  } finally {
    server.kill('SIGTERM');
  }
}

await main();
