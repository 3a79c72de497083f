/**
 * Event delivery end to end (docs/events.md), through the real server and database with a
 * FakeClock: every request verified by the official `standardwebhooks` package (0 failures), the
 * envelope and `data` of message.sent / message.failed / message.skipped / batch.completed /
 * contact.opted_out / contact.opted_in exactly as §5; subscriptions respected; no event for a change
 * that rolled back; a receiver down for 60 s of clock time gets every event afterwards (attempts
 * logged, same webhook-id on every attempt), replay since a time re-sends exactly the later events;
 * resend; Retry-After; retention.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { addEndpoint, batchCompleted, phone, RFC3339_MS, sendTo, until } from './helpers.ts';

let s: TestServer;
let events: WebhookReceiver;
let provider: WebhookReceiver;
const clock = new FakeClock(Date.parse('2026-01-05T10:00:00Z'));

before(async () => {
  s = await startPipelineServer('events_delivery', { clock, env: { EVENT_RETRY_SCHEDULE: '10s,10s,10s,10s,10s,10s,10s,10s,10s,10s' } });
  events = await startReceiver();
  // The message provider: a webhook receiver that fails messages to numbers ending in 9 for good.
  provider = await startReceiver({ answer: (seen) => (String(seen.body?.to ?? '').endsWith('9') ? 400 : 200) });
});
after(async () => {
  await s.close();
  await events.close();
  await provider.close();
});

const run = Math.floor(Math.random() * 1000);

test('message, batch and contact events: signed, envelope and data exactly as §5', async () => {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: provider.url, secret: provider.secret });
  const all = await addEndpoint(s, events, companyId, `/all-${companyId}`);
  const onlyBatch = await addEndpoint(s, events, companyId, `/batch-${companyId}`, ['batch.completed']);
  // An opted-out contact (its event: contact.opted_out, source operator import), then opted in again.
  const optedOut = phone(run, 1);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: optedOut, opted_out: true }] });
  // 4.3 sends to opted-out contacts too (only campaigns skip them); an invalid number is skipped.
  const phones = [phone(run, 0), optedOut, phone(run, 9), 'not-a-phone'];
  const batchId = await sendTo(s, companyId, key, phones);
  const batch = await batchCompleted(s, batchId);
  assert.deepEqual({ sent: batch.counts.sent, failed: batch.counts.failed, skipped: batch.counts.skipped }, { sent: 2, failed: 1, skipped: 1 });
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: optedOut, opted_out: false }] });

  // all: opted_out, 2 sent, 1 failed, 1 skipped, batch.completed, opted_in = 7; batch endpoint: 1.
  await until(() => events.delivered(`/all-${companyId}`).size >= 7 && events.delivered(`/batch-${companyId}`).size >= 1);
  const got = [...events.delivered(`/all-${companyId}`).values()].map((v) => v[0]);
  assert.equal(got.length, 7);
  assert.deepEqual(events.signatureFailures(), []);
  const byType = (t: string) => got.filter((g) => g.body.type === t);
  assert.deepEqual(got.map((g) => g.body.type).sort(),
    ['batch.completed', 'contact.opted_in', 'contact.opted_out', 'message.failed', 'message.sent', 'message.sent', 'message.skipped']);
  const messages = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages as any[];
  const automationId = (await s.admin('GET', `/admin/batches/${batchId}`)).source_id ?? undefined;
  for (const g of got) {
    assert.match(g.id, /^evt_[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(g.body).sort(), ['data', 'timestamp', 'type']);
    assert.match(g.body.timestamp, RFC3339_MS);
    assert.equal(g.headers['content-type'], 'application/json');
    assert.match(String(g.headers['webhook-timestamp']), /^\d+$/);
    assert.ok(Math.abs(Number(g.headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'real time');
    assert.match(String(g.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
  }
  for (const g of [...byType('message.sent'), ...byType('message.failed'), ...byType('message.skipped')]) {
    const m = messages.find((x) => x.message_id === g.body.data.message_id);
    assert.ok(m, 'a message of the batch');
    const d = g.body.data;
    assert.equal(d.batch_id, batchId);
    assert.equal(d.company_id, companyId);
    assert.equal(d.kind, 'automation');
    assert.equal(typeof d.source_id, 'number');
    if (automationId !== undefined) assert.equal(d.source_id, automationId);
    assert.equal(d.phone, m.phone);
    assert.equal(d.status, g.body.type.slice('message.'.length));
    const allowed = ['message_id', 'batch_id', 'company_id', 'kind', 'source_id', 'phone', 'status', 'reason', 'error', 'error_code',
      'provider_message_id', 'sent_at', 'delivered_at', 'read_at', 'failed_at'];
    for (const k of Object.keys(d)) assert.ok(allowed.includes(k), `unexpected data field ${k}`);
    for (const k of ['sent_at', 'delivered_at', 'read_at', 'failed_at']) if (k in d) assert.match(d[k], RFC3339_MS);
  }
  const sent = byType('message.sent');
  for (const g of sent) {
    assert.ok([phone(run, 0), optedOut].includes(g.body.data.phone));
    assert.equal(g.body.data.sent_at, new Date(clock.now()).toISOString());
    assert.equal(g.body.timestamp, g.body.data.sent_at);
  }
  const failed = byType('message.failed')[0].body;
  assert.equal(failed.data.phone, phone(run, 9));
  assert.ok(failed.data.error, 'failed carries the error');
  assert.equal(failed.timestamp, failed.data.failed_at ?? failed.timestamp);
  const skipped = byType('message.skipped')[0].body;
  assert.equal(skipped.data.reason, 'invalid_phone');

  const bc = byType('batch.completed')[0].body;
  assert.deepEqual(Object.keys(bc.data).sort(), ['batch_id', 'counts', 'kind', 'source_id']);
  assert.equal(bc.data.batch_id, batchId);
  assert.equal(bc.data.kind, 'automation');
  assert.deepEqual(bc.data.counts, { total: 4, sent: 2, delivered: 0, read: 0, failed: 1, skipped: 1, pending: 0 });
  // The batch-only endpoint got only that, with the same webhook-id.
  const batchOnly = [...events.delivered(`/batch-${companyId}`).values()].map((v) => v[0]);
  assert.deepEqual(batchOnly.map((g) => g.body.type), ['batch.completed']);
  assert.equal(batchOnly[0].id, byType('batch.completed')[0].id);
  assert.equal(batchOnly[0].text, byType('batch.completed')[0].text, 'the same stored body');

  for (const [t, expectSource] of [['contact.opted_out', true], ['contact.opted_in', false]] as const) {
    const c = byType(t)[0].body;
    assert.equal(c.data.phone, optedOut);
    assert.match(c.data.at, RFC3339_MS);
    assert.equal(c.timestamp, c.data.at);
    for (const k of Object.keys(c.data)) assert.ok(['phone', 'source', 'at'].includes(k), k);
    if (expectSource) assert.equal(typeof c.data.source, 'string');
  }

  // The attempt log of the endpoint: one 200 attempt per event.
  const log = await eventually(async () => {
    const l = await s.admin('GET', `/admin/event-endpoints/${all.endpoint_id}/attempts`);
    return l.attempts.length >= 7 ? l : undefined;
  });
  assert.equal(log.attempts.length, 7);
  for (const a of log.attempts) {
    assert.equal(a.status_code, 200);
    assert.equal(a.attempt, 1);
    assert.equal(typeof a.duration_ms, 'number');
    assert.match(a.at, RFC3339_MS);
    assert.equal(a.response_excerpt, '{"ok":true}');
  }
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  assert.match(metrics, /cms_event_attempts_total\{outcome="delivered"\} \d+/);
  // Other companies' scoped view of these attempts: 404.
  const other = await s.company();
  const r = await fetch(`${s.url}/admin/event-endpoints/${all.endpoint_id}/attempts?company_id=${other.companyId}`, { headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc' } });
  assert.equal(r.status, 404);
  assert.ok(onlyBatch.endpoint_id);
});

test('no event for a change that rolled back; no event without a subscribed endpoint', async () => {
  const { companyId } = await s.company();
  const path = `/rollback-${companyId}`;
  await addEndpoint(s, events, companyId, path, ['contact.opted_out']);
  const db = s.service.deps.database.db;
  const p = phone(run, 50);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, opted_out: false }] });
  await assert.rejects(db.transaction().execute(async (trx) => {
    await trx.updateTable('contacts').set({ opted_out: true, opt_out_source: 'operator', opt_out_at: new Date(clock.now()) }).where('company_id', '=', companyId).where('phone', '=', p).execute();
    const n = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE company_id = ${companyId}`.execute(trx);
    assert.equal(n.rows[0].n, 1, 'the event is written in the same transaction');
    throw new Error('roll back');
  }), /roll back/);
  const n = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE company_id = ${companyId}`.execute(db);
  assert.equal(n.rows[0].n, 0);
  // A type nobody subscribed to: no event row at all.
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, opted_out: true }] });
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, opted_out: false }] });
  await until(() => events.delivered(path).size === 1);
  const types = await sql<{ type: string }>`SELECT type FROM events WHERE company_id = ${companyId}`.execute(db);
  assert.deepEqual(types.rows.map((r) => r.type), ['contact.opted_out']);
});

test('receiver down for 60 s of clock time: every event arrives after, same webhook-id; attempts logged; replay and resend', async () => {
  const { companyId } = await s.company();
  const path = `/down-${companyId}`;
  const ep = await addEndpoint(s, events, companyId, path, ['contact.opted_out', 'contact.opted_in']);
  let down = true;
  const previous = events.answer;
  events.answer = (seen) => (seen.path === path && down ? (seen.n % 2 ? 503 : 'down') : previous(seen));
  try {
    const phones = Array.from({ length: 10 }, (_, i) => phone(run, 100 + i));
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((p) => ({ phone: p, opted_out: true })) });
    // 60 s of clock time in 10 s steps: an attempt each time the retry falls due (waiting until each
    // round of attempts is written before moving the clock on).
    const logged = async (n: number) => eventually(async () => {
      const l = (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts?limit=1000`)).attempts.length;
      if (process.env.DEBUG_EVENTS) console.log('attempts', l, 'want', n);
      return l === n || undefined;
    });
    await logged(10);
    for (let t = 1; t <= 6; t++) {
      clock.advance(10_000);
      await logged(10 * (t + 1));
    }
    assert.equal(events.delivered(path).size, 0);
    down = false;
    clock.advance(10_000);
    await until(() => events.delivered(path).size === 10);
    assert.deepEqual(events.signatureFailures(), []);
    const seen = events.seen.filter((x) => x.path === path);
    const ids = new Set(seen.map((x) => x.id));
    assert.equal(ids.size, 10, 'one webhook-id per event, the same on every attempt');
    for (const id of ids) {
      const tries = seen.filter((x) => x.id === id);
      assert.equal(tries.length, 8, 'seven failed attempts then the delivered one');
      assert.equal(new Set(tries.map((x) => x.text)).size, 1, 'the same body every time');
    }
    await logged(80);
    const log = (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts?limit=1000`)).attempts as any[];
    assert.equal(log.length, 80);
    assert.equal(log.filter((a) => a.status_code === 200).length, 10);
    assert.equal(log.filter((a) => a.status_code === 503).length + log.filter((a) => a.status_code === null && a.error).length, 70);
    assert.deepEqual([...new Set(log.map((a) => a.attempt))].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
    const endpoint = await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`);
    assert.equal(endpoint.failing_since, null, 'a success clears the failure streak');
    assert.equal(endpoint.enabled, true);

    // Replay since a time between two groups of events: exactly the later ones again.
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.slice(0, 3).map((p) => ({ phone: p, opted_out: false })) });
    await until(() => { if (process.env.DEBUG_EVENTS) console.log("delivered", events.delivered(path).size, events.seen.length); return events.delivered(path).size === 13; });
    const later = [...events.delivered(path).values()].filter((v) => v[0].body.type === 'contact.opted_in').map((v) => v[0].id);
    assert.equal(later.length, 3);
    await logged(83);
    const countBefore = events.seen.filter((x) => x.path === path).length;
    const replay = await s.admin('POST', `/admin/event-endpoints/${ep.endpoint_id}/replay`, { since }, 202);
    assert.deepEqual(replay, { events: 3 });
    await until(() => events.seen.filter((x) => x.path === path).length === countBefore + 3);
    const replayed = events.seen.filter((x) => x.path === path).slice(countBefore);
    assert.deepEqual(replayed.map((x) => x.id).sort(), [...later].sort(), 'the same ids, exactly the events after `since`');
    assert.deepEqual(events.signatureFailures(), []);

    // Resend one event: once more, same id.
    const one = later[0];
    const resent = await s.admin('POST', `/admin/events/${one}/resend`, undefined, 202);
    assert.deepEqual(resent, { events: 1, deliveries: 1 });
    await until(() => events.seen.filter((x) => x.path === path).length === countBefore + 4);
    assert.equal(events.seen.at(-1)!.id, one);
    // Scoped to another company: 404, nothing sent.
    const other = await s.company();
    const r = await fetch(`${s.url}/admin/events/${one}/resend?company_id=${other.companyId}`, { method: 'POST', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc' } });
    assert.equal(r.status, 404);
  } finally {
    events.answer = previous;
  }
});

test('Retry-After longer than the schedule is honoured', async () => {
  const { companyId } = await s.company();
  const path = `/retry-after-${companyId}`;
  const ep = await addEndpoint(s, events, companyId, path, ['contact.opted_out']);
  const previous = events.answer;
  events.answer = (seen) => (seen.path === path ? (seen.n === 1 ? { status: 429, headers: { 'retry-after': '120' } } : 200) : previous(seen));
  try {
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(run, 300), opted_out: true }] });
    await eventually(async () => (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts`)).attempts.length === 1 || undefined);
    const attemptedAt = clock.now();
    clock.advance(60_000); // past the 10 s of the schedule, before the 120 s asked for
    // The retry is stored for 120 s after the attempt, not the schedule's 10 s: not due yet, not sent.
    const d = await sql<{ status: string; next_attempt_at: Date }>`SELECT status, next_attempt_at FROM event_deliveries WHERE endpoint_id = ${ep.endpoint_id}`.execute(s.service.deps.database.db);
    assert.equal(d.rows.length, 1);
    assert.equal(d.rows[0].status, 'pending');
    assert.equal(new Date(d.rows[0].next_attempt_at).getTime(), attemptedAt + 120_000, 'next attempt at Retry-After');
    assert.equal(events.seen.filter((x) => x.path === path).length, 1, 'not before Retry-After');
    clock.advance(61_000);
    await until(() => events.delivered(path).size === 1);
    const log = await eventually(async () => {
      const l = (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts`)).attempts;
      return l.length === 2 ? l : undefined;
    });
    assert.deepEqual(log.map((a: any) => a.status_code), [200, 429]);
  } finally {
    events.answer = previous;
  }
});

test('retention: events and attempts older than EVENT_RETENTION are deleted', async () => {
  const { companyId } = await s.company();
  const path = `/retention-${companyId}`;
  const ep = await addEndpoint(s, events, companyId, path, ['contact.opted_out']);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(run, 400), opted_out: true }] });
  await until(() => events.delivered(path).size === 1);
  const db = s.service.deps.database.db;
  const count = async () => (await sql<{ n: number }>`SELECT (SELECT count(*) FROM events WHERE company_id = ${companyId}) + (SELECT count(*) FROM event_attempts WHERE endpoint_id = ${ep.endpoint_id}) AS n`.execute(db)).rows[0].n;
  await eventually(async () => Number(await count()) === 2 || undefined);
  const saved = clock.now();
  // 31 days after now by real time (events are created in database time).
  clock.set(Date.now() + 31 * 24 * 3600 * 1000);
  try {
    await eventually(async () => Number(await count()) === 0 || undefined);
  } finally {
    clock.set(saved);
  }
});
