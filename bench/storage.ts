/**
 * What grows per message, and how fast (docs/operations.md "What grows"): bytes on disk per message
 * of each table a send writes, measured with pg_total_relation_size (table, indexes and TOAST; every
 * partition of `messages`) after `--batches` campaign sends (4.4) of `--size` new contacts each went
 * through the real service to the webhook provider (a counting receiver child process), every message
 * got a `delivered` and then a `read` receipt (applied as the `receipts-apply` job applies them, 500
 * a statement), and one reply in ten came back (inbound messages). With `--events` (default on) the
 * companies have an event endpoint subscribed to every message event, so the outbox writes
 * message.sent / .delivered / .read with their deliveries and attempts.
 *
 *   node bench/storage.ts [--db pglite|postgres://...] [--batches 20] [--size 1000] [--events true|false]
 *                         [--bench-db cms_bench_storage]
 *
 * The partitions of a partitioned table (`messages`, pg-boss's job table) are summed. Sizes are taken after a VACUUM (dead row versions of the updates reclaimed for reuse, not returned
 * to the file system: what a table that lives with autovacuum looks like) and again after VACUUM FULL
 * (the live rows only). The pg-boss job table is reported per job, since how many jobs a message
 * makes depends on the provider (a `messages-deliver` job per 250 webhook messages, a `receipts-apply`
 * job per webhook a provider posts). PostgreSQL runs on a fresh database `--bench-db` next to the one
 * in the URL (dropped first).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { setChannel } from '../src/domain/companies.ts';
import { applyReceipts, insertInbound } from '../src/db/receipts.ts';
import { startService } from '../src/service.ts';
import { type CountingReceiver, startCountingReceiverProcess } from '../test/helpers/receiver.ts';
import { freshDatabase } from './lib/serve.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    batches: { type: 'string', default: '20' },
    size: { type: 'string', default: '1000' },
    events: { type: 'string', default: 'true' },
    'bench-db': { type: 'string', default: 'cms_bench_storage' },
  },
});


const batches = Number(values.batches);
const size = Number(values.size);
const withEvents = values.events !== 'false';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-storage-'));
const databaseUrl = values.db === 'pglite' ? undefined : await freshDatabase(values.db!, values['bench-db']!);
const config = loadConfig({
  DATA_DIR: dataDir, ADMIN_TOKEN: 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz', SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn',
  PROVIDER_ALLOWED_HOSTS: '127.0.0.1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const service = await startService(config, { role: 'all', logger: pino({ level: 'warn' }) });
const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
const db = service.deps.database.db;
const receiver: CountingReceiver = await startCountingReceiverProcess();

const admin = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(url + p, { method, headers: { authorization: 'Bearer bench-admin-token-6Tf1Ys8Kw3Nq7Pz', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};
const template = {
  header: { type: 'image', url: 'https://cdn.example/default.png' },
  body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.',
  buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }],
};
const phoneOf = (n: number) => `+49151${String(n).padStart(8, '0')}`;

const companies: number[] = [];
for (let b = 0; b < batches; b++) {
  const c = await admin('POST', '/admin/companies', { name: 'storage', subscription_active: true });
  const k = await admin('POST', `/admin/companies/${c.company_id}/api-keys`, {});
  await admin('PUT', `/admin/companies/${c.company_id}/connector`, { connected: true });
  await setChannel(db, c.company_id, { provider: 'webhook', url: `${receiver.url}/hook`, secret_sealed: service.secrets.seal('whsec_' + Buffer.from('bench-secret-0123456789').toString('base64')) });
  if (withEvents) {
    await admin('POST', `/admin/companies/${c.company_id}/event-endpoints`, { url: `${receiver.url}/events`, events: ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.skipped', 'batch.completed'] });
  }
  const campaign = await admin('POST', `/admin/companies/${c.company_id}/campaigns`, { name: 'storage', template });
  const res = await fetch(url + '/api/connector/send', {
    method: 'POST', headers: { 'service-api-key': k.api_key, 'content-type': 'application/json' },
    body: JSON.stringify({ campaign_id: campaign.campaign_id, contacts: Array.from({ length: size }, (_, i) => ({ phone: phoneOf(b * size + i) })) }),
  });
  if (res.status !== 200) throw new Error(`send: ${res.status} ${await res.text()}`);
  companies.push(c.company_id);
}
const total = batches * size;
const waitFor = async (check: () => Promise<boolean>) => { while (!(await check())) await new Promise((r) => setTimeout(r, 200)); };
await waitFor(async () => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches WHERE status <> 'completed'`.execute(db)).rows[0].n) === 0);

// Receipts: delivered, then read, for every message, 500 a statement; one reply in ten.
const t = Date.now();
for (const companyId of companies) {
  const ids = (await sql<{ message_id: string; contact_id: number }>`SELECT message_id, contact_id FROM messages WHERE company_id = ${companyId}`.execute(db)).rows;
  for (const status of ['delivered', 'read'] as const) {
    for (let i = 0; i < ids.length; i += 500) {
      await applyReceipts(db, companyId, 'message_id', ids.slice(i, i + 500).map((m) => ({
        id: m.message_id, delivered_at: t, read_at: status === 'read' ? t + 1000 : null, failed_at: null, error_code: null, error: null,
      })));
    }
  }
  const replies = ids.filter((_, i) => i % 10 === 0);
  await insertInbound(db, companyId, replies.map((m, i) => ({
    contact_id: Number(m.contact_id), provider_message_id: `wamid.HBgLNDkxNTExMjM0NTY3FQIAEhggQTk${companyId}x${i}`, type: 'text',
    text: 'Thanks, when does it arrive?', payload: null, received_at: t + 2000,
  })));
}
if (withEvents) {
  await waitFor(async () => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'pending'`.execute(db)).rows[0].n) === 0);
}
await new Promise((r) => setTimeout(r, 2000)); // the last jobs settle

const TABLES = ['messages', 'batches', 'message_counts', 'contacts', 'inbound_messages', 'events', 'event_deliveries', 'event_attempts', 'pgboss.job'];
const sizes = async () => {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    // A partitioned table (messages, pg-boss's job table) is the sum of its partitions.
    const { rows } = await sql<{ bytes: number }>`
      SELECT (pg_total_relation_size(r) + coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(r) WHERE relid <> r), 0))::float8 AS bytes
      FROM (SELECT ${table}::regclass AS r) x`.execute(db);
    out[table] = Number(rows[0].bytes);
  }
  return out;
};
const rows = async () => {
  const out: Record<string, number> = {};
  for (const table of TABLES) out[table] = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.raw(table)}`.execute(db)).rows[0].n);
  return out;
};
const vacuum = async (full: boolean) => {
  for (const table of TABLES) await sql`${sql.raw(full ? 'VACUUM FULL' : 'VACUUM')} ${sql.raw(table)}`.execute(db);
};
const counted = await rows();
await vacuum(false);
const afterVacuum = await sizes();
await vacuum(true);
const afterFull = await sizes();
const per = (bytes: Record<string, number>, table: string) => Math.round(bytes[table] / (table === 'pgboss.job' ? Math.max(1, counted[table]) : total));
console.log(JSON.stringify({
  db: service.deps.database.kind, messages: total, batches, events: withEvents,
  rows: counted,
  bytes_per_message: Object.fromEntries(TABLES.filter((t) => t !== 'pgboss.job').map((t) => [t, { vacuum: per(afterVacuum, t), vacuum_full: per(afterFull, t) }])),
  bytes_per_job: { vacuum: per(afterVacuum, 'pgboss.job'), vacuum_full: per(afterFull, 'pgboss.job') },
  total_mb: { vacuum: +(Object.values(afterVacuum).reduce((a, b) => a + b, 0) / 1048576).toFixed(1), vacuum_full: +(Object.values(afterFull).reduce((a, b) => a + b, 0) / 1048576).toFixed(1) },
  machine: { nproc: os.cpus().length, node: process.version, loadavg_1m: os.loadavg()[0] },
}, null, 2));

await service.close();
receiver.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
if (databaseUrl) {
  const c = new pg.Client({ connectionString: values.db });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${values['bench-db']} WITH (FORCE)`);
  await c.end();
}
