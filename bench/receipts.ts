/**
 * Receipt ingestion benchmark: WhatsApp-shaped status webhooks on PostgreSQL,
 * from POST to applied in the database.
 *
 *   node bench/receipts.ts [--db postgres://postgres@127.0.0.1:5432/postgres] [--messages 100000]
 *                          [--per-post 100] [--clients 8] [--passes 2] [--events]
 *
 * Setup (not measured): a fresh database `cms_bench_receipts` next to the one in the URL, the service
 * (API and workers in this process, as `npm start`), a company whose WhatsApp channel has an app
 * secret, and `--messages` messages in status `sent` with their wamids (written with SQL: the send
 * path is not what is measured).
 * Measured: `--clients` concurrent HTTP clients POST Meta's payload (`statuses[]` of `--per-post`
 * statuses, signed X-Hub-Signature-256) to /webhooks/whatsapp until every message has had a
 * `delivered` and then (pass 2) a `read` status: `--passes` × `--messages` status updates. The clock
 * runs from the first POST until the last update is visible in the database (polled every 20 ms).
 * Reported: status updates applied per second end to end, and the answer time of each POST (p50, p99,
 * max: the webhook enqueues durably and answers; applying happens in the workers meanwhile).
 * `--events`: the company also has an event endpoint subscribed to `message.delivered` and
 * `message.read` (a local receiver answering 200, in a child process: test/helpers/receiver.ts), so
 * the outbox triggers write one event and one delivery row per update and the event workers deliver
 * them meanwhile (the events are not waited for).
 */
import { createHmac, randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service.ts';
import { startCountingReceiverProcess } from '../test/helpers/receiver.ts';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function freshPostgres(url: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS cms_bench_receipts WITH (FORCE)');
  await admin.query('CREATE DATABASE cms_bench_receipts');
  await admin.end();
  const u = new URL(url);
  u.pathname = '/cms_bench_receipts';
  return u.toString();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      messages: { type: 'string', default: '100000' },
      'per-post': { type: 'string', default: '100' },
      clients: { type: 'string', default: '8' },
      passes: { type: 'string', default: '2' },
      events: { type: 'boolean', default: false },
    },
  });
  const messages = Number(values.messages);
  const perPost = Number(values['per-post']);
  const clients = Number(values.clients);
  const passes = Math.min(2, Math.max(1, Number(values.passes)));
  const url = await freshPostgres(values.db!);
  const receiver = await startCountingReceiverProcess();
  const config = loadConfig({ ...process.env, PROVIDER_ALLOWED_HOSTS: '127.0.0.1', DATABASE_URL: url, ADMIN_TOKEN: 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz', SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn', DATA_DIR: os.tmpdir() });
  const service = await startService(config, { role: 'all', logger: pino({ level: 'warn' }) });
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = (method: string, p: string, body?: unknown) => fetch(base + p, {
    method, headers: { authorization: 'Bearer bench-admin-token-6Tf1Ys8Kw3Nq7Pz', 'content-type': 'application/json' }, body: JSON.stringify(body),
  }).then((r) => r.json() as Promise<any>);

  // Setup: company, WhatsApp channel with app secret, messages `sent` with wamids.
  const company = await admin('POST', '/admin/companies', { name: 'Bench', subscription_active: true });
  const phoneNumberId = '1' + String(Date.now()).slice(-12);
  const appSecret = 'bench-app-secret';
  await admin('PUT', `/admin/companies/${company.company_id}/channel`, { provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: 'EAAG-bench', app_secret: appSecret, verify_token: 'bench-verify-token' });
  if (values.events) {
    await admin('POST', `/admin/companies/${company.company_id}/event-endpoints`, { url: `${receiver.url}/events`, events: ['message.delivered', 'message.read'] });
  }
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const batchSize = 1000;
  for (let from = 0; from < messages; from += batchSize) {
    const n = Math.min(batchSize, messages - from);
    const batchId = randomUUID();
    await db.query(`INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, completed_at)
      VALUES ($1, $2, 'automation', 1, 'completed', $3, '[]', '{}', now())`, [batchId, company.company_id, n]);
    await db.query(`INSERT INTO messages (message_id, batch_id, company_id, seq, phone, status, sent_at, provider_message_id)
      SELECT gen_random_uuid(), $1, $2, i, '+4915100' || lpad(($3 + i)::text, 6, '0'), 'sent', now(), 'wamid.bench.' || ($3 + i)
      FROM generate_series(0, $4 - 1) AS i`, [batchId, company.company_id, from, n]);
  }
  await db.query('ANALYZE messages');

  const bodies: Buffer[] = [];
  const t0 = Math.floor(Date.now() / 1000);
  for (const status of (['delivered', 'read'] as const).slice(0, passes)) {
    for (let from = 0; from < messages; from += perPost) {
      const statuses = [];
      for (let i = from; i < Math.min(messages, from + perPost); i++) {
        statuses.push({ id: `wamid.bench.${i}`, status, timestamp: String(t0 + (status === 'read' ? 60 : 1)), recipient_id: `4915100${String(i).padStart(6, '0')}`,
          conversation: { id: 'c' + i, origin: { type: 'utility' } }, pricing: { billable: true, pricing_model: 'CBP', category: 'utility' } });
      }
      bodies.push(Buffer.from(JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: {
        messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId }, statuses } }] }] })));
    }
  }
  const signed = bodies.map((b) => ({ body: b, sig: 'sha256=' + createHmac('sha256', appSecret).update(b).digest('hex') }));
  const expected = messages * passes;
  console.log(`setup done: ${messages} messages, ${signed.length} POSTs of ${perPost} statuses, ${clients} clients, ${passes} pass(es); ${os.cpus().length} CPUs`);

  const agent = new Agent({ connections: clients, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  async function client(): Promise<void> {
    for (;;) {
      const i = next++;
      if (i >= signed.length) return;
      const t = performance.now();
      const res = await request(`${base}/webhooks/whatsapp`, { method: 'POST', dispatcher: agent, body: signed[i].body,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signed[i].sig } });
      await res.body.text();
      latencies.push(performance.now() - t);
      if (res.statusCode !== 200) errors++;
    }
  }
  // Pass 2 (read) starts after pass 1's POSTs are all answered, not applied: order across passes is
  // not guaranteed by Meta either, and `read` before `delivered` is handled.
  await Promise.all(Array.from({ length: clients }, client));
  const posted = performance.now();
  const applied = async () => {
    const { rows } = await db.query(`SELECT count(*) FILTER (WHERE status IN ('delivered', 'read'))::int AS d, count(*) FILTER (WHERE status = 'read')::int AS r
      FROM messages WHERE company_id = $1`, [company.company_id]);
    return passes === 2 ? rows[0].d + rows[0].r : rows[0].d;
  };
  let done = 0;
  while ((done = await applied()) < expected) {
    if (performance.now() - posted > 300_000) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const finished = performance.now();
  latencies.sort((a, b) => a - b);
  const seconds = (finished - started) / 1000;
  const result = {
    messages, posts: signed.length, per_post: perPost, clients, events: values.events, status_updates: expected, applied: done, errors,
    post_phase_s: +((posted - started) / 1000).toFixed(2),
    end_to_end_s: +seconds.toFixed(2),
    updates_per_s: Math.round(done / seconds),
    post_ms: { p50: +percentile(latencies, 50).toFixed(1), p99: +percentile(latencies, 99).toFixed(1), max: +latencies[latencies.length - 1].toFixed(1) },
  };
  console.log(JSON.stringify(result, null, 2));
  if (values.events) {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM events WHERE company_id = $1', [company.company_id]);
    console.log(`events written: ${rows[0].n}; delivered to the receiver so far: ${await receiver.count()}`);
  }
  await db.end();
  await agent.close();
  await service.close();
  receiver.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
