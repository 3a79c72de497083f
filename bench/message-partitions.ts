/**
 * What the monthly partitions of `messages` (migration 032) cost the send pipeline's statements on
 * PostgreSQL, without HTTP, providers or pg-boss: the same statements (src/db/messages.ts,
 * src/db/receipts.ts) on three fresh databases next to the one in the URL: `<bench-db>_plain` (the
 * migrations before 032: one table), `<bench-db>_part` (every migration, partitions made up to
 * `--months-back` past monthly partitions instead of 032's `messages_legacy` and 3 ahead: 12 gives a
 * service a year old with the default MESSAGE_RETENTION, 17 partitions with the default one; the
 * statements get the batch's message-id range and receipts look at the last two months first, as the
 * service does) and `<bench-db>_unpruned` (the same partitions, statements without a range: every
 * partition is planned and opened, and a receipt's provider id is looked up in every partition's
 * index). Each past month holds `--history` messages (read, with a provider id), in all three. Per batch of `--size` messages: fan-out's INSERT, then per chunk of 250 (the
 * webhook provider's) the claim, the results (`sent` with a provider id), the count of the unfinished
 * and the completion check, then `delivered` receipts by provider id (WhatsApp's look-up) and `read`
 * receipts by message id (gateways'), 500 a statement. Rounds rotate the databases so that
 * a machine shared with other work weighs on all alike.
 *
 *   node bench/message-partitions.ts [--db postgres://postgres@127.0.0.1:5432/postgres] [--rounds 5]
 *                                    [--batches 6] [--size 1000] [--months-back 12] [--history 20000]
 *                                    [--bench-db cms_bench_parts] [--keep]
 *
 * Reported per message: the server CPU of the one connection used (its backend's user + system time
 * from /proc, 10 ms ticks; the server must run on this machine) and the elapsed time, for fan-out,
 * delivery and receipts; the median of the rounds and each round's numbers. `--keep` leaves the three
 * databases in place (to look at plans), dropped otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { listMigrations } from '../src/db/migrate.ts';
import { openPostgres, type Database } from '../src/db/database.ts';
import { claimMessages, commitResults, completeBatchIfDone, countUnfinished, insertMessages, messageIdRange, recentIdRange, uuidv7, type NewMessage } from '../src/db/messages.ts';
import { applyReceipts } from '../src/db/receipts.ts';
import { cpuTicks, median } from './lib/accept-load.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    rounds: { type: 'string', default: '5' },
    batches: { type: 'string', default: '6' },
    size: { type: 'string', default: '1000' },
    'months-back': { type: 'string', default: '12' },
    history: { type: 'string', default: '20000' },
    'bench-db': { type: 'string', default: 'cms_bench_parts' },
    keep: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const batchesPerRound = Number(values.batches);
const size = Number(values.size);
const CHUNK = 250;

async function freshDatabase(name: string, upTo: number): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`--bench-db must be a plain database name, got ${name}`);
  const admin = new pg.Client({ connectionString: values.db });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(values.db!);
  u.pathname = `/${name}`;
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  for (const m of listMigrations().filter((x) => x.version <= upTo)) await c.query(`BEGIN; ${m.sql}; COMMIT;`);
  await c.end();
  return u.toString();
}

const rendered = { body: 'Hi Ada, your order O-1 has shipped.', header: { type: 'image', url: 'https://cdn.example/default.png' }, buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }] };

interface Target { name: string; database: Database; pid: number; companyId: number; pruned: boolean }

async function open(name: string, upTo: number, pruned = false): Promise<Target> {
  const database = await openPostgres(await freshDatabase(name, upTo), 1, { driverTricks: false });
  const db = database.db;
  const back = Number(values['months-back']);
  if (upTo >= 32) {
    // A year-old service: one partition per past month (the empty legacy one dropped), 3 ahead.
    await sql`DROP TABLE messages_legacy`.execute(db);
    for (let i = back; i >= 0; i--) {
      await sql`DO $$ DECLARE m timestamptz := date_trunc('month', now(), 'UTC') - make_interval(months => ${sql.lit(i)}); n text := 'messages_p' || to_char(m AT TIME ZONE 'UTC', 'YYYYMM');
        BEGIN
          EXECUTE format('CREATE TABLE %I PARTITION OF messages FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 50)', n, cms_uuid_floor(m), cms_uuid_floor(m + interval '1 month'));
          EXECUTE format('CREATE UNIQUE INDEX %I ON %I (batch_id, seq)', n || '_batch_seq', n);
        END $$`.execute(db);
    }
    await sql`SELECT cms_messages_add_partitions(3)`.execute(db);
  }
  const companyId = Number((await sql<{ id: number }>`INSERT INTO companies (name) VALUES ('bench') RETURNING company_id AS id`.execute(db)).rows[0].id);
  // History: --history read messages (with a provider id) in each past month, one batch a month.
  for (let i = back; i >= 1; i--) {
    await sql`WITH b AS (
        INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
        VALUES (gen_random_uuid(), ${companyId}, 'campaign', 1, 'completed', ${Number(values.history)}, '[]', '{}',
                date_trunc('month', now(), 'UTC') - make_interval(months => ${i}) + interval '3 days',
                date_trunc('month', now(), 'UTC') - make_interval(months => ${i}) + interval '3 days')
        RETURNING batch_id, created_at)
      INSERT INTO messages (message_id, batch_id, company_id, seq, phone, status, sent_at, delivered_at, read_at, provider_message_id, rendered)
      SELECT (lpad(to_hex(floor(extract(epoch FROM b.created_at) * 1000)::bigint), 12, '0') || '7' || substr(md5(g::text || ${name}), 1, 19))::uuid,
             b.batch_id, ${companyId}, g, '+49151' || lpad(g::text, 8, '0'), 'read', b.created_at, b.created_at, b.created_at,
             'wamid.history.' || ${i} || '.' || g, ${JSON.stringify(rendered)}::jsonb
      FROM b CROSS JOIN generate_series(0, ${Number(values.history) - 1}) g`.execute(db);
  }
  await sql`VACUUM ANALYZE messages`.execute(db);
  const pid = Number((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0].pid);
  return { name, database, pid, companyId, pruned };
}


type Phase = 'fanout' | 'deliver' | 'receipts';

/** One round on `t`: `batchesPerRound` batches through every phase; CPU ticks and ms per phase. */
async function round(t: Target, r: number): Promise<Record<Phase, { ticks: number; ms: number }>> {
  const db = t.database.db;
  // The pool's one connection may have been replaced while the other databases ran (idle timeout).
  t.pid = Number((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0].pid);
  const out = { fanout: { ticks: 0, ms: 0 }, deliver: { ticks: 0, ms: 0 }, receipts: { ticks: 0, ms: 0 } };
  const timed = async (phase: Phase, fn: () => Promise<unknown>) => {
    const c0 = cpuTicks(t.pid);
    const w0 = performance.now();
    await fn();
    out[phase].ticks += cpuTicks(t.pid) - c0;
    out[phase].ms += performance.now() - w0;
  };
  for (let b = 0; b < batchesPerRound; b++) {
    const batchId = crypto.randomUUID();
    const { rows } = await sql<{ created_at: Date }>`
      INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template)
      VALUES (${batchId}::uuid, ${t.companyId}, 'campaign', 1, 'processing', ${size}, '[]', '{}') RETURNING created_at`.execute(db);
    const acceptedAt = new Date(rows[0].created_at).getTime();
    const range = t.pruned ? messageIdRange(acceptedAt) : undefined;
    const messages: NewMessage[] = Array.from({ length: size }, (_, seq) => ({
      message_id: uuidv7(acceptedAt), seq, contact_id: null, phone: `+49151${String(r * 1e6 + b * size + seq).padStart(8, '0')}`,
      status: 'pending', reason: null, error: null, scheduled_for: null, held_until: null, rendered: rendered as never,
    }));
    await timed('fanout', () => insertMessages(db, batchId, t.companyId, messages));
    const wamid = (seq: number) => `wamid.${batchId}.${seq}`;
    await timed('deliver', async () => {
      for (let from = 0; from < size; from += CHUNK) {
        const to = Math.min(size, from + CHUNK) - 1;
        const { claimed } = await claimMessages(db, batchId, from, to, 15, Date.now(), range);
        await commitResults(db, claimed.map((m) => ({ message_id: m.message_id, status: 'sent' as const, error: null, attempts: 1, sent_at: Date.now(), provider_message_id: wamid(m.seq) })), range);
        await countUnfinished(db, batchId, from, to, range);
        await completeBatchIfDone(db, batchId, Date.now(), range);
      }
    });
    await timed('receipts', async () => {
      // As the receipts-apply job: the last two months first when pruned (everything is found there).
      const recent = t.pruned ? recentIdRange(Date.now()) : undefined;
      for (let from = 0; from < size; from += 500) {
        const seqs = Array.from({ length: Math.min(500, size - from) }, (_, i) => from + i);
        await applyReceipts(db, t.companyId, 'provider_message_id', seqs.map((seq) => ({ id: wamid(seq), delivered_at: Date.now(), read_at: null, failed_at: null, error_code: null, error: null })), recent);
      }
      const ids = messages.map((m) => m.message_id);
      for (let from = 0; from < size; from += 500) {
        await applyReceipts(db, t.companyId, 'message_id', ids.slice(from, from + 500).map((id) => ({ id, delivered_at: null, read_at: Date.now(), failed_at: null, error_code: null, error: null })), recent);
      }
    });
  }
  return out;
}

const base = values['bench-db']!;
const targets = [await open(`${base}_plain`, 31), await open(`${base}_part`, Number.MAX_SAFE_INTEGER, true), await open(`${base}_unpruned`, Number.MAX_SAFE_INTEGER)];
const names = ['plain', 'part', 'unpruned'] as const;
type Name = typeof names[number];
const partitions = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM cms_messages_partitions()`.execute(targets[1].database.db)).rows[0].n);
const results: Record<Name, Record<Phase, { us_cpu: number; us_wall: number }>[]> = { plain: [], part: [], unpruned: [] };
const perMessage = (x: { ticks: number; ms: number }) => ({ us_cpu: +((x.ticks * 10_000) / (batchesPerRound * size)).toFixed(1), us_wall: +((x.ms * 1000) / (batchesPerRound * size)).toFixed(1) });
const loadBefore = os.loadavg()[0];
for (const t of targets) await round(t, 0); // warm-up (caches, plans), not counted
for (let r = 1; r <= rounds; r++) {
  // Each round in another order, so that no target is always first or last.
  const order = [0, 1, 2].map((i) => (i + r) % 3);
  for (const i of order) {
    const o = await round(targets[i], r);
    results[names[i]].push({ fanout: perMessage(o.fanout), deliver: perMessage(o.deliver), receipts: perMessage(o.receipts) });
  }
}
const summary = (name: Name) => Object.fromEntries((['fanout', 'deliver', 'receipts'] as Phase[]).map((p) => [p, {
  us_cpu: median(results[name].map((x) => x[p].us_cpu)), us_wall: median(results[name].map((x) => x[p].us_wall)),
}]));
const total = (name: Name) => median(results[name].map((x) => x.fanout.us_cpu + x.deliver.us_cpu + x.receipts.us_cpu));
console.log(JSON.stringify({
  messages_per_round: batchesPerRound * size, rounds, partitions,
  median_per_message: Object.fromEntries(names.map((n) => [n, summary(n)])),
  server_cpu_us_per_message: { ...Object.fromEntries(names.map((n) => [n, total(n)])), part_ratio: +(total('part') / total('plain')).toFixed(3), unpruned_ratio: +(total('unpruned') / total('plain')).toFixed(3) },
  rounds_per_message: results,
  machine: { nproc: os.cpus().length, loadavg_1m_before: loadBefore, loadavg_1m_after: os.loadavg()[0], pg_local: fs.existsSync(`/proc/${targets[0].pid}`) },
}, null, 2));
for (const t of targets) await t.database.close();
const admin = new pg.Client({ connectionString: values.db });
await admin.connect();
if (!values.keep) for (const t of targets) await admin.query(`DROP DATABASE IF EXISTS ${t.name} WITH (FORCE)`);
await admin.end();
