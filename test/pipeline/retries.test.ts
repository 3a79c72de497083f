/**
 * Retries that outlast an outage (docs/decisions.md#8-retries), through the real
 * server and workers with a FakeClock: one attempt per claim; a transient failure leaves the message
 * `pending` with `next_attempt_at` (shown by GET /admin/batches/{id}/messages) and holds no worker; the
 * workers' sweep releases it when the clock reaches that time. Retry-After longer than the schedule is
 * honoured (webhook and WhatsApp); permanent answers fail at once; an exhausted schedule fails with the
 * last error; DELIVERY_TIMEOUT (default 15 s) lets a slow receiver answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { type ReceiverOptions, refusingPort, startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { approveTemplates } from '../helpers/whatsapp.ts';
import { batchStatus, completed, messagesOf, phone, startPipelineServer } from './helpers.ts';

const T0 = Date.parse('2026-03-02T12:00:00Z');
const clock = new FakeClock(T0);
const SCHEDULE = [5_000, 30_000, 120_000, 600_000]; // DELIVERY_RETRY_SCHEDULE below
let s: TestServer;
const closers: (() => Promise<void>)[] = [];
/**
 * After a move of the clock: the workers' sweep, which releases the messages that have come due, now
 * rather than at its next tick (up to SWEEP_INTERVAL_MS of real time later).
 */
const sweep = () => s.service.workers!.sweepNow();

before(async () => {
  s = await startPipelineServer('retries', { clock, env: { DELIVERY_RETRY_SCHEDULE: '5s,30s,2m,10m' } });
});
after(async () => {
  await s.close();
  for (const c of closers) await c();
});

async function webhookAutomation(url: string, secret: string) {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url, secret });
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'r', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  return { companyId, key, automationId: a.automation_id as number };
}

async function send(key: string, automationId: number, phones: string[]): Promise<string> {
  const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts: phones.map((p, i) => ({ phone: p, first_name: `F${i}` })) } });
  assert.equal(res.status, 200, res.text);
  return res.json.batch_id;
}

/**
 * Waits until the batch's `count` messages exist and each has at least `attempts` attempts with its
 * result committed (final, or waiting with a next attempt).
 */
async function attemptsReach(batchId: string, attempts: number, count: number) {
  return eventually(async () => {
    const ms = await messagesOf(s, batchId);
    return ms.length === count && ms.every((m) => m.attempts >= attempts && (m.status !== 'pending' || m.next_attempt_at)) ? ms : undefined;
  }, 30_000);
}

/** A receiver of this file: its clock stamps the requests; closed after the file. */
async function receiver(answer: ReceiverOptions['answer'], opts: Omit<ReceiverOptions, 'answer' | 'clock'> = {}): Promise<WebhookReceiver> {
  const r = await startReceiver({ answer, clock, ...opts });
  closers.push(() => r.close());
  return r;
}

test('receivers down for 60 s of clock time (503, garbage, refused connections): messages wait pending with next_attempt_at, then all are delivered; 0 failed, 0 lost', async () => {
  const start = clock.now();
  const run = Math.floor(Math.random() * 1000);
  const phones = Array.from({ length: 10 }, (_, i) => phone(run, i));
  // Down: 503 for some, bytes that are not HTTP for the others, while the clock is before start + 60 s.
  const r = await receiver((seen) => (clock.now() < start + 60_000 ? (seen.body?.to?.endsWith('1') ? 'garbage' : 503) : 200));
  const { key, automationId } = await webhookAutomation(r.url, r.secret);
  const batchId = await send(key, automationId, phones);
  // A second company's receiver refuses connections (nothing listens on its port) until it comes up.
  const port = await refusingPort();
  const refused = await webhookAutomation(`http://127.0.0.1:${port}/hooks`, r.secret);
  const refusedPhones = Array.from({ length: 5 }, (_, i) => phone(run, 100 + i));
  const refusedBatch = await send(refused.key, refused.automationId, refusedPhones);

  // Attempt 1 failed: pending, next attempt 5 s later (the first wait of the schedule).
  let ms = await attemptsReach(batchId, 1, 10);
  for (const m of ms) {
    assert.equal(m.status, 'pending');
    assert.equal(m.attempts, 1);
    assert.equal(m.next_attempt_at, new Date(start + SCHEDULE[0]).toISOString());
    assert.match(m.error, /^(HTTP 503|invalid HTTP response|connection closed by the receiver)$/);
  }
  for (const m of await attemptsReach(refusedBatch, 1, 5)) {
    assert.equal(m.status, 'pending');
    assert.equal(m.error, 'connection error: ECONNREFUSED');
    assert.equal(m.next_attempt_at, new Date(start + SCHEDULE[0]).toISOString());
  }
  let b = await batchStatus(s, batchId);
  assert.equal(b.status, 'processing');
  assert.deepEqual(b.counts, { total: 10, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 10 });
  // The chunk job is done: no worker waits for the retry.
  await eventually(async () => {
    const [q] = await s.service.deps.boss.getQueues(['messages-deliver']);
    return q.activeCount === 0;
  }, 10_000);
  // Not yet due: nothing is attempted while the clock stands still.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(r.seen.length, 10);

  // 5 s later: attempt 2, still down; the next wait is 30 s.
  clock.advance(SCHEDULE[0]);
  await sweep();
  ms = await attemptsReach(batchId, 2, 10);
  for (const m of ms) {
    assert.equal(m.status, 'pending');
    assert.equal(m.next_attempt_at, new Date(start + SCHEDULE[0] + SCHEDULE[1]).toISOString());
  }
  // The refusing receiver's messages had their second attempt too, before the clock moves on (else the
  // next move would find them due once for two steps of the schedule).
  await attemptsReach(refusedBatch, 2, 5);
  // 35 s after the start: attempt 3, still down; the next wait is 2 min.
  clock.advance(SCHEDULE[1]);
  await sweep();
  ms = await attemptsReach(batchId, 3, 10);
  assert.ok(ms.every((m) => m.status === 'pending' && m.next_attempt_at === new Date(start + 35_000 + SCHEDULE[2]).toISOString()));
  assert.equal((await batchStatus(s, batchId)).counts.pending, 10);
  await attemptsReach(refusedBatch, 3, 5);

  // 155 s after the start the receiver is back: attempt 4 delivers every message.
  const late = await receiver(() => ({ status: 200, body: 'ok' }), { port });
  const up = late.seen;
  clock.advance(SCHEDULE[2]);
  await sweep();
  b = await completed(s, batchId, 30_000);
  assert.deepEqual(b.counts, { total: 10, sent: 10, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  ms = await messagesOf(s, batchId);
  const delivered = r.delivered();
  for (const m of ms) {
    assert.equal(m.status, 'sent');
    assert.equal(m.attempts, 4);
    assert.equal(m.next_attempt_at, undefined, 'a final message has no next attempt');
    assert.equal(m.error, undefined, 'the error of a failed attempt is cleared once sent');
    assert.equal(m.sent_at, new Date(start + 155_000).toISOString());
    assert.equal(m.provider_message_id, m.message_id, 'the webhook provider\'s id is its webhook-id');
    assert.equal(delivered.get(m.message_id)?.length, 1, 'delivered once');
  }
  assert.equal(r.seen.length, 40, 'one request per attempt');

  // The refusing receiver's messages too: all sent once it listens, none failed.
  const rb = await completed(s, refusedBatch, 30_000);
  assert.deepEqual(rb.counts, { total: 5, sent: 5, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  const refusedMessages = await messagesOf(s, refusedBatch);
  assert.ok(refusedMessages.every((m) => m.attempts === 4 && m.status === 'sent'));
  assert.deepEqual(up.map((x) => x.id).sort(), refusedMessages.map((m) => m.message_id).sort(), 'each delivered once');
  assert.ok(up.every((x) => x.at === start + 155_000));
});

test('a receiver that answers after 6 s (DELIVERY_TIMEOUT 15 s by default): delivered once, sent', async () => {
  const run = Math.floor(Math.random() * 1000);
  const slow = await receiver(() => ({ status: 200, body: 'ok', delayMs: 6_000 }));
  const { key, automationId } = await webhookAutomation(`${slow.origin}/slow`, slow.secret);
  const started = Date.now();
  const batchId = await send(key, automationId, [phone(run, 0)]);
  const b = await completed(s, batchId, 30_000);
  assert.ok(Date.now() - started >= 5_900, 'the answer took 6 s');
  assert.deepEqual(b.counts, { total: 1, sent: 1, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  const [m] = await messagesOf(s, batchId);
  assert.equal(m.status, 'sent');
  assert.equal(m.attempts, 1);
  assert.equal(slow.seen.length, 1, 'delivered once');
});

test('429 with Retry-After longer than the schedule (webhook and WhatsApp): the next attempt honours it; permanent 4xx fails at once', async () => {
  const run = Math.floor(Math.random() * 1000);
  const [limited, permanent, gone, waLimited, waDate] = [0, 1, 2, 3, 4].map((i) => phone(run, i));
  // The webhook receiver and the fake Graph API in one: attempts counted by recipient.
  const srv = await receiver(({ path, body, n }) => {
    const to = String(body.to);
    if (path.startsWith('/hooks')) {
      if (to === limited && n === 1) return { status: 429, headers: { 'retry-after': '600' } };
      if (to === permanent) return { status: 400 };
      if (to === gone) return { status: 410 };
      return { status: 200 };
    }
    // The fake Graph API.
    if (`+${to}` === waLimited && n === 1) {
      return { status: 429, headers: { 'retry-after': '300' }, body: JSON.stringify({ error: { code: 130429, message: 'Rate limit hit' } }) };
    }
    if (`+${to}` === waDate && n === 1) {
      return { status: 503, headers: { 'retry-after': new Date(Date.now() + 900_000).toUTCString() }, body: '<html>busy</html>' };
    }
    return { status: 200, body: JSON.stringify({ messaging_product: 'whatsapp', messages: [{ id: `wamid.${to}` }] }) };
  }, { keyOf: (r) => String(r.body?.to) });

  const start = clock.now();
  const wh = await webhookAutomation(`${srv.origin}/hooks`, srv.secret);
  const whBatch = await send(wh.key, wh.automationId, [limited, permanent, gone]);

  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'whatsapp', phone_number_id: String(100_000_000 + Math.floor(Math.random() * 899_999_999)), access_token: 'EAAG-token', api_base_url: `${srv.origin}/v21.0` });
  await approveTemplates(s, companyId);
  const wa = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'wa', type: 'api', active: true, template: { body: 'Hi', whatsapp: { name: 'hello', language: 'en' } } }, 201);
  const waBatch = await send(key, wa.automation_id, [waLimited, waDate]);

  const byPhone = async (batchId: string, n: number) => new Map((await attemptsReach(batchId, 1, n)).map((m) => [m.phone, m]));
  const w = await byPhone(whBatch, 3);
  assert.equal(w.get(limited).status, 'pending');
  assert.equal(w.get(limited).next_attempt_at, new Date(start + 600_000).toISOString(), 'Retry-After: 600 beats the 5 s of the schedule');
  assert.equal(w.get(limited).error_code, '429');
  for (const [p, code] of [[permanent, '400'], [gone, '410']]) {
    const m = w.get(p);
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 1, 'a permanent answer is not retried');
    assert.equal(m.error, `HTTP ${code}`);
    assert.equal(m.error_code, code);
    assert.equal(m.failed_at, new Date(start).toISOString());
    assert.equal(m.next_attempt_at, undefined);
  }
  const a = await byPhone(waBatch, 2);
  assert.equal(a.get(waLimited).status, 'pending');
  assert.equal(a.get(waLimited).error_code, '130429');
  assert.equal(a.get(waLimited).next_attempt_at, new Date(start + 300_000).toISOString(), 'WhatsApp honours Retry-After too');
  const dated = Date.parse(a.get(waDate).next_attempt_at) - start;
  assert.ok(dated > 880_000 && dated <= 900_000, `an HTTP-date Retry-After (about 900 s) is honoured: ${dated}`);

  // The schedule's 5 s pass: nothing is due yet.
  clock.advance(SCHEDULE[0]);
  await sweep();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(srv.seen.filter((x) => `+${x.body.to}` === waLimited || x.body.to === limited).length, 2);

  // At the Retry-After times the messages go out: 605 s covers the 600 s and 300 s ones, not the dated one.
  clock.advance(600_000);
  await sweep();
  const whDone = await completed(s, whBatch, 30_000);
  assert.deepEqual(whDone.counts, { total: 3, sent: 1, delivered: 0, read: 0, failed: 2, skipped: 0, pending: 0 });
  await eventually(async () => (await messagesOf(s, waBatch)).some((m) => m.phone === waLimited && m.status === 'sent'), 30_000);
  assert.equal((await batchStatus(s, waBatch)).counts.pending, 1, 'the HTTP-date one still waits');
  clock.advance(300_000);
  await sweep();
  const waDone = await completed(s, waBatch, 30_000);
  assert.deepEqual(waDone.counts, { total: 2, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  const sentAgain = srv.seen.filter((x) => x.body.to === limited);
  assert.deepEqual(sentAgain.map((x) => x.at), [start, start + 605_000], 'the second attempt only once the Retry-After time had come');
  const wm = new Map((await messagesOf(s, waBatch)).map((m) => [m.phone, m]));
  assert.equal(wm.get(waLimited).provider_message_id, `wamid.${waLimited.slice(1)}`);
  assert.equal(wm.get(waLimited).attempts, 2);
  assert.equal(wm.get(waLimited).error_code, undefined);
});

test('the schedule exhausted: failed with the last error after 1 + schedule-length attempts', async () => {
  const run = Math.floor(Math.random() * 1000);
  const start = clock.now();
  const r = await receiver((seen) => (seen.n < 5 ? 503 : 500));
  const { key, automationId } = await webhookAutomation(r.url, r.secret);
  const batchId = await send(key, automationId, [phone(run, 0), phone(run, 1)]);
  let at = start;
  for (let attempt = 1; attempt <= SCHEDULE.length; attempt++) {
    const ms = await attemptsReach(batchId, attempt, 2);
    at += SCHEDULE[attempt - 1];
    assert.ok(ms.every((m) => m.status === 'pending' && m.next_attempt_at === new Date(at).toISOString()), `after attempt ${attempt}: ${JSON.stringify(ms.map((m) => [m.status, m.attempts, m.next_attempt_at]))}`);
    clock.set(at);
    await sweep();
  }
  const b = await completed(s, batchId, 30_000);
  assert.deepEqual(b.counts, { total: 2, sent: 0, delivered: 0, read: 0, failed: 2, skipped: 0, pending: 0 });
  for (const m of await messagesOf(s, batchId)) {
    assert.equal(m.attempts, 5);
    assert.equal(m.error, 'HTTP 500', 'the last error');
    assert.equal(m.error_code, '500');
    assert.equal(m.failed_at, new Date(at).toISOString());
    assert.equal(m.next_attempt_at, undefined);
  }
  assert.equal(r.seen.length, 10);
});
