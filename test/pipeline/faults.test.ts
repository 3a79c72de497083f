/**
 * Faults: a receiver that refuses, answers garbage and hangs once;
 * permanent refusals and a template that does not render for one contact; a delivery run that died
 * holding its claims. Every message ends in exactly one final status with its attempts counted, and
 * none is delivered twice once its result is committed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { processBatch } from '../../src/queue/handlers/batch-process.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { ChunkBusyError, deliverChunk } from '../../src/queue/handlers/messages-deliver.ts';
import { claimMessages, commitResults } from '../../src/db/messages.ts';
import { ResultWriter } from '../../src/queue/handlers/result-writer.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { type Received, type Scripted, startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { completed, directContext, messagesOf, phone, startPipelineServer } from './helpers.ts';

async function automationFor(s: TestServer, receiver: WebhookReceiver, body: string) {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body } }, 201);
  return { companyId, key, automationId: a.automation_id as number };
}

describe('with workers', () => {
  let s: TestServer;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (answer: (seen: Received) => Scripted) => {
    const r = await startReceiver({ answer });
    receivers.push(r);
    return r;
  };
  // One attempt per claim; transient failures wait 1 ms on the retry schedule (released by the next
  // sweep): four waits, so five attempts in all, as the old in-process retry loop made.
  before(async () => { s = await startPipelineServer('faults', { env: { DELIVERY_RETRY_SCHEDULE: '1ms,1ms,1ms,1ms', DELIVERY_TIMEOUT: '2s' } }); });
  after(async () => {
    await s.close();
    for (const r of receivers) await r.close();
  });

  test('refusals, garbage and one hang: every message ends sent once, with the right attempt count', async () => {
    const run = Math.floor(Math.random() * 1000);
    const hangTo = phone(run, 0);
    const garbageTo = phone(run, 1);
    const r = await receiver((seen) => {
      if (seen.n === 1) return 503;
      if (seen.n === 2) return { status: 429, headers: { 'retry-after': '0' } };
      if (seen.n === 3 && seen.body?.to === hangTo) return 'hang';
      if (seen.n === 3 && seen.body?.to === garbageTo) return 'garbage';
      return 200;
    });
    const { key, automationId } = await automationFor(s, r, 'Hi {{ first_name }}');
    const contacts = [0, 1, 2, 3, 4, 5].map((i) => ({ phone: phone(run, i), first_name: `F${i}` }));
    const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts } });
    assert.equal(res.status, 200, res.text);

    const batch = await completed(s, res.json.batch_id, 45_000);
    assert.deepEqual(batch.counts, { total: 6, sent: 6, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
    const messages = await messagesOf(s, res.json.batch_id);
    const delivered = r.delivered();
    assert.equal(delivered.size, 6);
    for (const m of messages) {
      const expectedAttempts = m.phone === hangTo || m.phone === garbageTo ? 4 : 3;
      assert.equal(m.status, 'sent');
      assert.equal(m.attempts, expectedAttempts, `attempts of ${m.phone}`);
      assert.equal(delivered.get(m.message_id)?.length, 1, 'delivered exactly once');
      const requests = r.seen.filter((x) => x.id === m.message_id);
      assert.equal(requests.length, expectedAttempts, 'one request per counted attempt');
      assert.ok(requests.every((x) => x.signatureError === null && x.text === requests[0].text), 'every attempt carries the same signed body');
      assert.deepEqual(delivered.get(m.message_id)![0].body, m.rendered);
    }
  });

  test('permanent refusal, retries exhausted, a template that does not render: failed with the reason; others sent', async () => {
    const run = Math.floor(Math.random() * 1000);
    const r = await receiver((seen) => (seen.body?.to === phone(run, 0) ? 400 : seen.body?.to === phone(run, 1) ? 503 : 200));
    const { key, automationId } = await automationFor(s, r, 'Hi {{ first_name }}{% for i in (1..variables.n) %}.{% endfor %}');
    const contacts: any[] = [0, 1, 2, 3, 4].map((i) => ({ phone: phone(run, i), first_name: `F${i}` }));
    contacts[2].variables = { n: 100_000_000 }; // exceeds the render memory bound
    const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts } });
    assert.equal(res.status, 200, res.text);

    const batch = await completed(s, res.json.batch_id, 45_000);
    assert.deepEqual(batch.counts, { total: 5, sent: 2, delivered: 0, read: 0, failed: 3, skipped: 0, pending: 0 });
    const byPhone = new Map((await messagesOf(s, res.json.batch_id)).map((m) => [m.phone, m]));
    const view = (i: number) => {
      const m = byPhone.get(phone(run, i));
      return [m.status, m.attempts, m.error?.replace(/,.*$/, '') ?? null];
    };
    assert.deepEqual(view(0), ['failed', 1, 'HTTP 400']);
    assert.deepEqual(view(1), ['failed', 5, 'HTTP 503']);
    assert.deepEqual(view(2), ['failed', 0, 'template error: memory alloc limit exceeded']);
    assert.deepEqual(view(3), ['sent', 1, null]);
    assert.deepEqual(view(4), ['sent', 1, null]);
    assert.equal(byPhone.get(phone(run, 3)).rendered.body, 'Hi F3');
    assert.equal(r.seen.filter((x) => x.body?.to === phone(run, 2)).length, 0, 'an unrendered message is never handed over');
    assert.equal(r.seen.filter((x) => x.body?.to === phone(run, 1)).length, 5);
  });
});

describe('a delivery run that died holding its claims (handlers driven directly, no workers)', () => {
  let s: TestServer;
  let r: WebhookReceiver;
  let ctx: PipelineContext;
  const clock = new FakeClock(Date.parse('2026-03-02T12:00:00Z'));
  before(async () => {
    s = await startPipelineServer('faults_direct', { role: 'api', clock });
    r = await startReceiver();
    ctx = directContext(s, clock);
  });
  after(async () => {
    await ctx.providers.close();
    await s.close();
    await r.close();
  });

  test('fan-out runs once; leased messages wait for the lease; committed ones are never handed over again', async () => {
    const run = Math.floor(Math.random() * 1000);
    const { companyId, key, automationId } = await automationFor(s, r, 'Hi {{ first_name }}');
    const contacts = [0, 1, 2, 3, 4].map((i) => ({ phone: phone(run, i), first_name: `F${i}` }));
    const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts } });
    assert.equal(res.status, 200, res.text);
    const batchId: string = res.json.batch_id;

    assert.deepEqual(await processBatch(ctx, batchId), { messages: 5, pending: 5, held: false, chunks: 1, steps: 1 });
    assert.equal(await processBatch(ctx, batchId), null, 'a second run of the fan-out does nothing');
    assert.equal((await messagesOf(s, batchId)).length, 5);

    // A run claims all five, commits two results, and dies.
    const { claimed } = await claimMessages(ctx.db, batchId, 0, 4, 2, clock.now());
    assert.equal(claimed.length, 5);
    await commitResults(ctx.db, claimed.slice(0, 2).map((m) => ({ message_id: m.message_id, status: 'sent', error: null, attempts: 1, sent_at: clock.now() })));

    const chunk = { batch_id: batchId, company_id: companyId, seq_from: 0, seq_to: 4 };
    await assert.rejects(deliverChunk(ctx, chunk), ChunkBusyError, 'leased messages are not handed over while the lease holds');
    assert.equal(r.seen.length, 0);

    await eventually(async () => {
      try {
        await deliverChunk(ctx, chunk);
        return true;
      } catch (err) {
        if (err instanceof ChunkBusyError) return false;
        throw err;
      }
    }, 20_000, 200);
    assert.deepEqual(r.seen.map((x) => x.body.to).sort(), [2, 3, 4].map((i) => phone(run, i)).sort(), 'only the three uncommitted messages');

    await deliverChunk(ctx, chunk);
    assert.equal(r.seen.length, 3, 'a finished chunk delivers nothing again');
    const batch = await completed(s, batchId);
    assert.deepEqual(batch.counts, { total: 5, sent: 5, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
    assert.ok((await messagesOf(s, batchId)).every((m) => m.attempts === 1));
  });

  test('result flushes: one statement commits several runs\' results and reads each batch\'s state (running, paused, cancelled, gone)', async () => {
    const run = Math.floor(Math.random() * 1000);
    const { automationId, key } = await automationFor(s, r, 'Hi');
    const batches: string[] = [];
    for (const k of [0, 1]) {
      const contacts = [0, 1, 2, 3, 4].map((i) => ({ phone: phone(run, 10 * k + i) }));
      const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts } });
      assert.equal(res.status, 200, res.text);
      batches.push(res.json.batch_id);
      await processBatch(ctx, res.json.batch_id);
    }
    const [a, b] = batches;
    const ca = (await claimMessages(ctx.db, a, 0, 4, 15, clock.now())).claimed;
    const cb = (await claimMessages(ctx.db, b, 0, 4, 15, clock.now())).claimed;
    assert.equal(ca.length + cb.length, 10);
    const sent = (m: { message_id: string }) => ({ message_id: m.message_id, status: 'sent' as const, error: null, attempts: 1, sent_at: clock.now() });
    const gone = '00000000-0000-4000-8000-000000000000';

    const first = await commitResults(ctx.db, [sent(ca[0]), sent(cb[0])], [a, b, gone]);
    assert.deepEqual([...first.written.values()], ['sent', 'sent']);
    assert.deepEqual(Object.fromEntries(first.states), { [a]: 'running', [b]: 'running', [gone]: 'gone' });

    await s.admin('POST', `/admin/batches/${a}/pause`, undefined, 200);
    await s.admin('POST', `/admin/batches/${b}/cancel`, undefined, 200);
    // A writer merges the commits of one event-loop turn: two runs, each told its own rows and state.
    let statements = 0;
    const counted = ctx.db.withPlugin({
      transformQuery: (args) => { statements++; return args.node; },
      transformResult: async (args) => args.result,
    });
    const writer = new ResultWriter(counted, 200);
    const [ra, rb, again] = await Promise.all([
      writer.commit([sent(ca[1]), sent(ca[2])], a, true),
      writer.commit([sent(cb[1])], b, true),
      writer.commit([sent(ca[0])], a, false), // already sent: nothing written; no state asked
    ]);
    assert.deepEqual(ra, { written: ['sent', 'sent'], state: 'paused' });
    assert.deepEqual(rb, { written: ['sent'], state: 'cancelled' });
    assert.deepEqual(again, { written: [], state: 'running' });
    assert.equal(statements, 1, 'the three commits of one turn went out as one statement');
    await s.admin('POST', `/admin/batches/${a}/resume`, undefined, 200);
    assert.deepEqual(await writer.commit([sent(ca[3])], a, true), { written: ['sent'], state: 'running' });

    const status = new Map([...await messagesOf(s, a), ...await messagesOf(s, b)].map((m) => [m.message_id, m.status]));
    assert.deepEqual([ca[0], ca[1], ca[2], ca[3], cb[0], cb[1]].map((m) => status.get(m.message_id)), Array(6).fill('sent'));
    assert.notEqual(status.get(ca[4].message_id), 'sent');
  });
});
