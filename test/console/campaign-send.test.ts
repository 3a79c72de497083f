/**
 * Campaign sends from the console, over HTTP with a signed-in user: a segment with an
 * opted-out contact (the review shows the counts before confirming; the result skips it as opted_out),
 * a schedule in the company's time zone held until its time and then cancelled (FakeClock; messages end
 * skipped / cancelled), a schedule in the past refused beside its field, and another company's campaign,
 * segment and batch ids answering 404.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { confirmFrom, newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z')); // 12:00 in Berlin (CEST)
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(5000 + ++n).padStart(5, '0')}`;
const count = (text: string, name: string) => Number(new RegExp(`data-count="${name}">(\\d+)`).exec(text)?.[1]);

async function segmentWith(companyId: number, phones: string[]): Promise<number> {
  const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'k' }, 201)).api_key as string;
  const seg = await s.api('/api/segments/create', { key, body: { name: `seg-${++n}` } });
  assert.equal(seg.status, 200, seg.text);
  const added = await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key, body: { contacts: phones, mode: 'add' } });
  assert.equal(added.status, 200, added.text);
  return seg.json.segment_id;
}

test('send to a segment: counts shown before confirming, the opted-out contact ends skipped opted_out', async () => {
  const companyId = await newCompany(s);
  const [a, b, c] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: a }, { phone: b, opted_out: true }, { phone: c }] });
  const segmentId = await segmentWith(companyId, [a, b, c]);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring', template: { body: 'Spring sale' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const formPage = await cl.get(page);
  assert.equal(formPage.status, 200);
  assert.match(formPage.text, new RegExp(`<option value="${segmentId}">seg-\\d+ \\(3 members\\)`));

  const review = await cl.submit(page, page, { audience: 'segment', segment_id: String(segmentId), numbers: '', when: 'now', send_at: '' });
  assert.equal(review.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'skipped_invalid', 'held_for_delivery_hours'].map((k) => count(review.text, k)), [2, 1, 0, 0]);
  const db = s.service.deps.database.db;
  const batchesOf = async () => (await db.selectFrom('batches').select('batch_id').where('company_id', '=', companyId).execute()).length;
  assert.equal(await batchesOf(), 0, 'review writes nothing');

  const confirm = await confirmFrom(cl, review, `${page}/confirm`, { audience: 'segment', segment_id: String(segmentId), numbers: '', when: 'now', send_at: '' });
  assert.equal(confirm.status, 303);
  const batchId = /^\/console\/sends\/([0-9a-f-]{36})$/.exec(confirm.location!)![1];
  const done = await eventually(async () => {
    const bt = await s.admin('GET', `/admin/batches/${batchId}`);
    return bt.status === 'completed' ? bt : undefined;
  });
  assert.deepEqual(done.counts, { total: 3, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
  const msgs = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages;
  assert.deepEqual(msgs.filter((m: any) => m.status === 'skipped').map((m: any) => [m.phone, m.reason]), [[b, 'opted_out']]);
  assert.equal((await cl.get(confirm.location!)).status, 200);
});

test('pasted numbers scheduled in the company time zone: held, then cancelled; a past time is refused', async () => {
  const companyId = await newCompany(s, { delivery_hours: { start: '08:00', end: '22:00', timezone: 'Europe/Berlin' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Later', template: { body: 'Later' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const spaced = phone();
  const numbers = `${spaced.slice(0, 6)} ${spaced.slice(6)}\n${phone()}, not-a-number`; // a number with a space stays one number

  const past = await cl.submit(page, page, { audience: 'numbers', segment_id: '', numbers, when: 'later', send_at: '2026-06-01T11:59' });
  assert.equal(past.status, 422);
  assert.match(past.text, /id="send_at-error"[^>]*>That time has passed/);
  assert.match(past.text, /value="2026-06-01T11:59"/);
  assert.ok(past.text.includes('not-a-number</textarea>'), 'input kept');

  const form = { audience: 'numbers', segment_id: '', numbers, when: 'later', send_at: '2026-06-01T14:30' }; // 12:30 UTC
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'skipped_invalid', 'held_for_delivery_hours'].map((k) => count(review.text, k)), [2, 0, 1, 0]);
  assert.match(review.text, /at 1 Jun 2026, 14:30 Europe\/Berlin/);
  assert.doesNotMatch(review.text, /data-time-change/, 'an ordinary time needs no daylight-saving note');
  const confirm = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(confirm.status, 303);
  const batchId = /^\/console\/sends\/([0-9a-f-]{36})$/.exec(confirm.location!)![1];
  const msgs = await eventually(async () => {
    const ms = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages;
    return ms.length === 3 ? ms : undefined;
  });
  assert.deepEqual(msgs.map((m: any) => [m.status, m.scheduled_for ?? null]), [['pending', '2026-06-01T12:30:00.000Z'], ['pending', '2026-06-01T12:30:00.000Z'], ['skipped', null]]);
  clock.set(Date.parse('2026-06-01T12:29:00Z'));
  await s.service.workers?.sweepNow();
  assert.equal((await s.admin('GET', `/admin/batches/${batchId}`)).counts.pending, 2, 'held until its time');

  const waiting = await cl.get(`/console/sends/${batchId}`);
  assert.ok(waiting.text.includes(`href="/console/sends/${batchId}/cancel"`), 'the send page links to cancel');
  // Named by its campaign and time, "scheduled" (not "processing"), times in the company's zone, named.
  assert.match(waiting.text, /<h1[^>]*>Later — send scheduled for 1 Jun 2026, 14:30<\/h1>/);
  assert.match(waiting.text, /data-send-status="scheduled"><span class="badge badge-scheduled" title="[^"]+">scheduled</);
  assert.match(waiting.text, /data-scheduled-for><time datetime="2026-06-01T12:30:00.000Z"><span>1 Jun 2026, 14:30:00<\/span> <span class="zone">Europe\/Berlin<\/span>/);
  assert.doesNotMatch(waiting.text, /processing|UTC</);
  const list = await cl.get('/console/sends');
  const row = list.text.slice(list.text.indexOf(`data-batch-id="${batchId}"`)).split('</tr>')[0];
  assert.match(row, /data-send-link>Later<\/a>/, 'the list names the campaign');
  assert.match(row, /badge-scheduled/);
  const cancelPage = await cl.get(`/console/sends/${batchId}/cancel`);
  assert.equal(cancelPage.status, 200);
  assert.match(cancelPage.text, /2 messages not yet handed to a provider/);
  const cancelled = await cl.submit(`/console/sends/${batchId}/cancel`, `/console/sends/${batchId}/cancel`, {});
  assert.equal(cancelled.status, 303);
  assert.equal(cancelled.location, `/console/sends/${batchId}`);
  clock.set(Date.parse('2026-06-01T13:00:00Z'));
  await s.service.workers?.sweepNow();
  const bt = await s.admin('GET', `/admin/batches/${batchId}`);
  assert.equal(bt.status, 'completed');
  assert.deepEqual(bt.counts, { total: 3, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 3, pending: 0 });
  assert.deepEqual((await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages.map((m: any) => m.reason), ['cancelled', 'cancelled', 'invalid_phone']);
  // A cancelled send reads "cancelled", not "completed", on its page and in the list.
  assert.match((await cl.get(`/console/sends/${batchId}`)).text, /data-send-status="cancelled"><span class="badge badge-cancelled"/);
  const after = (await cl.get('/console/sends')).text;
  assert.match(after.slice(after.indexOf(`data-batch-id="${batchId}"`)).split('</tr>')[0], /badge-cancelled/);
  clock.set(Date.parse('2026-06-01T10:00:00Z'));
});

test('a scheduled time on a daylight-saving change is explained on the review, not shifted silently', async () => {
  const companyId = await newCompany(s, { delivery_hours: { start: '00:00', end: '00:00', timezone: 'Europe/Berlin' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Clocks', template: { body: 'Hi' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const review = (send_at: string) => cl.submit(page, page, { audience: 'numbers', segment_id: '', numbers: phone(), when: 'later', send_at });

  // 28 Mar 2027: Berlin's clocks go from 02:00 to 03:00; 02:30 does not exist.
  const gap = await review('2027-03-28T02:30');
  assert.equal(gap.status, 200);
  assert.match(gap.text, /data-time-change="gap"/);
  assert.match(gap.text, /02:30 on 28 Mar 2027 does not exist in Europe\/Berlin[^<]*The send will go at 28 Mar 2027, 03:00 \(UTC\+02:00\)/);
  assert.match(gap.text, /at 28 Mar 2027, 03:00 Europe\/Berlin/, 'the review states the time it will use');

  // 31 Oct 2027: the clocks go back from 03:00 to 02:00; 02:30 happens twice.
  const overlap = await review('2027-10-31T02:30');
  assert.equal(overlap.status, 200);
  assert.match(overlap.text, /data-time-change="overlap"/);
  assert.match(overlap.text, /02:30 on 31 Oct 2027 happens twice in Europe\/Berlin[^<]*the first 02:30 \(UTC\+02:00\), not at the second \(UTC\+01:00\)/);
});

test("another company's campaign, segment and batch answer 404; an unknown segment is refused beside its field", async () => {
  const other = await newCompany(s);
  const theirCamp = await s.admin('POST', `/admin/companies/${other}/campaigns`, { name: 'theirs', template: { body: 'x' } }, 201);
  const theirSeg = await segmentWith(other, [phone()]);
  const theirBatch = (await s.admin('POST', `/admin/campaigns/${theirCamp.campaign_id}/sends`, { contacts: [phone()] }, 202)).batch_id;
  const mine = await newCompany(s);
  const myCamp = await s.admin('POST', `/admin/companies/${mine}/campaigns`, { name: 'mine', template: { body: 'x' } }, 201);
  const cl = await signedInClient(s, mine);
  assert.equal((await cl.get(`/console/campaigns/${theirCamp.campaign_id}/send`)).status, 404);
  assert.equal((await cl.get(`/console/sends/${theirBatch}/cancel`)).status, 404);
  const own = `/console/campaigns/${myCamp.campaign_id}/send`;
  assert.equal((await cl.submit(own, `/console/campaigns/${theirCamp.campaign_id}/send/confirm`, { audience: 'numbers', numbers: phone(), when: 'now' })).status, 404);
  assert.equal((await cl.submit(own, `/console/sends/${theirBatch}/cancel`, {})).status, 404);
  const seg = await cl.submit(own, `${own}/confirm`, { audience: 'segment', segment_id: String(theirSeg), numbers: '', when: 'now', send_at: '' });
  assert.equal(seg.status, 422);
  assert.match(seg.text, /id="segment_id-error"/);
  assert.equal((await s.service.deps.database.db.selectFrom('batches').select('batch_id').where('company_id', '=', mine).execute()).length, 0);
  const theirs = await s.admin('GET', `/admin/batches/${theirBatch}/messages`);
  assert.ok(theirs.messages.every((m: any) => m.reason !== 'cancelled'));
});
