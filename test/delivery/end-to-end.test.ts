/**
 * The rules the two former delivery stacks disagreed on, now one (docs/events.md "Retries"),
 * through the real server, workers, event loop and database with a FakeClock:
 * - Retry-After is capped at 7 days for events as for messages;
 * - Retry-After is honoured only for retryable failures: an event endpoint answering 400 with
 *   Retry-After is retried on EVENT_RETRY_SCHEDULE (events retry every failure but 410), not later;
 * - an answer larger than 64 KiB is a failed, retryable attempt for message webhooks as for events:
 *   the message waits for its next attempt and is sent once an answer fits.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { addEndpoint, phone, until } from '../events/helpers.ts';
import { completed, messagesOf, startPipelineServer } from '../pipeline/helpers.ts';

const WEEK_MS = 7 * 24 * 3600_000;
const clock = new FakeClock(Date.parse('2026-04-06T10:00:00Z'));
const run = Math.floor(Math.random() * 1000);
let s: TestServer;
let receiver: WebhookReceiver;

before(async () => {
  s = await startPipelineServer('delivery_rules', { clock, env: { EVENT_RETRY_SCHEDULE: '10s,10s,10s', DELIVERY_RETRY_SCHEDULE: '5s,5s,5s' } });
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await receiver.close();
});

/** The one delivery row of endpoint `endpointId`. */
async function delivery(endpointId: number): Promise<{ status: string; next_attempt_at: Date | null; attempts: number }> {
  const r = await sql<{ status: string; next_attempt_at: Date | null; attempts: number }>`
    SELECT status, next_attempt_at, attempts FROM event_deliveries WHERE endpoint_id = ${endpointId}`.execute(s.service.deps.database.db);
  assert.equal(r.rows.length, 1);
  return r.rows[0];
}

/** An endpoint answered by `answer` on its first attempt (200 after), and one contact event to it; resolves after that attempt is written. */
async function firstAttemptAnswered(name: string, first: { status: number; headers: Record<string, string> }, i: number) {
  const { companyId } = await s.company();
  const path = `/${name}-${companyId}`;
  const ep = await addEndpoint(s, receiver, companyId, path, ['contact.opted_out']);
  const previous = receiver.answer;
  receiver.answer = (seen) => (seen.path === path ? (seen.n === 1 ? first : 200) : previous(seen));
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(run, i), opted_out: true }] });
  const d = await eventually(async () => {
    const row = await delivery(ep.endpoint_id);
    return row.attempts === 1 ? row : undefined;
  });
  return { ep, path, d, attemptedAt: clock.now() };
}

test('events: Retry-After of a retryable answer is capped at 7 days', async () => {
  const { d, attemptedAt, path, ep } = await firstAttemptAnswered('capped', { status: 503, headers: { 'retry-after': String(30 * 24 * 3600) } }, 1);
  assert.equal(d.status, 'pending');
  assert.equal(new Date(d.next_attempt_at!).getTime(), attemptedAt + WEEK_MS, 'a week, not the 30 days asked for');
  clock.advance(WEEK_MS);
  await until(() => receiver.delivered(path).size === 1);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).enabled, true, 'waiting a week on the receiver\'s word is not 5 days of failures');
});

test('events: a permanent answer\'s Retry-After is not honoured: the schedule\'s wait applies', async () => {
  const { d, attemptedAt, path, ep } = await firstAttemptAnswered('permanent', { status: 400, headers: { 'retry-after': '3600' } }, 2);
  assert.equal(d.status, 'pending', 'events retry every failure but 410');
  assert.equal(new Date(d.next_attempt_at!).getTime(), attemptedAt + 10_000, 'the schedule\'s 10 s, not the hour asked for');
  clock.advance(10_000);
  await until(() => receiver.delivered(path).size === 1);
  const log = await eventually(async () => {
    const l = (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts`)).attempts;
    return l.length === 2 ? l : undefined;
  });
  assert.deepEqual(log.map((a: any) => a.status_code), [200, 400]);
  assert.deepEqual(receiver.signatureFailures(), []);
});

test('messages: a 2xx answer larger than 64 KiB is a retryable failure; the next attempt is sent', async () => {
  const { companyId, key } = await s.company();
  const path = `/hooks-huge-${companyId}`;
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.origin + path, secret: receiver.secret });
  const previous = receiver.answer;
  receiver.answer = (seen) => (seen.path === path ? (seen.n === 1 ? { status: 200, body: 'x'.repeat(100_000) } : 200) : previous(seen));
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'huge', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const res = await s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: phone(run, 3) }] } });
  assert.equal(res.status, 200, res.text);
  const batchId = res.json.batch_id;
  const [m] = await eventually(async () => {
    const ms = await messagesOf(s, batchId);
    return ms.length === 1 && ms[0].attempts === 1 && ms[0].next_attempt_at ? ms : undefined;
  });
  assert.equal(m.status, 'pending');
  assert.equal(m.error, 'response larger than 65536 bytes');
  clock.advance(5_000);
  const batch = await completed(s, batchId);
  assert.equal(batch.counts.sent, 1);
  assert.equal(receiver.seen.filter((x) => x.path === path).length, 2);
  assert.deepEqual(receiver.signatureFailures(), []);
});
