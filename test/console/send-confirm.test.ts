/**
 * One batch per confirm of a console campaign send (src/domain/send-confirmations.ts): the same confirm
 * submitted twice (one after the other, or at once) answers with the first batch; a tampered token, a
 * token for other choices or another user's token answer a 400 error page and create nothing. A segment
 * send is accepted without its members, which batch-process resolves (its total then counts them).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { confirmFrom, newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
let n = 0;
const phone = () => `+49152${run}${String(7000 + ++n).padStart(5, '0')}`;

async function setUp(): Promise<{ companyId: number; page: string; batches: () => Promise<string[]> }> {
  const companyId = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Once', template: { body: 'Once only' } }, 201);
  const db = s.service.deps.database.db;
  const batches = async () => (await db.selectFrom('batches').select('batch_id').where('company_id', '=', companyId).execute()).map((b) => b.batch_id);
  return { companyId, page: `/console/campaigns/${camp.campaign_id}/send`, batches };
}

test('the same confirm twice (a reload, a double click) answers with the first batch', async () => {
  const { companyId, page, batches } = await setUp();
  const [a, b, c] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: a }, { phone: b, opted_out: true }, { phone: c }] });
  const db = s.service.deps.database.db;
  const contacts = await db.selectFrom('contacts').select('contact_id').where('company_id', '=', companyId).execute();
  const seg = await db.insertInto('segments').values({ company_id: companyId, name: 'All three' }).returning('segment_id').executeTakeFirstOrThrow();
  await db.insertInto('segment_members').values(contacts.map((x) => ({ segment_id: seg.segment_id, contact_id: x.contact_id }))).execute();
  const cl = await signedInClient(s, companyId);
  const form = { audience: 'segment', segment_id: String(seg.segment_id), numbers: '', when: 'now', send_at: '' };
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200);
  const first = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(first.status, 303);
  const again = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(again.status, 303);
  assert.equal(again.location, first.location);
  const ids = await batches();
  assert.equal(ids.length, 1);
  assert.equal(first.location, `/console/sends/${ids[0]}`);
  const done = await eventually(async () => {
    const bt = await s.admin('GET', `/admin/batches/${ids[0]}`);
    return bt.status === 'completed' ? bt : undefined;
  });
  assert.deepEqual(done.counts, { total: 3, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 }, 'members resolved by batch-process');

  const numbers = { audience: 'numbers', segment_id: '', numbers: `${phone()}\n${phone()}`, when: 'now', send_at: '' };
  const review2 = await cl.submit(page, page, numbers);
  const both = await Promise.all([1, 2, 3].map(() => confirmFrom(cl, review2, `${page}/confirm`, numbers)));
  assert.deepEqual(both.map((r) => r.status), [303, 303, 303]);
  assert.equal(new Set(both.map((r) => r.location)).size, 1, 'submits at once: one batch');
  assert.equal((await batches()).length, 2);
});

test('a tampered token, a token for other choices and another user\'s token answer 400 and create nothing', async () => {
  const { companyId, page, batches } = await setUp();
  const cl = await signedInClient(s, companyId);
  const form = { audience: 'numbers', segment_id: '', numbers: `${phone()}\n${phone()}`, when: 'now', send_at: '' };
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200);
  const token = /name="confirm_token" value="([^"]+)"/.exec(review.text)![1];
  const tampered = token.slice(0, 20) + (token[20] === 'A' ? 'B' : 'A') + token.slice(21);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(review.text)![1];
  const bad = await cl.request('POST', `${page}/confirm`, { _csrf: csrf, ...form, confirm_token: tampered });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /This confirmation is not valid/);
  const other = await confirmFrom(cl, review, `${page}/confirm`, { ...form, numbers: `${form.numbers}\n${phone()}` });
  assert.equal(other.status, 400);
  assert.match(other.text, /not the ones you reviewed/);
  const none = await cl.request('POST', `${page}/confirm`, { _csrf: csrf, ...form });
  assert.equal(none.status, 400, 'a confirm without a token');
  const colleague = await signedInClient(s, companyId);
  const theirs = await colleague.get(page);
  const stolen = await colleague.request('POST', `${page}/confirm`, { _csrf: /name="_csrf" value="([^"]+)"/.exec(theirs.text)![1], ...form, confirm_token: token });
  assert.equal(stolen.status, 400);
  assert.deepEqual(await batches(), [], 'nothing created');
  const good = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(good.status, 303, 'the untouched confirm still works');
  assert.equal((await batches()).length, 1);
});

test('a send to a dynamic segment: the review counts the contacts its filter matches, the fan-out sends to them', async () => {
  const { companyId, page, batches } = await setUp();
  const [a, b, c] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [
    { phone: a, variables: { city: 'Berlin' } }, { phone: b, variables: { city: 'Berlin' }, opted_out: true }, { phone: c, variables: { city: 'Paris' } }] });
  const seg = await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Berlin', filter: { attribute: 'city', op: 'eq', value: 'Berlin' } }, 201);
  const cl = await signedInClient(s, companyId);
  const form = { audience: 'segment', segment_id: String(seg.segment_id), numbers: '', when: 'now', send_at: '' };
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200);
  const confirmed = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(confirmed.status, 303, confirmed.text);
  const [id] = await batches();
  const done = await eventually(async () => {
    const bt = await s.admin('GET', `/admin/batches/${id}`);
    return bt.status === 'completed' ? bt : undefined;
  });
  assert.deepEqual(done.counts, { total: 2, sent: 1, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
  const msgs = (await s.admin('GET', `/admin/batches/${id}/messages`)).messages;
  assert.deepEqual(msgs.map((m: { phone: string }) => m.phone).sort(), [a, b].sort());
});
