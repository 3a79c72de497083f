/**
 * The console's parts of frequency caps and the consent ledger (docs/audience.md), over HTTP with
 * signed-in users:
 *
 * - Settings › Messaging: owners see and change the frequency cap (errors beside their fields, input
 *   kept, nothing changed; 303 and a notice when saved; "No cap" clears it); other roles get 403 and
 *   no navigation entry;
 * - a campaign's page turns `ignore_frequency_cap` on and off;
 * - the send review counts recipients at the cap, and the confirmed send skips exactly those
 *   (`frequency_cap`); a segment review counts them too;
 * - erasing an opted-out contact: the confirmation page says the number stays opted out, the notice
 *   too; the contact page's consent history shows the ledger (also in test/admin/consent-ledger.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, confirmFrom, csrfToken, freshEmail, newCompany, newUser, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(() => s.close());

let seq = 10_000_000 + Math.floor(Math.random() * 80_000_000);
const phone = () => `+49157${String(seq++)}`;
const count = (text: string, key: string) => Number(new RegExp(`data-count="${key}">(\\d+)`).exec(text)?.[1]);
const PAGE = '/console/settings/messaging';

async function completed(batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, 45_000);
}

test('Settings › Messaging: owners set, change and clear the cap; bad input beside its field; other roles 403', async () => {
  const companyId = await newCompany(s);
  const owner = await signedInClient(s, companyId, 'owner');
  const page = await owner.get(PAGE);
  assert.equal(page.status, 200);
  assert.match(page.text, /data-cap>No cap/);
  assert.match(page.text, /href="\/console\/settings\/messaging"[^>]*aria-current="page"/);

  const bad = await owner.submit(PAGE, PAGE, { cap: 'on', messages: '0', amount: '7', unit: 'd' });
  assert.equal(bad.status, 422);
  assert.match(bad.text, /id="messages-error"[^>]*>Enter a whole number from 1 to 1000/);
  assert.match(bad.text, /id="messages"[^>]*value="0"/);
  const long = await owner.submit(PAGE, PAGE, { cap: 'on', messages: '3', amount: '400', unit: 'd' });
  assert.equal(long.status, 422);
  assert.match(long.text, /id="amount-error"[^>]*>The window can be at most 366 days/);
  const unit = await owner.submit(PAGE, PAGE, { cap: 'on', messages: '3', amount: '7', unit: 'w' });
  assert.equal(unit.status, 422);
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}`)).frequency_cap, null, 'nothing changed');

  const saved = await owner.submit(PAGE, PAGE, { cap: 'on', messages: '3', amount: '7', unit: 'd' });
  assert.equal(saved.status, 303);
  assert.equal(saved.location, `${PAGE}?done=saved`);
  assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}`)).frequency_cap, { messages: 3, per: '7d' });
  const shown = await owner.get(saved.location!);
  assert.match(shown.text, /Frequency cap saved/);
  assert.match(shown.text, /data-cap>At most 3 campaign messages per contact within 7 days\./);
  assert.match(shown.text, /id="amount"[^>]*value="7"/);
  const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
  assert.ok(audit.entries.some((e: any) => e.action === 'company.update' && /^console:/.test(e.actor) && e.details.frequency_cap?.per === '7d'));

  assert.equal((await owner.submit(PAGE, PAGE, { cap: 'none', messages: '', amount: '', unit: '' })).status, 303);
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}`)).frequency_cap, null);

  for (const role of ['marketer', 'developer'] as const) {
    const cl = await signedInClient(s, companyId, role);
    assert.equal((await cl.get(PAGE)).status, 403);
    assert.doesNotMatch((await cl.get('/console/overview')).text, /href="\/console\/settings\/messaging"/);
  }
});

test('the send review counts recipients at the cap; the confirmed send skips exactly those; a segment review too', async () => {
  const companyId = await newCompany(s, { frequency_cap: { messages: 1, per: '7d' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Capped', template: { body: 'Offer' } }, 201);
  const [a, b, c] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: a }, { phone: b }, { phone: c, opted_out: true }] });
  await completed((await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: [a] }, 202)).batch_id);

  const cl = await signedInClient(s, companyId, 'marketer');
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const form = { audience: 'numbers', segment_id: '', numbers: `${a}\n${b}\n${c}\nnonsense`, when: 'now', send_at: '' };
  const review = await cl.submit(page, page, form);
  assert.equal(review.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'skipped_frequency_cap', 'skipped_invalid'].map((k) => count(review.text, k)), [1, 1, 1, 1]);
  assert.match(review.text, /Skipped: frequency cap/);
  const confirm = await confirmFrom(cl, review, `${page}/confirm`, form);
  assert.equal(confirm.status, 303);
  const batchId = /^\/console\/sends\/([0-9a-f-]{36})$/.exec(confirm.location!)![1];
  await completed(batchId);
  const msgs = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages;
  const byPhone = new Map(msgs.map((m: any) => [m.phone, m.status === 'skipped' ? m.reason : m.status]));
  assert.deepEqual([byPhone.get(a), byPhone.get(b), byPhone.get(c)], ['frequency_cap', 'sent', 'opted_out']);
  assert.match((await cl.get(`/console/sends/${batchId}`)).text, /frequency_cap|frequency cap/i);

  // A segment's review: a and b are now at the cap, c opted out.
  const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, {}, 201)).api_key;
  await s.admin('PATCH', `/admin/companies/${companyId}`, { subscription_active: true });
  const seg = (await s.api('/api/segments/create', { key, body: { name: 'All' } })).json.segment_id;
  assert.equal((await s.api(`/api/segments/${seg}/contacts`, { key, body: { contacts: [a, b, c], mode: 'add' } })).status, 200);
  const segReview = await cl.submit(page, page, { audience: 'segment', segment_id: String(seg), numbers: '', when: 'now', send_at: '' });
  assert.equal(segReview.status, 200);
  assert.deepEqual(['send', 'skipped_opted_out', 'skipped_frequency_cap'].map((k) => count(segReview.text, k)), [0, 1, 2]);
});

test('a campaign page turns ignoring the frequency cap on and off (owners and marketers)', async () => {
  const companyId = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Loud', template: { body: 'Offer' } }, 201);
  const cl = await signedInClient(s, companyId, 'marketer');
  const page = `/console/campaigns/${camp.campaign_id}`;
  assert.match((await cl.get(page)).text, /data-frequency-cap="applies"/);
  const on = await cl.submit(page, `${page}/frequency-cap`, { ignore: 'true' });
  assert.equal(on.status, 303);
  assert.equal(on.location, `${page}?done=cap_ignored`);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).ignore_frequency_cap, true);
  assert.match((await cl.get(on.location!)).text, /data-frequency-cap="ignored"[\s\S]*Apply the frequency cap/);
  assert.equal((await cl.submit(page, `${page}/frequency-cap`, { ignore: 'false' })).status, 303);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).ignore_frequency_cap, false);
  const dev = await signedInClient(s, companyId, 'developer');
  assert.doesNotMatch((await dev.get(page)).text, /Ignore the frequency cap/);
});

test('erasing an opted-out contact says the number stays opted out; the consent history is on the contact page', async () => {
  const companyId = await newCompany(s);
  const p = phone();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, opted_out: true }] });
  const email = await newUser(s, companyId, freshEmail('owner'), 'owner');
  const cl = new ConsoleClient(s.url);
  await cl.signIn(email);
  const contactPage = await cl.get(`/console/contacts/${encodeURIComponent(p)}`);
  assert.match(contactPage.text, /<h2 id="consent-h">Consent history<\/h2>/);
  assert.match(contactPage.text.slice(contactPage.text.indexOf('data-consent')), /Opted out[\s\S]*operator[\s\S]*marketing[\s\S]*operation: import_contacts/);
  const erasePage = await cl.get(`/console/contacts/${encodeURIComponent(p)}/erase`);
  assert.match(erasePage.text, /the number stays opted out of campaigns/);
  const erased = await cl.request('POST', `/console/contacts/${encodeURIComponent(p)}/erase`, { _csrf: csrfToken(erasePage.text), confirm: 'yes' });
  assert.equal(erased.status, 303);
  assert.equal(erased.location, '/console/contacts?done=erased_suppressed');
  assert.match((await cl.get(erased.location!)).text, /The number stays opted out of campaigns if it comes back/);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p }] });
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(p)}`)).opted_out, true);
});
