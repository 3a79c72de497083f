/**
 * 4.3 end to end over HTTP (docs/decisions.md#5-phone-numbers-and-digests, #6-contacts-personalisation-sending, docs/operator-api.md): an automation with 60 items
 * (duplicates, an invalid phone, per-contact media, a contact with `__proto__`/`constructor`
 * variables, an opted-out contact, outside delivery hours) reaches a local webhook receiver exactly as
 * rendered, signed, once per distinct valid contact; contacts are created and updated; the batch
 * status adds up.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { batchStatus, completed, messagesOf, phone, startPipelineServer } from './helpers.ts';

let s: TestServer;
let receiver: WebhookReceiver;
const clock = new FakeClock(Date.parse('2026-01-05T02:00:00Z')); // 03:00 in Berlin: outside 09:00-21:00

before(async () => {
  s = await startPipelineServer('automation', { clock });
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await receiver.close();
});

const TEMPLATE = {
  header: { type: 'image', url: 'https://cdn.example/default.png' },
  body: 'Hi {{ first_name }} {{ last_name }}, order {{ order_id }} ({{ variables.tier }}) for {{ phone }}.{{ constructor }}',
  buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }, { type: 'url', text: 'Help', url: 'https://shop.example/help' }],
};

test('60 items: the right messages reach the webhook, signed and rendered; contacts written; counts add up', async () => {
  const run = Math.floor(Math.random() * 1000);
  const { companyId, key } = await s.company({ delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' } });
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  // An existing, opted-out contact: 4.3 replaces its given first name, keeps its last name, merges variables.
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
    contacts: [{ phone: phone(run, 0), first_name: 'Old', last_name: 'Name', variables: { tier: 'gold', order_id: 'OLD' }, opted_out: true }],
  });
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'shipped', type: 'api', active: true, template: TEMPLATE }, 201);

  const contacts: any[] = [];
  for (let i = 0; i < 60; i++) contacts.push({ phone: phone(run, i), first_name: `F${i}`, last_name: `L${i}`, variables: { order_id: `A-${i}` } });
  contacts[0] = { phone: phone(run, 0), first_name: 'Ada', variables: { order_id: 'A-0' } };
  // Item 5 repeats item 2's number in national format: sent once, names replaced, variables merged.
  contacts[5] = { phone: '0' + phone(run, 2).slice(3), first_name: 'Second', variables: { tier: 'silver' } };
  contacts[7] = { phone: 'not-a-phone', first_name: 'Nobody' };
  for (const i of [3, 13, 23, 33, 43]) contacts[i].image_url = `https://cdn.example/c${i}.png`;
  contacts[9].video_url = 'https://cdn.example/v9.mp4'; // the header is an image: the request's image applies
  contacts[11].variables = JSON.parse('{"order_id":"A-11","__proto__":{"polluted":"yes"},"constructor":"ctor"}');
  const body = {
    automation_id: automation.automation_id,
    contacts,
    image_url: 'https://cdn.example/request.png',
    url: 'https://shop.example/track/ORDER',
    url2: 'https://help.example/faq',
  };
  const res = await s.api('/api/automations/send', { key, raw: JSON.stringify(body) });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.status, 'accepted');
  assert.equal(res.json.contacts, 49); // 50 processed items, one duplicate

  const batch = await completed(s, res.json.batch_id);
  assert.deepEqual(batch.counts, { total: 49, sent: 48, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
  assert.equal(batch.ignored_contacts, 10);
  assert.ok(batch.completed_at);
  assert.equal(batch.completed_at, new Date(clock.now()).toISOString());

  // What each distinct valid contact must have received.
  const expected = new Map<string, any>();
  for (let i = 0; i < 50; i++) {
    if (i === 5 || i === 7) continue;
    const to = phone(run, i);
    let text = `Hi F${i} L${i}, order A-${i} () for ${to}.`;
    if (i === 0) text = `Hi Ada Name, order A-0 (gold) for ${to}.`;
    if (i === 2) text = `Hi Second L2, order A-2 (silver) for ${to}.`;
    if (i === 11) text += 'ctor';
    const image = [3, 13, 23, 33, 43].includes(i) ? `https://cdn.example/c${i}.png` : 'https://cdn.example/request.png';
    expected.set(to, {
      batch_id: res.json.batch_id, company_id: companyId, kind: 'automation', source_id: automation.automation_id, to,
      header: { type: 'image', url: image }, body: text,
      buttons: [{ text: 'Track', url: 'https://shop.example/track/ORDER' }, { text: 'Help', url: 'https://help.example/faq' }],
    });
  }

  const ours = (id: string) => receiver.seen.find((x) => x.id === id)?.body?.batch_id === res.json.batch_id;
  const delivered = new Map([...receiver.delivered()].filter(([id]) => ours(id)));
  assert.equal(delivered.size, 48);
  assert.equal(receiver.seen.filter((x) => ours(x.id)).length, 48); // no retries, nothing twice
  const byTo = new Map<string, any>();
  for (const [id, list] of delivered) {
    assert.equal(list.length, 1);
    const seen = list[0];
    assert.equal(seen.signatureError, null, 'signature verifies');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(seen.body.message_id, id, 'webhook-id is the message id');
    const { message_id, ...rest } = seen.body;
    assert.deepEqual(rest, expected.get(seen.body.to));
    byTo.set(seen.body.to, seen.body);
  }
  assert.deepEqual([...byTo.keys()].sort(), [...expected.keys()].sort());

  const messages = await messagesOf(s, res.json.batch_id);
  assert.equal(messages.length, 49);
  const invalid = messages.filter((m) => m.status === 'skipped');
  assert.deepEqual(invalid.map((m) => [m.phone, m.reason, m.attempts]), [['not-a-phone', 'invalid_phone', 0]]);
  for (const m of messages.filter((x) => x.status === 'sent')) {
    assert.equal(m.attempts, 1);
    assert.deepEqual(m.rendered, byTo.get(m.phone), 'the webhook body is the stored rendered message');
    assert.ok(m.sent_at);
  }
  assert.equal(messages[0].phone, phone(run, 0), 'messages in batch order');

  // Contacts: created and updated as 4.3 says; items 51-60 were not processed.
  const db = s.service.deps.database.db;
  const rows = await db.selectFrom('contacts').select(['phone', 'first_name', 'last_name', 'variables', 'opted_out'])
    .where('company_id', '=', companyId).orderBy('phone').execute();
  assert.equal(rows.length, 48);
  const first = rows.find((r) => r.phone === phone(run, 0))!;
  assert.deepEqual([first.first_name, first.last_name, first.variables, first.opted_out], ['Ada', 'Name', { tier: 'gold', order_id: 'A-0' }, true]);
  const eleven = rows.find((r) => r.phone === phone(run, 11))!;
  assert.equal(Object.getOwnPropertyDescriptor(eleven.variables, '__proto__')?.value?.polluted, 'yes', '__proto__ stored as a plain key');
  assert.equal(({} as any).polluted, undefined, 'no prototype polluted');
  assert.equal(rows.some((r) => r.phone === phone(run, 55)), false);
  assert.equal((await batchStatus(s, res.json.batch_id)).status, 'completed');
});
