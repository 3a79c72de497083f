/**
 * Message retention (MESSAGE_RETENTION, src/queue/retention.ts, docs/operations.md "Retention")
 * through the real service, with the injectable clock moved forward:
 * - row by row (MESSAGE_RETENTION=7d, WhatsApp through the fake Graph API): a finished batch, its
 *   messages with their receipts, an inbound reply and an idempotency key older than that are
 *   deleted by the scheduled round; a batch still held for its scheduled send, a recent batch and a
 *   recent reply are kept; the Overview's counts (rollups) are the same before and after;
 * - in bounded steps: a backlog of several statements' worth of messages and batches is deleted by
 *   one round, a recent batch kept;
 * - the job queue keeps finished jobs an hour or a day;
 * - MESSAGE_RETENTION's bad values are refused at start with a message naming the variable (the start
 *   itself, a process of its own: retention.process.test.ts).
 * On PostgreSQL each server has a database of its own (startPipelineServer): retention deletes by
 * time across companies, so it must not see other test files' rows.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { postInbound, postStatuses, startFakeGraph, waStatus, waText, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { insertBatchAt } from '../console/overview-data.ts';
import { receiptsSettled, sendAndComplete, TEMPLATE, whatsappCompany } from '../receipts/helpers.ts';
import { completed, phone, startPipelineServer } from './helpers.ts';

const DAY = 86_400_000;
const run = Math.floor(Math.random() * 1000);
const iso = (ms: number) => new Date(ms).toISOString();

/** The `n` of a `SELECT count(*)::int AS n ...` on the server's database. */
async function count(s: TestServer, query: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await query.execute(s.service.deps.database.db);
  return Number((rows[0] as { n: number }).n);
}

describe('retention row by row: old finished batches, their messages and receipts, replies and keys go; the rest stays', () => {
  const t0 = Date.now();
  const clock = new FakeClock(t0);
  let s: TestServer;
  let graph: FakeGraph;
  before(async () => {
    s = await startPipelineServer('retention_rows', { clock, env: { MESSAGE_RETENTION: '7d' } });
    graph = await startFakeGraph();
  });
  after(async () => {
    await s?.close();
    await graph?.close();
  });

  test('MESSAGE_RETENTION=7d, clock moved 8 days', async () => {
    const c = await whatsappCompany(s, graph);
    const phones = [1, 2, 3].map((i) => phone(run, i));
    // An old batch, delivered and read receipts applied, and a reply.
    const old = await sendAndComplete(s, graph, c, phones);
    assert.equal((await postStatuses(s.url, c.appSecret, c.phoneNumberId, [
      waStatus(old.wamids.get(phones[0])!, 'delivered', phones[0].slice(1), t0 + 1000),
      waStatus(old.wamids.get(phones[1])!, 'read', phones[1].slice(1), t0 + 2000),
    ])).status, 200);
    assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(phones[2].slice(1), 'Thanks!', t0 + 3000)])).status, 200);
    await receiptsSettled(s);
    await eventually(async () => (await count(s, sql`SELECT count(*)::int AS n FROM inbound_messages WHERE company_id = ${c.companyId}`)) === 1);
    const statuses = (await s.admin('GET', `/admin/batches/${old.batchId}`)).counts;
    assert.deepEqual([statuses.delivered, statuses.read], [2, 1]);
    // An idempotent send: its key is kept 24 hours for replays.
    const keyed = await s.api('/api/automations/send', {
      key: c.key, headers: { 'idempotency-key': `retention-${run}` }, body: { automation_id: c.automationId, contacts: [{ phone: phone(run, 4) }] },
    });
    assert.equal(keyed.status, 200, keyed.text);
    await completed(s, keyed.json.batch_id);
    // An unfinished batch: a campaign send scheduled a year ahead, its messages held until then.
    const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'later', template: TEMPLATE }, 201);
    const later = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [phone(run, 5), phone(run, 6)], scheduled_for: iso(t0 + 365 * DAY) }, 202);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${later.batch_id}`)).status === 'processing');
    const overviewAt = async (ms: number) => {
      clock.set(ms);
      return s.admin('GET', `/admin/companies/${c.companyId}/overview`);
    };
    // An hour after t0: the period then holds the day of t0 even if the batches were accepted after midnight.
    const before0 = await overviewAt(t0 + 3_600_000);
    assert.equal(before0.totals.total, 6, 'the old batch, the keyed send and the held campaign');

    // Eight days later: a recent batch and a recent reply (written at the clock's time), then retention.
    const t8 = t0 + 8 * DAY;
    const recent = await insertBatchAt(s, c.companyId, iso(t8 - 3_600_000), [{ status: 'read' }, { status: 'failed', error: 'HTTP 503', error_code: '503' }]);
    await sql`INSERT INTO inbound_messages (company_id, contact_id, provider_message_id, type, text, received_at, created_at)
      SELECT company_id, contact_id, ${`wamid.recent-${run}`}, 'text', 'Recent', ${new Date(t8)}, ${new Date(t8)}
      FROM contacts WHERE company_id = ${c.companyId} AND phone = ${phones[2]}`.execute(s.service.deps.database.db);
    const before8 = await overviewAt(t8);
    assert.equal(before8.totals.total, 8);
    // Moving the clock by more than RETENTION_EVERY_MS starts a round of the workers' scheduled job.
    await eventually(async () => (await s.admin('GET', `/admin/batches/${old.batchId}`, undefined, 404).then(() => true, () => false)));
    await s.service.workers!.retentionNow(); // and one more, so that every step of a round has run

    assert.equal(await count(s, sql`SELECT count(*)::int AS n FROM messages WHERE batch_id = ${old.batchId}::uuid`), 0, 'old messages (and their receipts) deleted');
    await s.admin('GET', `/admin/batches/${keyed.json.batch_id}`, undefined, 404);
    assert.equal(await count(s, sql`SELECT count(*)::int AS n FROM inbound_messages WHERE company_id = ${c.companyId} AND text = 'Thanks!'`), 0, 'old reply deleted');
    assert.equal(await count(s, sql`SELECT count(*)::int AS n FROM inbound_messages WHERE company_id = ${c.companyId} AND text = 'Recent'`), 1, 'recent reply kept');
    assert.equal(await count(s, sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE company_id = ${c.companyId}`), 0, 'expired idempotency key deleted');
    const held = await s.admin('GET', `/admin/batches/${later.batch_id}`);
    assert.equal(held.status, 'processing', 'the unfinished batch is kept');
    assert.equal(held.counts.pending, 2);
    assert.equal(await count(s, sql`SELECT count(*)::int AS n FROM messages WHERE batch_id = ${later.batch_id}::uuid`), 2, 'with its messages');
    const kept = await s.admin('GET', `/admin/batches/${recent}`);
    assert.deepEqual([kept.counts.read, kept.counts.failed], [1, 1], 'the recent batch is kept');
    // The Overview counts rollups, not messages: the same numbers after the deletion, on both days.
    assert.deepEqual(await overviewAt(t8), before8);
    assert.deepEqual(await overviewAt(t0 + 3_600_000), before0);
    // A late receipt of a deleted message changes nothing and fails nothing.
    assert.equal((await postStatuses(s.url, c.appSecret, c.phoneNumberId, [waStatus(old.wamids.get(phones[2])!, 'read', phones[2].slice(1), t0 + 5000)])).status, 200);
    await receiptsSettled(s);
  });
});

describe('retention in bounded steps: a backlog larger than two statements is deleted by one round', () => {
  let s: TestServer;
  before(async () => { s = await startPipelineServer('retention_steps', { env: { MESSAGE_RETENTION: '1d' } }); });
  after(async () => { await s?.close(); });

  test('4,500 messages of three batches and 1,100 empty batches, accepted and finished three days ago', async () => {
    const c = await s.company();
    const db = s.service.deps.database.db;
    // Written straight into the tables, three days ago by the database's and the service's clock.
    await sql`INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
      SELECT gen_random_uuid(), ${c.companyId}, 'campaign', 1, 'completed', CASE WHEN g <= 3 THEN 1500 ELSE 0 END, '[]', '{}',
             now() - interval '3 days', now() - interval '3 days' + make_interval(secs => g)
      FROM generate_series(1, 1103) g`.execute(db);
    await sql`INSERT INTO messages (message_id, batch_id, company_id, seq, phone, status)
      SELECT gen_random_uuid(), b.batch_id, b.company_id, g, '+49151' || lpad(g::text, 8, '0'), 'sent'
      FROM batches b CROSS JOIN generate_series(0, 1499) g WHERE b.company_id = ${c.companyId} AND b.total = 1500`.execute(db);
    const kept = await insertBatchAt(s, c.companyId, new Date().toISOString(), [{ status: 'sent' }]);
    const left = async () => count(s, sql`SELECT (SELECT count(*) FROM messages WHERE company_id = ${c.companyId})
      + (SELECT count(*) FROM batches WHERE company_id = ${c.companyId})::int AS n`);
    assert.equal(await left(), 4500 + 1103 + 2);
    // RETENTION_STEP (2,000 messages) and RETENTION_BATCH_STEP (500 batches) a statement: at most one
    // other round (the scheduled one) can have run meanwhile, so only a round that repeats its
    // statements until one deletes fewer leaves nothing.
    const round = await s.service.workers!.retentionNow();
    assert.equal(await left(), 2, 'only the recent batch and its message are left');
    // PGlite runs no autovacuum: the round vacuums what it deleted from (unless the scheduled round,
    // 30 s after the start, took the rows first).
    if (round.messages > 0) assert.deepEqual(round.vacuumed, s.kind === 'pglite' ? ['messages', 'batches'] : []);
    assert.equal((await s.admin('GET', `/admin/batches/${kept}`)).counts.sent, 1);
  });

  test("the job queue keeps finished jobs an hour (per-message queues) or a day, not pg-boss's 7 days", async () => {
    const boss = s.service.deps.boss;
    for (const [name, seconds] of [['messages-deliver', 3600], ['receipts-apply', 3600], ['batch-process', 86_400], ['messages-release', 86_400], ['contacts-import', 86_400]] as const) {
      assert.equal((await boss.getQueue(name))?.deleteAfterSeconds, seconds, name);
    }
  });
});

test('MESSAGE_RETENTION: a duration from 1d to 36500d; anything else is refused at start, naming the variable', async () => {
  assert.equal(loadConfig({}).messageRetentionMs, 400 * DAY);
  assert.equal(loadConfig({ MESSAGE_RETENTION: '90d' }).messageRetentionMs, 90 * DAY);
  assert.equal(loadConfig({ MESSAGE_RETENTION: '24h' }).messageRetentionMs, DAY);
  for (const bad of ['banana', '400', '-1d', '1y', '12h', '0d', '36501d']) {
    assert.throws(() => loadConfig({ MESSAGE_RETENTION: bad }), (err: unknown) => err instanceof ConfigError && /^MESSAGE_RETENTION must be a duration/.test(err.message), bad);
  }
  // `cms serve` exits 1 at once with the message: retention.process.test.ts.
});
