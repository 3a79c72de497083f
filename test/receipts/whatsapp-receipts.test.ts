/**
 * WhatsApp receipts end to end (docs/decisions.md#7-a-messages-life, #9-whatsapp-webhooks-in): the fake Graph API takes template
 * messages and answers wamids, then posts signed status webhooks out of order, duplicated, for unknown
 * ids, and failures 131026 / 131047. Every message ends in the right state with the status's times, a
 * receipt never moves a message backwards, and the batch counts add up.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newWamid, postStatuses, startFakeGraph, waStatus, type FakeGraph } from '../helpers/fake-graph.ts';
import { sql } from 'kysely';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { messagesByPhone, receiptsSettled, sendAndComplete, whatsappCompany } from './helpers.ts';

let s: TestServer;
let graph: FakeGraph;

before(async () => {
  s = await startTestServer();
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const run = () => Math.floor(Math.random() * 90_000) + 10_000;
const phoneOf = (r: number, i: number) => `+49151${String(r).padStart(5, '0')}${String(i).padStart(3, '0')}`;
const iso = (ms: number) => new Date(ms).toISOString();

test('out of order, duplicated, unknown and failed receipts: forward only, right times, counts add up', async () => {
  const c = await whatsappCompany(s, graph);
  const r = run();
  const phones = [0, 1, 2, 3, 4, 5].map((i) => phoneOf(r, i));
  const { batchId, batch, wamids } = await sendAndComplete(s, graph, c, phones);
  assert.equal(batch.counts.sent, 6, JSON.stringify(batch.counts));
  assert.equal(wamids.size, 6);
  const before = await messagesByPhone(s, batchId);
  for (const p of phones) assert.equal(before.get(p).provider_message_id, wamids.get(p), 'the wamid is kept');

  const w = (i: number) => wamids.get(phones[i])!;
  const to = (i: number) => phones[i].slice(1);
  const t0 = Date.parse('2026-03-01T10:00:00Z');
  const T = (sec: number) => t0 + sec * 1000;
  const post = async (statuses: ReturnType<typeof waStatus>[]) => {
    const res = await postStatuses(s.url, c.appSecret, c.phoneNumberId, statuses);
    assert.equal(res.status, 200, res.text);
  };

  // First wave: read before delivered (0), delivered twice (1), failures (2: 131026, 3: 131047),
  // delivered and read in one payload (4), a wamid nobody sent.
  await post([
    waStatus(w(0), 'read', to(0), T(20)),
    waStatus(w(1), 'delivered', to(1), T(5)),
    waStatus(w(1), 'delivered', to(1), T(5)),
    waStatus(w(2), 'failed', to(2), T(7), [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }]),
    waStatus(w(3), 'failed', to(3), T(8), [{ code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: 'More than 24 hours have passed' } }]),
    waStatus(w(4), 'read', to(4), T(30)),
    waStatus(w(4), 'delivered', to(4), T(10)),
    waStatus(newWamid(), 'delivered', '4915100000000', T(5)),
  ]);
  await eventually(async () => {
    const m = await messagesByPhone(s, batchId);
    return m.get(phones[0]).status === 'read' && m.get(phones[1]).status === 'delivered' && m.get(phones[2]).status === 'failed'
      && m.get(phones[3]).status === 'failed' && m.get(phones[4]).status === 'read';
  });
  // Second wave, each its own POST: late delivered after read (0), duplicate delivered then read (1),
  // delivered and read after failed (2, 3), a duplicate of the whole first status of 4.
  await post([waStatus(w(0), 'delivered', to(0), T(10))]);
  await post([waStatus(w(1), 'delivered', to(1), T(6))]);
  await post([waStatus(w(1), 'read', to(1), T(40))]);
  await post([waStatus(w(2), 'delivered', to(2), T(9)), waStatus(w(3), 'read', to(3), T(50))]);
  await post([waStatus(w(4), 'read', to(4), T(31))]);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phones[1]).status === 'read');
  await receiptsSettled(s);

  const m = await messagesByPhone(s, batchId);
  const m0 = m.get(phones[0]);
  assert.equal(m0.status, 'read');
  assert.equal(m0.read_at, iso(T(20)));
  assert.equal(m0.delivered_at, iso(T(20)), 'read before delivered sets both times; the late delivered changes nothing');
  const m1 = m.get(phones[1]);
  assert.equal(m1.status, 'read');
  assert.equal(m1.delivered_at, iso(T(5)));
  assert.equal(m1.read_at, iso(T(40)));
  const m2 = m.get(phones[2]);
  assert.equal(m2.status, 'failed');
  assert.equal(m2.error_code, '131026');
  assert.equal(m2.error, 'Message undeliverable');
  // Meta's error as given, as a send-time failure keeps it: code, title, message and details.
  assert.deepEqual(m2.provider_error, { code: '131026', title: 'Message undeliverable', message: 'Message undeliverable', details: 'Message Undeliverable.' });
  assert.equal(m2.failed_at, iso(T(7)));
  assert.equal(m2.delivered_at, undefined);
  assert.ok(m2.sent_at, 'the send time stays');
  const m3 = m.get(phones[3]);
  assert.equal(m3.status, 'failed');
  assert.equal(m3.error_code, '131047');
  assert.deepEqual(m3.provider_error, { code: '131047', title: 'Re-engagement message', message: 'Re-engagement message', details: 'More than 24 hours have passed' });
  assert.equal(m3.read_at, undefined, 'a failed message stays failed');
  const m4 = m.get(phones[4]);
  assert.equal(m4.status, 'read');
  assert.equal(m4.delivered_at, iso(T(10)));
  assert.equal(m4.read_at, iso(T(30)));
  assert.equal(m.get(phones[5]).status, 'sent');
  assert.equal(m.get(phones[5]).delivered_at, undefined);

  const b = await s.admin('GET', `/admin/batches/${batchId}`);
  assert.deepEqual(b.counts, { total: 6, sent: 4, delivered: 3, read: 3, failed: 2, skipped: 0, pending: 0 });
  assert.equal(b.counts.sent + b.counts.failed + b.counts.skipped + b.counts.pending, b.counts.total);

  // The outcomes are counted (cms_receipts_total): applied ones, and the ignored duplicates / late ones.
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  const count = (outcome: string) => Number(new RegExp(`^cms_receipts_total\\{source="whatsapp",outcome="${outcome}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
  assert.ok(count('applied') >= 6, metrics);
  assert.ok(count('ignored') >= 4, metrics);
  assert.ok(count('retried') >= 1, 'the unknown wamid was tried again');
});

test("a wamid of another company is never touched; the other company's own receipts still work", async () => {
  const a = await whatsappCompany(s, graph);
  const other = await whatsappCompany(s, graph);
  const r = run();
  const sent = await sendAndComplete(s, graph, a, [phoneOf(r, 0)]);
  const wamid = sent.wamids.get(phoneOf(r, 0))!;
  // Company `other` signs a status naming company a's wamid with its own number and secret.
  const res = await postStatuses(s.url, other.appSecret, other.phoneNumberId, [waStatus(wamid, 'read', phoneOf(r, 0).slice(1), Date.now())]);
  assert.equal(res.status, 200, 'answered (Meta must not retry), but ignored');
  await receiptsSettled(s);
  assert.equal((await messagesByPhone(s, sent.batchId)).get(phoneOf(r, 0)).status, 'sent');
  // The owner's receipt applies.
  const own = await postStatuses(s.url, a.appSecret, a.phoneNumberId, [waStatus(wamid, 'delivered', phoneOf(r, 0).slice(1), Date.now())]);
  assert.equal(own.status, 200);
  await eventually(async () => (await messagesByPhone(s, sent.batchId)).get(phoneOf(r, 0)).status === 'delivered');
});

test('a receipt that overtakes the stored wamid is applied once the message is known', async () => {
  const c = await whatsappCompany(s, graph);
  const r = run();
  const p = phoneOf(r, 0);
  // The fake posts `delivered` for the new wamid and waits until the service has tried to apply it
  // (a follow-up job for the unknown id is waiting) before it answers the sender with that wamid.
  graph.script = async (req) => {
    if (req.body?.to !== p.slice(1)) return undefined;
    const wamid = newWamid();
    const posted = await postStatuses(s.url, c.appSecret, c.phoneNumberId, [waStatus(wamid, 'delivered', req.body.to, Date.now())]);
    assert.equal(posted.status, 200);
    await eventually(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job
        WHERE name = 'receipts-apply' AND state = 'created' AND data->>'round' = '1' AND data->'statuses'->0->>'id' = ${wamid}`.execute(s.service.deps.database.db);
      return Number(rows[0].n) === 1;
    });
    return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: req.body.to, wa_id: req.body.to }], messages: [{ id: wamid }] } };
  };
  try {
    const sent = await sendAndComplete(s, graph, c, [p]);
    await eventually(async () => (await messagesByPhone(s, sent.batchId)).get(p).status === 'delivered', 30_000);
  } finally {
    graph.script = () => undefined;
  }
});
