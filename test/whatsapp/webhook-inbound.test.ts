/**
 * Inbound WhatsApp messages, enriched (docs/whatsapp.md "Inbound messages", docs/events.md): the
 * sender's profile name fills an empty first_name only; `context.id` becomes `reply_to` in
 * message.received ({message_id, batch_id} of ours, null for a message that is not ours, absent when
 * the message answers nothing); reactions keep their emoji and the message reacted to, media their id,
 * MIME type and caption, locations their coordinates; the contact's last inbound time and
 * `window_open_until` (24 h later) in the operator API; erasure removes the new personal fields too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { newWamid, postInbound, startFakeGraph, unixSeconds, waText, type FakeGraph, type WaMessage } from '../helpers/fake-graph.ts';
import { eventually, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { addEndpoint, until } from '../events/helpers.ts';
import { receiptsSettled, sendAndComplete } from '../receipts/helpers.ts';
import { randomWabaId, wabaCompany } from './webhook-helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let events: WebhookReceiver;

before(async () => {
  s = await startPipelineServer('wa_webhook_inbound');
  graph = await startFakeGraph();
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await events.close();
});

const iso = (ms: number) => new Date(ms).toISOString();
const DAY = 24 * 3600 * 1000;

test('profile names, reply_to, reactions, media and locations: stored and shown in message.received; window_open_until', async () => {
  const c = await wabaCompany(s, graph, { wabaId: randomWabaId(), automation: true });
  const path = `/in-${c.companyId}`;
  await addEndpoint(s, events, c.companyId, path, ['message.received']);
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const [p, q, e, n] = [1, 2, 3, 4].map((i) => `+49156${r}00${i}`);
  // p gets a message from us (first_name F0 from the send); e exists with an empty first name; n never writes.
  const sent = await sendAndComplete(s, graph, { ...c, automationId: c.automationId!, verifyToken: '' }, [p]);
  const wamid = sent.wamids.get(p)!;
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: e, first_name: '' }, { phone: n, first_name: 'Nora' }] });

  const t = Date.parse('2026-03-02T08:00:00Z');
  const from = (x: string) => x.slice(1);
  const msg = (x: string, at: number, fields: Partial<WaMessage> & { type: string }): WaMessage => ({ from: from(x), id: newWamid(), timestamp: unixSeconds(at), ...fields });
  const answer = msg(p, t, { type: 'text', text: { body: 'Yes please' }, context: { from: '15550783881', id: wamid } });
  const strange = msg(p, t + 1000, { type: 'text', text: { body: 'And this?' }, context: { from: '15550783881', id: 'wamid.NOT-OURS' } });
  const plain = waText(from(q), 'Hello', t + 2000);
  const reaction = msg(p, t + 3000, { type: 'reaction', reaction: { message_id: wamid, emoji: '👍' } });
  const unreact = msg(p, t + 4000, { type: 'reaction', reaction: { message_id: wamid } });
  const image = msg(q, t + 5000, { type: 'image', image: { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'HgbCbyTmnQJeFAD9', caption: 'My receipt' } });
  const doc = msg(q, t + 6000, { type: 'document', document: { id: '2479537139650973', mime_type: 'application/pdf', sha256: 'AbC', filename: 'invoice.pdf' } });
  const place = msg(q, t + 7000, { type: 'location', location: { latitude: 52.516275, longitude: 13.377704, name: 'Brandenburger Tor', address: 'Pariser Platz, 10117 Berlin' } });
  const fromE = waText(from(e), 'hi', t + 8000);
  const res = await postInbound(s.url, c.appSecret, c.phoneNumberId, [answer, strange, plain, reaction, unreact, image, doc, place, fromE],
    { [from(p)]: 'Anna Schmidt', [from(q)]: '  Grace Hopper ', [from(e)]: 'Emil' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { statuses: 0, messages: 9 });

  await until(() => events.delivered(path).size >= 9);
  const got = new Map([...events.delivered(path).values()].map((v) => [v[0].body.data.provider_message_id, v[0].body]));
  assert.equal(got.size, 9);
  const data = (m: WaMessage) => got.get(m.id).data;
  const ours = (await s.admin('GET', `/admin/batches/${sent.batchId}/messages`)).messages[0];
  assert.equal(ours.provider_message_id, wamid);
  assert.deepEqual(data(answer).reply_to, { message_id: ours.message_id, batch_id: sent.batchId });
  assert.equal(data(answer).text, 'Yes please');
  assert.ok('reply_to' in data(strange) && data(strange).reply_to === null, 'a reply to a message that is not ours: null');
  assert.ok(!('reply_to' in data(plain)), 'a message that answers nothing has no reply_to');
  assert.deepEqual(Object.keys(data(plain)).sort(), ['phone', 'provider_message_id', 'received_at', 'text', 'type']);
  assert.deepEqual(data(reaction).reaction, { emoji: '👍', provider_message_id: wamid });
  assert.equal(data(reaction).reply_to.batch_id, sent.batchId, 'a reaction names the message reacted to');
  assert.deepEqual(data(unreact).reaction, { provider_message_id: wamid }, 'a removed reaction has no emoji');
  assert.deepEqual(data(image).media, { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'HgbCbyTmnQJeFAD9' });
  assert.equal(data(image).text, 'My receipt', 'the caption is the text');
  assert.equal(data(image).type, 'image');
  assert.deepEqual(data(doc).media, { id: '2479537139650973', mime_type: 'application/pdf', sha256: 'AbC', filename: 'invoice.pdf' });
  assert.deepEqual(data(place).location, { latitude: 52.516275, longitude: 13.377704, name: 'Brandenburger Tor', address: 'Pariser Platz, 10117 Berlin' });
  assert.equal(got.get(place.id).timestamp, iso(t + 7000));

  // Profile names fill empty first names only.
  const view = (x: string) => s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(x)}`);
  assert.equal((await view(p)).first_name, 'F0', 'a name already there stays');
  assert.equal((await view(q)).first_name, 'Grace Hopper', 'a new contact takes its profile name');
  assert.equal((await view(e)).first_name, 'Emil', 'an empty first name is filled');

  // The window: 24 h after the latest inbound message; an older message arriving late does not move it.
  const vq = await view(q);
  assert.equal(vq.last_inbound_at, iso(t + 7000));
  assert.equal(vq.window_open_until, iso(t + 7000 + DAY));
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(from(q), 'late', t - 60_000)])).status, 200);
  await until(() => events.delivered(path).size >= 10);
  await receiptsSettled(s);
  assert.equal((await view(q)).window_open_until, iso(t + 7000 + DAY));
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(from(q), 'next day', t + DAY)])).status, 200);
  await eventually(async () => (await view(q)).window_open_until === iso(t + 2 * DAY));
  const vn = await view(n);
  assert.equal(vn.last_inbound_at, null);
  assert.equal(vn.window_open_until, null);

  // Erasure removes the location, media and reaction too (the stored inbound rows and events).
  await s.admin('DELETE', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(q)}`);
  const db = s.service.deps.database.db;
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inbound_messages
    WHERE company_id = ${c.companyId} AND (media IS NOT NULL OR location IS NOT NULL) AND provider_message_id IN (${image.id}, ${doc.id}, ${place.id})`.execute(db);
  assert.equal(Number(rows[0].n), 0);
  const { rows: ev } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events
    WHERE company_id = ${c.companyId} AND (payload::jsonb -> 'data' ? 'location' OR payload::jsonb -> 'data' ? 'media')`.execute(db);
  assert.equal(Number(ev[0].n), 0);
});

test('inbound content Meta sends oddly is kept as far as it is valid; nothing refused for it', async () => {
  const c = await wabaCompany(s, graph, { wabaId: randomWabaId() });
  const path = `/odd-${c.companyId}`;
  await addEndpoint(s, events, c.companyId, path, ['message.received']);
  const p = `+49156${Math.floor(Math.random() * 90_000) + 10_000}009`;
  const t = Date.parse('2026-03-03T08:00:00Z');
  const base = (at: number) => ({ from: p.slice(1), id: newWamid(), timestamp: unixSeconds(at) });
  const odd: WaMessage[] = [
    { ...base(t), type: 'location', location: { latitude: 'north', longitude: 13 } },
    { ...base(t + 1), type: 'location', location: { latitude: 91, longitude: 13 } },
    { ...base(t + 2), type: 'image', image: { mime_type: 'image/png' } },
    { ...base(t + 3), type: 'reaction', reaction: { emoji: '❤️' } },
    { ...base(t + 4), type: 'text', text: { body: 'ctx' }, context: { id: 42 } },
    { ...base(t + 5), type: 'sticker', sticker: { id: '3479537139650973', mime_type: 'image/webp', animated: false } },
  ];
  const res = await postInbound(s.url, c.appSecret, c.phoneNumberId, odd, { [p.slice(1)]: '' });
  assert.equal(res.status, 200, res.text);
  await until(() => events.delivered(path).size >= odd.length);
  const got = new Map([...events.delivered(path).values()].map((v) => [v[0].body.data.provider_message_id, v[0].body.data]));
  for (const m of odd.slice(0, 5)) {
    const d = got.get(m.id);
    assert.ok(!('location' in d) && !('media' in d) && !('reaction' in d) && !('reply_to' in d), JSON.stringify(d));
  }
  assert.deepEqual(got.get(odd[5].id).media, { id: '3479537139650973', mime_type: 'image/webp' });
  const contact = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`);
  assert.equal(contact.first_name, null, 'an empty profile name fills nothing');
});
