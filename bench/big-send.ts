/**
 * Big-send benchmark (docs/benchmarks.md "A big send in hand"): a campaign send to a segment of
 * `--contacts` members (100,000 by default) through the running service, and what the service does for
 * everyone else meanwhile.
 *
 *   node bench/big-send.ts [--db pglite|postgres://postgres@127.0.0.1:5432/postgres] [--contacts 100000]
 *                          [--provider outbox|webhook] [--probe-gap-ms 200] [--phases confirm,cancel,pause]
 *
 * Setup (not measured): an in-process service on a fresh database (a new PGlite directory, or a
 * database `cms_bench_bigsend` next to the one in the URL) makes, through the operator API, a company
 * with an API key, an automation, a campaign, an owner console user and a segment; set-based SQL writes
 * the contacts (named, with variables, 3 % opted out) and makes every one a member of the segment.
 * Then the service runs as its own process, `node bin/cms.js serve` (role all: the workers in the
 * same process, as on the embedded default), with the company's channel on `--provider` (the webhook
 * receiver is a child process answering 200 at once).
 *
 * Phases, each on the same segment:
 * - confirm: the owner reviews the send in the console (POST /console/campaigns/{id}/send) and
 *   confirms it (POST .../send/confirm): both timed. While the batch is fanned out and delivered,
 *   three probe loops, each one request at a time with `--probe-gap-ms` between two (at least 110 ms
 *   for 4.3, whose rate limit is 10 per second per company), time the console
 *   (GET /console/login), the public API (4.3 `POST /api/automations/send`, one contact) and the
 *   operator API (`GET /admin/batches/{id}`) to the last byte, until the batch is completed: p50, p95,
 *   p99 and max per kind, and the delivery rate; the service process's peak RSS (VmHWM) and its CPU
 *   per message during the send.
 * - cancel: a send through the operator API; once a fifth of it is sent, `POST .../cancel` is timed,
 *   the sent count read right after the answer, and again when the batch completes: the difference
 *   is what went out after the answer.
 * - pause: the same with `POST .../pause`; 3 s later the sent count must not have moved beyond what was
 *   in flight; `POST .../resume`, and at the end every message is accounted for once (sent + skipped =
 *   total; with the webhook provider the receiver's count of requests equals the sent count).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service.ts';
import { cpuTicks, percentile, rssMb } from './lib/accept-load.ts';
import { segmentSeedSql } from './lib/segment-seed.ts';
import { freePort, freshDatabase, operatorApi, startServeProcess } from './lib/serve.ts';
import { startCountingReceiverProcess, type CountingReceiver } from '../test/helpers/receiver.ts';

const ADMIN = 'bench-bigsend-admin-3Qp7Wn2Lk9Vd4Hs';
const SECRETS = 'bench-bigsend-secrets-6Tz1Mb8Rc5Jf2Xg';
const PASSWORD = 'correct horse battery staple';
const EMAIL = 'owner@bigsend.example.com';
const DB_NAME = 'cms_bench_bigsend';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

interface Setup { companyId: number; apiKey: string; automationId: number; campaignId: number; segmentId: number }

/** The company, its sources, user and segment through the operator API, and the contacts in SQL. */
async function setup(env: Record<string, string>, contacts: number): Promise<Setup> {
  const config = loadConfig(env);
  const service = await startService(config, { role: 'api', logger: pino({ level: 'warn' }) });
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = operatorApi(base, ADMIN);
  const company = await admin('POST', '/admin/companies', { name: 'Big sender', subscription_active: true });
  const companyId: number = company.company_id;
  const key = await admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'bench' });
  const template = { body: 'Hi {{ first_name }}, 20 % off in {{ city }} this week.', buttons: [{ text: 'Shop', url: 'https://shop.example.com' }] };
  const automation = await admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: { body: 'Your order {{ order_id }} is on its way' } });
  const campaign = await admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring sale', template, expire_after: null });
  const segRes = await fetch(`${base}/api/segments/create`, { method: 'POST', headers: { 'service-api-key': key.api_key, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Everyone' }) });
  const segmentId = ((await segRes.json()) as { segment_id: number }).segment_id;
  const inv = await admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: EMAIL, role: 'owner' });
  const invPath = new URL(inv.invite_url).pathname;
  const accepted = await new Browser(base).submit(invPath, invPath, { password: PASSWORD, password_confirm: PASSWORD });
  if (accepted.status !== 303) throw new Error(`accepting the invitation: ${accepted.status}`);
  const db = service.deps.database.db;
  const t0 = Date.now();
  for (const q of segmentSeedSql(companyId, [segmentId], contacts, 33)) await sql.raw(q).execute(db);
  console.error(`  ${contacts} contacts and members written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await service.close();
  return { companyId, apiKey: key.api_key, automationId: automation.automation_id, campaignId: campaign.campaign_id, segmentId };
}

interface Batch { status: string; counts: { total: number; sent: number; skipped: number; failed: number; pending: number } }

/** Probe loops (see the module comment) until `until` resolves; per kind the latencies (ms) and non-2xx answers. */
async function probe(base: string, ids: Setup, batchId: string | undefined, gap: number, until: Promise<unknown>) {
  let done = false;
  void until.then(() => { done = true; });
  const samples: Record<string, number[]> = { console: [], public: [], operator: [] };
  const errors: Record<string, number> = { console: 0, public: 0, operator: 0 };
  const probes: Record<string, () => Promise<Response>> = {
    console: () => fetch(`${base}/console/login`),
    public: () => fetch(`${base}/api/automations/send`, {
      method: 'POST', headers: { 'service-api-key': ids.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ automation_id: ids.automationId, contacts: [{ phone: `+49152${String(++probeSeq).padStart(8, '0')}`, variables: { order_id: `B${probeSeq}` } }] }),
    }),
    operator: () => fetch(batchId ? `${base}/admin/batches/${batchId}` : `${base}/admin/companies/${ids.companyId}/batches?limit=5`, { headers: { authorization: `Bearer ${ADMIN}` } }),
  };
  await Promise.all(Object.entries(probes).map(async ([kind, run]) => {
    while (!done) {
      const t = performance.now();
      const res = await run();
      await res.arrayBuffer();
      samples[kind].push(performance.now() - t);
      if (res.status >= 300) errors[kind]++;
      await sleep(kind === 'public' ? Math.max(gap, 110) : gap); // 4.3 takes 10 per second per company
    }
  }));
  return { samples, errors };
}
let probeSeq = 0;

function printProbes(title: string, p: Awaited<ReturnType<typeof probe>>): void {
  console.log(`| ${title} | n | p50 ms | p95 ms | p99 ms | max ms | non-2xx |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const [kind, list] of Object.entries(p.samples)) {
    const s = [...list].sort((a, b) => a - b);
    console.log(`| ${kind} | ${s.length} | ${percentile(s, 50).toFixed(0)} | ${percentile(s, 95).toFixed(0)} | ${percentile(s, 99).toFixed(0)} | ${s.at(-1)?.toFixed(0)} | ${p.errors[kind]} |`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'pglite' },
      contacts: { type: 'string', default: '100000' },
      provider: { type: 'string', default: 'outbox' },
      'probe-gap-ms': { type: 'string', default: '200' },
      phases: { type: 'string', default: 'confirm,cancel,pause' },
    },
  });
  const contacts = Number(values.contacts);
  const gap = Number(values['probe-gap-ms']);
  const phases = new Set(values.phases!.split(','));
  const env: Record<string, string> = { ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn', PROVIDER_ALLOWED_HOSTS: '127.0.0.1' };
  let dataDir: string | undefined;
  if (values.db === 'pglite') {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-bigsend-'));
    env.DATA_DIR = dataDir;
  } else {
    env.DATABASE_URL = await freshDatabase(values.db!, DB_NAME);
    env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-bigsend-'));
  }
  console.error(`big send: ${contacts} contacts, ${values.db === 'pglite' ? 'PGlite' : 'PostgreSQL'}, provider ${values.provider}, load ${os.loadavg()[0].toFixed(1)}`);
  const ids = await setup(env, contacts);
  let receiver: CountingReceiver | undefined;
  const port = await freePort();
  const server = await startServeProcess(env, port);
  const base = `http://127.0.0.1:${port}`;
  const admin = operatorApi(base, ADMIN);
  const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
    const t = performance.now();
    const out = await run();
    return [out, performance.now() - t];
  };
  const batch = (id: string) => admin<Batch>('GET', `/admin/batches/${id}`);
  try {
    if (values.provider === 'webhook') {
      receiver = await startCountingReceiverProcess();
      await admin('PUT', `/admin/companies/${ids.companyId}/channel`, { provider: 'webhook', url: `${receiver.url}/hook` });
    }
    const owner = new Browser(base);
    const signIn = await owner.submit('/console/login', '/console/login', { email: EMAIL, password: PASSWORD });
    if (signIn.status !== 303) throw new Error(`sign-in: ${signIn.status}`);

    // The same probes with nothing being sent: the machine's own answer times, for comparison.
    printProbes('requests, nothing being sent', await probe(base, ids, undefined, gap, sleep(10_000)));

    if (phases.has('confirm')) {
      const sendPage = `/console/campaigns/${ids.campaignId}/send`;
      const form = { audience: 'segment', segment_id: String(ids.segmentId), numbers: '', when: 'now', send_at: '' };
      const [review, reviewMs] = await timed(() => owner.submit(sendPage, sendPage, form));
      if (review.status !== 200) throw new Error(`review: ${review.status} ${review.text.slice(0, 300)}`);
      const token = /name="confirm_token" value="([^"]+)"/.exec(review.text)?.[1];
      const csrf = /name="_csrf" value="([^"]+)"/.exec(review.text)?.[1];
      const [confirm, confirmMs] = await timed(() => owner.request('POST', `${sendPage}/confirm`, { _csrf: csrf!, ...form, confirm_token: token! }));
      if (confirm.status !== 303) throw new Error(`confirm: ${confirm.status} ${confirm.text.slice(0, 300)}`);
      const batchId = confirm.location!.split('/').pop()!;
      console.log(`review ${reviewMs.toFixed(0)} ms, confirm ${confirmMs.toFixed(0)} ms (batch ${batchId})`);

      const t0 = performance.now();
      const ticks0 = cpuTicks(server.pid!);
      let finished!: () => void;
      const probing = probe(base, ids, batchId, gap, new Promise<void>((resolve) => { finished = resolve; }));
      let last: Batch;
      for (;;) {
        last = await batch(batchId);
        if (last.status === 'completed') break;
        await sleep(500);
      }
      finished();
      const during = await probing;
      const secs = (performance.now() - t0) / 1000;
      console.log(`delivered: ${last.counts.sent} sent, ${last.counts.skipped} skipped of ${last.counts.total} in ${secs.toFixed(1)} s after the confirm (${(last.counts.total / secs).toFixed(0)} messages/s)`);
      const cpuS = (cpuTicks(server.pid!) - ticks0) / 100;
      console.log(`service process: peak RSS (VmHWM) ${rssMb(server.pid!, 'VmHWM')} MB, CPU ${cpuS.toFixed(1)} s during the send (${((cpuS * 1e6) / last.counts.total).toFixed(0)} µs a message)${receiver ? `; receiver peak RSS ${rssMb(receiver.pid, 'VmHWM')} MB` : ''}`);
      printProbes('requests during the send', during);
    }

    for (const action of ['cancel', 'pause'] as const) {
      if (!phases.has(action)) continue;
      const before = receiver ? await receiver.count() : 0;
      const sent = await admin<{ batch_id: string }>('POST', `/admin/campaigns/${ids.campaignId}/sends`, { segment_id: ids.segmentId });
      const id = sent.batch_id;
      let b: Batch;
      for (;;) {
        b = await batch(id);
        if (b.counts.sent >= b.counts.total / 5 || b.status === 'completed') break;
        await sleep(100);
      }
      const [, ms] = await timed(() => admin('POST', `/admin/batches/${id}/${action}`));
      const atAnswer = (await batch(id)).counts.sent;
      if (action === 'cancel') {
        let end: Batch;
        for (;;) {
          end = await batch(id);
          if (end.status === 'completed') break;
          await sleep(250);
        }
        console.log(`cancel: answered in ${ms.toFixed(0)} ms; sent ${atAnswer} right after the answer, ${end.counts.sent} in the end (+${end.counts.sent - atAnswer}); skipped ${end.counts.skipped} of ${end.counts.total}`);
      } else {
        await sleep(3_000);
        const later = (await batch(id)).counts.sent;
        const [, resumeMs] = await timed(() => admin('POST', `/admin/batches/${id}/resume`));
        let end: Batch;
        for (;;) {
          end = await batch(id);
          if (end.status === 'completed') break;
          await sleep(250);
        }
        const received = receiver ? (await receiver.count()) - before : undefined;
        console.log(`pause: answered in ${ms.toFixed(0)} ms; sent ${atAnswer} right after, ${later} 3 s later; resume answered in ${resumeMs.toFixed(0)} ms; in the end ${end.counts.sent} sent + ${end.counts.skipped} skipped + ${end.counts.failed} failed = ${end.counts.sent + end.counts.skipped + end.counts.failed} of ${end.counts.total}${received === undefined ? '' : `, receiver got ${received}`}`);
      }
    }
  } finally {
    server.kill();
    await new Promise((r) => server.once('exit', r));
    receiver?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
