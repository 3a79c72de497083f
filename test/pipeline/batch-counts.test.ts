/**
 * One funnel everywhere (docs/decisions.md#7-a-messages-life; src/domain/batch-counts.ts and its SQL twin
 * cms_batch_counts of migration 024): one batch with messages in every status — sent, delivered and read
 * (receipts through POST /webhooks/provider/status), failed (a 400 answer), skipped (invalid numbers) and
 * pending (a 503 answer, waiting for its retry) — gives the same counts through GET /admin/batches/{id},
 * the company's batch list, the console's Sends query and SQL's cms_batch_counts on the same rows; once
 * the waiting message fails for good, the batch.completed event carries the counts the three views show.
 * At both points the counters the triggers keep (migration 035) equal a count of the messages themselves.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { listRecentBatches } from '../../src/console/queries/sends.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { addEndpoint, until } from '../events/helpers.ts';
import { messagesOf, phone, startPipelineServer } from './helpers.ts';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const clock = new FakeClock(T0);
let s: TestServer;
let provider: WebhookReceiver;
let events: WebhookReceiver;
const failTo = new Set<string>();
const waitTo = new Set<string>();

before(async () => {
  s = await startPipelineServer('batch_counts', { clock, env: { DELIVERY_RETRY_SCHEDULE: '5m' } });
  provider = await startReceiver({ answer: (seen) => (failTo.has(seen.body?.to) ? 400 : waitTo.has(seen.body?.to) ? 503 : 200) });
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await provider.close();
  await events.close();
});

/** POST /webhooks/provider/status signed with the company's webhook-channel secret (real time). */
async function receipts(statuses: { message_id: string; status: string; timestamp: string }[]): Promise<void> {
  const raw = JSON.stringify({ statuses });
  const id = 'msg_' + randomUUID();
  const at = new Date();
  const res = await fetch(`${s.url}/webhooks/provider/status`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(provider.secret).sign(id, at, raw),
    },
    body: raw,
  });
  assert.equal(res.status, 200, await res.text());
}

test('a batch with messages in every status: the same counts in every view, in SQL and in batch.completed', async () => {
  const run = Math.floor(Math.random() * 1000);
  const [r1, d1, d2, s1, s2, s3, f1, w1] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => phone(run, i));
  failTo.add(f1);
  waitTo.add(w1);
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: provider.url, secret: provider.secret });
  await addEndpoint(s, events, companyId, `/counts-${companyId}`, ['batch.completed']);
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'counts', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const res = await s.api('/api/automations/send', {
    key, body: { automation_id: auto.automation_id, contacts: [r1, d1, d2, s1, s2, s3, f1, w1, 'not-a-phone', 'also-not'].map((p) => ({ phone: p, first_name: 'X' })) },
  });
  assert.equal(res.status, 200, res.text);
  const batchId: string = res.json.batch_id;

  // Six sent, one failed, one waiting for its retry, two skipped.
  const msgs = await eventually(async () => {
    const ms = await messagesOf(s, batchId);
    const n = (st: string) => ms.filter((m) => m.status === st).length;
    return ms.length === 10 && n('sent') === 6 && n('failed') === 1 && ms.some((m) => m.next_attempt_at) ? ms : undefined;
  });
  const id = new Map(msgs.map((m) => [m.phone, m.message_id as string]));
  const t = new Date(T0).toISOString();
  await receipts([
    { message_id: id.get(d1)!, status: 'delivered', timestamp: t },
    { message_id: id.get(d2)!, status: 'delivered', timestamp: t },
    { message_id: id.get(r1)!, status: 'read', timestamp: t },
  ]);
  await eventually(async () => {
    const st = new Map((await messagesOf(s, batchId)).map((m) => [m.phone, m.status]));
    return st.get(d1) === 'delivered' && st.get(d2) === 'delivered' && st.get(r1) === 'read';
  });

  /** The counts of the batch through every view: operator API, batch list, console query, SQL. */
  async function views() {
    const one = (await s.admin('GET', `/admin/batches/${batchId}`)).counts;
    const page = await s.admin('GET', `/admin/companies/${companyId}/batches`);
    const listed = page.batches.find((b: any) => b.batch_id === batchId).counts;
    const consoleRow = (await listRecentBatches(s.service.deps.database.db, companyId, 1)).batches.find((b) => b.batch_id === batchId)!.counts;
    const { rows } = await sql<{ counts: unknown }>`SELECT cms_batch_counts(batch_id, total) AS counts FROM batches WHERE batch_id = ${batchId}::uuid`
      .execute(s.service.deps.database.db);
    const inSql = typeof rows[0].counts === 'string' ? JSON.parse(rows[0].counts) : rows[0].counts;
    return { one, listed, consoleRow, inSql };
  }

  /**
   * The counters the triggers keep (migration 035: batch_status_counts for the batch, message_counts
   * for the company), against a count of the batch's messages themselves.
   */
  async function countersAgreeWithMessages() {
    const db = s.service.deps.database.db;
    const { rows: kept } = await sql<Record<string, number>>`SELECT * FROM cms_batch_status_counts(${batchId}::uuid)`.execute(db);
    const { rows: scanned } = await sql<Record<string, number>>`
      SELECT count(*) FILTER (WHERE status = 'sent')::int AS sent, count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
             count(*) FILTER (WHERE status = 'read')::int AS read, count(*) FILTER (WHERE status = 'failed')::int AS failed,
             count(*) FILTER (WHERE status = 'skipped')::int AS skipped
      FROM messages WHERE batch_id = ${batchId}::uuid`.execute(db);
    assert.deepEqual(kept[0], scanned[0], 'batch_status_counts against the messages');
    const { rows: company } = await sql<{ status: string; code: string; n: number }>`
      SELECT status, code, sum(count)::int AS n FROM message_counts WHERE company_id = ${companyId} GROUP BY 1, 2 HAVING sum(count) <> 0 ORDER BY 1, 2`.execute(db);
    const { rows: companyScanned } = await sql<{ status: string; code: string; n: number }>`
      SELECT status, cms_count_code(status, reason, error_code, error) AS code, count(*)::int AS n FROM messages
      WHERE company_id = ${companyId} GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
    assert.deepEqual(company, companyScanned, 'message_counts against the messages');
  }

  // per status: sent 3, delivered 2, read 1, failed 1, skipped 2, pending 1.
  const open = { total: 10, sent: 6, delivered: 3, read: 1, failed: 1, skipped: 2, pending: 1 };
  const v = await views();
  assert.deepEqual(v.one, open, 'GET /admin/batches/{id}');
  assert.deepEqual(v.listed, open, 'GET /admin/companies/{id}/batches');
  assert.deepEqual(v.consoleRow, open, 'the console Sends query');
  assert.deepEqual(v.inSql, open, "SQL's cms_batch_counts on the same rows");
  assert.deepEqual(Object.keys(v.inSql), Object.keys(v.one), 'the same keys in the same order');
  await countersAgreeWithMessages();

  // The retry comes due and fails for good: the batch completes; its event carries the views' counts.
  clock.advance(300_000);
  await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed' || undefined, 30_000);
  const done = { total: 10, sent: 6, delivered: 3, read: 1, failed: 2, skipped: 2, pending: 0 };
  const f = await views();
  assert.deepEqual(f, { one: done, listed: done, consoleRow: done, inSql: done });
  await countersAgreeWithMessages();
  await until(() => events.delivered(`/counts-${companyId}`).size >= 1);
  const got = [...events.delivered(`/counts-${companyId}`).values()].map((x) => x[0].body);
  assert.equal(got.length, 1);
  assert.equal(got[0].type, 'batch.completed');
  assert.equal(got[0].data.batch_id, batchId);
  assert.deepEqual(got[0].data.counts, done, 'batch.completed');
  assert.deepEqual(Object.keys(got[0].data.counts), Object.keys(f.one), 'the event keys in the API order');
});
