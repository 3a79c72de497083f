/**
 * A campaign send's review page in the console, over HTTP with a signed-in user: it shows the message
 * rendered for the first recipient of the audience (a real member, with the contact's data, the same
 * bytes the pipeline then delivers to that number), and counts that add up to what was pasted (a
 * duplicate is "1 duplicate merged", also in the operator API's dry-run plan); a pasted number that is
 * no contact, for a template that reads first_name, is pointed out instead of silently rendering
 * "Hi , ..."; a segment's review shows its first member who is not opted out; after confirm the send's
 * page (with its progress) is where the confirm leads.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { confirmFrom, newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(8000 + ++n).padStart(5, '0')}`;
const count = (text: string, name: string) => Number(new RegExp(`data-count="${name}">([\\d,]+)`).exec(text)?.[1].replace(/,/g, ''));
const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const bubbleBody = (text: string) => unescape(/data-bubble-body>([\s\S]*?)<\/div>/.exec(text)?.[1] ?? '');

test('pasted numbers: the first recipient\'s message, counts that add up (a duplicate merged), an unknown number pointed out', async () => {
  const companyId = await newCompany(s);
  const [known, optedOut, unknown] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [
    { phone: known, first_name: 'Ada', variables: { city: 'Köln' } }, { phone: optedOut, first_name: 'Bo', opted_out: true },
  ] });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring', template: { body: 'Hi {{ first_name }}, spring in {{ city }}!' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  // 6 pasted: known twice (once in national format), opted out, unknown, one text that is no number.
  const numbers = [known, optedOut, unknown, `0${known.slice(3)}`, 'not-a-number', phone()].join('\n');
  const form = { audience: 'numbers', segment_id: '', numbers, when: 'now', send_at: '' };
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200, review.text.slice(0, 500));
  assert.match(review.text, /To 6 pasted numbers/);
  const counts = ['send', 'skipped_opted_out', 'skipped_frequency_cap', 'skipped_invalid', 'duplicates_merged'].map((k) => count(review.text, k));
  assert.deepEqual(counts, [3, 1, 0, 1, 1]);
  assert.equal(counts.reduce((a, b) => a + b), 6, 'the counts add up to the pasted numbers');
  assert.match(review.text, /given more than once: each is sent once/);

  // The sample: the first recipient (the known contact), rendered with its data.
  assert.match(review.text, new RegExp(`data-sample-phone="\\${known}"`));
  assert.equal(bubbleBody(review.text), 'Hi Ada, spring in Köln!');
  // Two recipients are no contacts: first_name and city render empty for them, and the page says so.
  const warnings = unescape(review.text);
  assert.match(warnings, new RegExp(`\\{\\{ first_name \\}\\} is empty for 2 recipients of 3 \\(e\\.g\\. \\+49`));
  assert.match(warnings, /\{\{ city \}\} is empty for 2 recipients of 3/);

  const dry = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: numbers.split('\n'), dry_run: true }, 200);
  assert.equal(dry.plan.duplicates_merged, 1);
  assert.equal(dry.plan.total + dry.plan.duplicates_merged, 6);

  // Confirm: the send's page (its progress), and the known number gets the bytes the review showed.
  const confirm = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(confirm.status, 303);
  const batchId = /^\/console\/sends\/([0-9a-f-]{36})$/.exec(confirm.location ?? '')?.[1];
  assert.ok(batchId, confirm.location ?? '');
  const sendPage = await cl.get(confirm.location!);
  assert.equal(sendPage.status, 200);
  await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed');
  const msgs = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages as { phone: string; rendered: { body: string } | null }[];
  assert.equal(msgs.find((m) => m.phone === known)?.rendered?.body, bubbleBody(review.text), 'review == delivered');
  assert.equal(msgs.find((m) => m.phone === unknown)?.rendered?.body, 'Hi , spring in !', 'what the warning announced');
});

test('a template that reads only names every recipient has: no missing-data warning; a segment shows its first member who is not opted out', async () => {
  const companyId = await newCompany(s);
  const { key } = { key: (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'k' }, 201)).api_key as string };
  const [out, first, second] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [
    { phone: out, first_name: 'Out', opted_out: true }, { phone: first, first_name: 'Grace' }, { phone: second, first_name: 'Linus' },
  ] });
  const seg = await s.api('/api/segments/create', { key, body: { name: 'All' } });
  assert.equal(seg.status, 200, seg.text);
  assert.equal((await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key, body: { contacts: [out, first, second], mode: 'add' } })).status, 200);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Names', template: { body: 'Hello {{ first_name }} ({{ phone }})' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const review = await cl.submit(page, page, { audience: 'segment', segment_id: String(seg.json.segment_id), numbers: '', when: 'now', send_at: '' });
  assert.equal(review.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'duplicates_merged'].map((k) => count(review.text, k)), [2, 1, 0]);
  assert.match(review.text, new RegExp(`data-sample-phone="\\${first}"`));
  assert.equal(bubbleBody(review.text), `Hello Grace (${first})`);
  assert.doesNotMatch(review.text, /lack data the message uses/);

  // A contact of the segment without a first name is pointed out.
  await s.admin('PATCH', `/admin/companies/${companyId}/contacts/${encodeURIComponent(second)}`, { first_name: null }, 200);
  const again = await cl.submit(page, page, { audience: 'segment', segment_id: String(seg.json.segment_id), numbers: '', when: 'now', send_at: '' });
  assert.match(unescape(again.text), new RegExp(`\\{\\{ first_name \\}\\} is empty for 1 recipient of 2 \\(e\\.g\\. \\${second}\\)`));
});

test('an audience whose every number is opted out: no sample message, nothing to confirm', async () => {
  const companyId = await newCompany(s);
  const out = phone();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: out, opted_out: true }] });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'None', template: { body: 'Hi {{ first_name }}' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const review = await cl.submit(page, page, { audience: 'numbers', segment_id: '', numbers: `${out}\n${out}`, when: 'now', send_at: '' });
  assert.equal(review.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'duplicates_merged'].map((k) => count(review.text, k)), [0, 1, 1]);
  assert.match(review.text, /Nobody in this audience will get it/);
  assert.doesNotMatch(review.text, /data-bubble-body/);
});
