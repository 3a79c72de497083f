/**
 * 4.4 end to end over HTTP with an injectable clock (docs/decisions.md#6-contacts-personalisation-sending): missing contacts are created,
 * opted-out contacts are skipped, messages outside the company's delivery hours are held as `pending`
 * with `scheduled_for` at the next opening and sent once the clock passes it; a window that crosses
 * midnight sends at once when open; the batch status adds up at every step.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { batchStatus, completed, messagesOf, phone, startPipelineServer } from './helpers.ts';

let s: TestServer;
let receiver: WebhookReceiver;
const clock = new FakeClock(Date.parse('2026-01-05T02:00:00Z')); // 03:00 in Berlin

before(async () => {
  s = await startPipelineServer('campaign', { clock });
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await receiver.close();
});

async function campaignCompany(hours: { start: string; end: string; timezone: string }) {
  const { companyId, key } = await s.company({ delivery_hours: hours });
  await s.admin('PUT', `/admin/companies/${companyId}/connector`, { connected: true, provider: 'push' });
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'promo', template: { body: 'Hello {{ first_name }}!' } }, 201);
  return { companyId, key, campaignId: campaign.campaign_id as number };
}

function batchIdOf(message: string): string {
  const m = /\(batch ([0-9a-f-]{36})\)$/.exec(message);
  assert.ok(m, message);
  return m[1];
}

test('held outside delivery hours, opted-out skipped, sent when the clock passes the opening', async () => {
  const run = Math.floor(Math.random() * 1000);
  const { companyId, key, campaignId } = await campaignCompany({ start: '09:00', end: '21:00', timezone: 'Europe/Berlin' });
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
    contacts: [
      { phone: phone(run, 1), opted_out: true },
      { phone: phone(run, 2), first_name: 'Existing' },
      { phone: phone(run, 3), first_name: 'Gone', opted_out: true },
    ],
  });
  const contacts = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({ phone: phone(run, i) }));
  contacts.push({ phone: '0' + phone(run, 4).slice(3) }, { phone: 'garbage' });
  const res = await s.api('/api/connector/send', { key, body: { campaign_id: campaignId, contacts } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.status, 'accepted');
  const batchId = batchIdOf(res.json.message);
  assert.match(res.json.message, /^Campaign send queued for 9 contacts \(batch /);

  const held = await eventually(async () => {
    const b = await batchStatus(s, batchId);
    return b.status === 'processing' ? b : undefined;
  }, 45_000);
  assert.deepEqual(held.counts, { total: 9, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 3, pending: 6 });
  const opening = '2026-01-05T08:00:00.000Z'; // 09:00 in Berlin (CET)
  const before = await messagesOf(s, batchId);
  assert.deepEqual(before.map((m) => [m.phone, m.status, m.reason ?? null, m.scheduled_for ?? null]), [
    [phone(run, 0), 'pending', null, opening],
    [phone(run, 1), 'skipped', 'opted_out', null],
    [phone(run, 2), 'pending', null, opening],
    [phone(run, 3), 'skipped', 'opted_out', null],
    [phone(run, 4), 'pending', null, opening],
    [phone(run, 5), 'pending', null, opening],
    [phone(run, 6), 'pending', null, opening],
    [phone(run, 7), 'pending', null, opening],
    ['garbage', 'skipped', 'invalid_phone', null],
  ]);
  // Missing contacts were created (phone only); opted-out ones are untouched.
  const db = s.service.deps.database.db;
  const stored = await db.selectFrom('contacts').select(['phone', 'first_name', 'opted_out']).where('company_id', '=', companyId).orderBy('phone').execute();
  assert.deepEqual(stored.map((c) => [c.phone, c.first_name, c.opted_out]), [
    [phone(run, 0), null, false], [phone(run, 1), null, true], [phone(run, 2), 'Existing', false], [phone(run, 3), 'Gone', true],
    [phone(run, 4), null, false], [phone(run, 5), null, false], [phone(run, 6), null, false], [phone(run, 7), null, false],
  ]);

  // Several sweeps later, still held: nothing reached the receiver.
  clock.set(Date.parse('2026-01-05T07:59:59Z'));
  for (let i = 0; i < 3; i++) await s.service.workers!.sweepNow();
  // A sweep that released them would have cleared held_until in its own transaction.
  const stillHeld = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('batch_id', '=', batchId).where('held_until', 'is not', null).executeTakeFirstOrThrow();
  assert.equal(Number(stillHeld.n), 6, 'still held after the sweeps');
  assert.equal(receiver.seen.filter((x) => x.body?.batch_id === batchId).length, 0);
  assert.equal((await batchStatus(s, batchId)).counts.pending, 6);

  clock.set(Date.parse(opening));
  const done = await completed(s, batchId);
  assert.deepEqual(done.counts, { total: 9, sent: 6, delivered: 0, read: 0, failed: 0, skipped: 3, pending: 0 });
  assert.equal(done.completed_at, opening);
  const got = receiver.seen.filter((x) => x.body?.batch_id === batchId);
  assert.equal(got.length, 6);
  assert.ok(got.every((x) => x.signatureError === null && x.answered === 200));
  assert.deepEqual(got.map((x) => [x.body.to, x.body.body]).sort(), [0, 2, 4, 5, 6, 7].map((i) => [phone(run, i), i === 2 ? 'Hello Existing!' : 'Hello !']).sort());
  for (const m of (await messagesOf(s, batchId)).filter((x) => x.status === 'sent')) {
    assert.equal(m.scheduled_for, opening);
    assert.equal(m.sent_at, opening);
    assert.equal(m.attempts, 1);
  }
});

test('a window that crosses midnight: open at 23:30 local, sent at once', async () => {
  const run = Math.floor(Math.random() * 1000);
  clock.set(Date.parse('2026-01-05T22:30:00Z')); // 23:30 in Berlin
  const { key, campaignId } = await campaignCompany({ start: '22:00', end: '06:00', timezone: 'Europe/Berlin' });
  const res = await s.api('/api/connector/send', { key, body: { campaign_id: campaignId, contacts: [{ phone: phone(run, 1) }, { phone: phone(run, 2) }] } });
  assert.equal(res.status, 200, res.text);
  const batchId = batchIdOf(res.json.message);
  const done = await completed(s, batchId);
  assert.deepEqual(done.counts, { total: 2, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  const messages = await messagesOf(s, batchId);
  assert.ok(messages.every((m) => m.scheduled_for === undefined && m.sent_at === '2026-01-05T22:30:00.000Z'));
});

test('closed at 06:30 local in the same window: held until 22:00', async () => {
  const run = Math.floor(Math.random() * 1000);
  clock.set(Date.parse('2026-01-06T05:30:00Z')); // 06:30 in Berlin
  const { key, campaignId } = await campaignCompany({ start: '22:00', end: '06:00', timezone: 'Europe/Berlin' });
  const res = await s.api('/api/connector/send', { key, body: { campaign_id: campaignId, contacts: [{ phone: phone(run, 1) }] } });
  const batchId = batchIdOf(res.json.message);
  const m = await eventually(async () => (await messagesOf(s, batchId))[0], 45_000);
  assert.equal(m.status, 'pending');
  assert.equal(m.scheduled_for, '2026-01-06T21:00:00.000Z');
  clock.set(Date.parse('2026-01-06T21:00:00Z'));
  assert.equal((await completed(s, batchId)).counts.sent, 1);
});
