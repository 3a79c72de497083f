/**
 * The console's automation and campaign lists with status and results, and archive / restore, over
 * HTTP with a signed-in user: a campaign's row shows its status (draft, then sent), its last send and
 * its results (messages, delivered %, read %, failed) after a send whose receipts mark one message
 * delivered, one read and one failed; the Archive button (a POST form with CSRF) hides it from the list
 * and shows it under the archived ones, its send pages and test send answer 404, and Restore brings it
 * back. Security: without the CSRF token nothing is archived, a read-only role gets no archive or
 * restore controls and its POST is refused, another company's ids are 404.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { csrfToken, newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(7000 + ++n).padStart(5, '0')}`;

/** The list row of source `id` (its <tr>). */
function row(text: string, kind: string, id: number): string {
  const m = new RegExp(`<tr data-${kind}-id="${id}">([\\s\\S]*?)</tr>`).exec(text);
  assert.ok(m, `no row for ${kind} ${id}`);
  return m[1];
}
const result = (rowText: string, name: string) => new RegExp(`data-result="${name}"[^>]*>([^<]*)<`).exec(rowText)?.[1];

test('a campaign list row shows status, last send and results; archive hides it, restore brings it back', async () => {
  const companyId = await newCompany(s);
  const cl = await signedInClient(s, companyId);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Autumn sale', template: { body: 'Autumn' } }, 201);
  let list = await cl.get('/console/campaigns');
  assert.equal(list.status, 200);
  let r = row(list.text, 'campaign', camp.campaign_id);
  assert.match(r, /data-status="draft"/);
  assert.match(r, />never</);
  assert.equal(result(r, 'delivered'), '—');

  const phones = [phone(), phone(), phone(), phone()];
  const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: phones }, 202);
  const db = s.service.deps.database.db;
  await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.batch_id}`)).status === 'completed');
  // The receipts' outcome, written as the receipt handlers write it (status and time).
  const set = (p: string, v: Record<string, unknown>) => db.updateTable('messages').set(v).where('batch_id', '=', sent.batch_id).where('phone', '=', p).execute();
  await set(phones[0], { status: 'delivered', delivered_at: new Date() });
  await set(phones[1], { status: 'read', delivered_at: new Date(), read_at: new Date() });
  await set(phones[2], { status: 'failed', failed_at: new Date(), error: 'rejected' });

  list = await cl.get('/console/campaigns');
  r = row(list.text, 'campaign', camp.campaign_id);
  assert.match(r, /data-status="sent"/);
  assert.match(r, /<time datetime="/);
  assert.equal(result(r, 'messages'), '4');
  assert.equal(result(r, 'delivered'), '66.7%', '2 of the 3 sent were delivered');
  assert.equal(result(r, 'read'), '33.3%');
  assert.equal(result(r, 'failed'), '1');

  // Archive through the page's form.
  const pagePath = `/console/campaigns/${camp.campaign_id}`;
  const page = await cl.get(pagePath);
  assert.match(page.text, /action="\/console\/campaigns\/\d+\/archive"/);
  const archived = await cl.submit(pagePath, `${pagePath}/archive`, {});
  assert.equal(archived.status, 303);
  assert.equal(archived.location, `${pagePath}?done=archived`);
  const after1 = await cl.get(archived.location!);
  assert.match(after1.text, /data-archived/);
  assert.match(after1.text, /Restore this campaign/);
  assert.doesNotMatch(after1.text, /Send this campaign/);
  assert.ok((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).archived_at);

  list = await cl.get('/console/campaigns');
  assert.doesNotMatch(list.text, new RegExp(`data-campaign-id="${camp.campaign_id}"`));
  assert.match(list.text, /href="\/console\/campaigns\?archived=true"/);
  const archivedList = await cl.get('/console/campaigns?archived=true');
  r = row(archivedList.text, 'campaign', camp.campaign_id);
  assert.match(r, /data-status="archived"/);
  assert.equal(result(r, 'messages'), '4', 'its results stay');
  assert.match(r, /action="\/console\/campaigns\/\d+\/restore"/);

  assert.equal((await cl.get(`${pagePath}/send`)).status, 404, 'an archived campaign cannot be sent');
  assert.equal((await cl.request('POST', `${pagePath}/send`, { _csrf: csrfToken(archivedList.text), audience: 'numbers', numbers: phone(), when: 'now', send_at: '' })).status, 404);
  assert.equal((await cl.request('POST', `${pagePath}/test-send`, { _csrf: csrfToken(archivedList.text), test_phone: phone() })).status, 404);

  const restored = await cl.submit('/console/campaigns?archived=true', `${pagePath}/restore`, {});
  assert.equal(restored.status, 303);
  assert.equal(restored.location, `${pagePath}?done=restored`);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).archived_at, null);
  list = await cl.get('/console/campaigns');
  assert.match(list.text, new RegExp(`data-campaign-id="${camp.campaign_id}"`));
  assert.equal((await cl.get(`${pagePath}/send`)).status, 200);
});

test('an automation list row shows active / inactive and its trigger results; archived it is hidden and not triggerable', async () => {
  const { companyId, key } = await s.company();
  const cl = await signedInClient(s, companyId);
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Welcome', type: 'api', active: true, template: { body: 'Welcome' } }, 201);
  const idle = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Idle', type: 'api', active: false, template: { body: 'Idle' } }, 201);
  const t = await s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: phone() }, { phone: phone() }] } });
  assert.equal(t.status, 200, t.text);
  await eventually(async () => result(row((await cl.get('/console/automations')).text, 'automation', a.automation_id), 'messages') === '2');
  const list = await cl.get('/console/automations');
  assert.match(row(list.text, 'automation', a.automation_id), /data-status="active"/);
  assert.match(row(list.text, 'automation', idle.automation_id), /data-status="inactive"/);
  assert.match(row(list.text, 'automation', idle.automation_id), />never</);

  const pagePath = `/console/automations/${a.automation_id}`;
  assert.equal((await cl.submit(pagePath, `${pagePath}/archive`, {})).status, 303);
  const refused = await s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: phone() }] } });
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.json, { detail: 'Automation is not active' });
  assert.doesNotMatch((await cl.get('/console/automations')).text, new RegExp(`data-automation-id="${a.automation_id}"`));
  assert.match((await cl.get('/console/automations?archived=true')).text, new RegExp(`data-automation-id="${a.automation_id}"`));
  assert.equal((await cl.submit(pagePath, `${pagePath}/restore`, {})).status, 303);
  const back = await s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: phone() }] } });
  assert.equal(back.status, 200, back.text);
});

test('security: archive needs the CSRF token and a role that may change campaigns; another company\'s id is 404', async () => {
  const companyId = await newCompany(s);
  const other = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Mine', template: { body: 'Hi' } }, 201);
  const theirs = await s.admin('POST', `/admin/companies/${other}/campaigns`, { name: 'Theirs', template: { body: 'Hi' } }, 201);
  const owner = await signedInClient(s, companyId);
  const pagePath = `/console/campaigns/${camp.campaign_id}`;

  const noToken = await owner.request('POST', `${pagePath}/archive`, {});
  assert.equal(noToken.status, 403);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).archived_at, null, 'nothing archived without the token');

  const page = await owner.get(pagePath);
  const foreign = await owner.request('POST', `/console/campaigns/${theirs.campaign_id}/archive`, { _csrf: csrfToken(page.text) });
  assert.equal(foreign.status, 404);
  assert.equal((await s.admin('GET', `/admin/campaigns/${theirs.campaign_id}`)).archived_at, null);
  assert.equal((await owner.request('POST', '/console/campaigns/abc/archive', { _csrf: csrfToken(page.text) })).status, 404);

  const developer = await signedInClient(s, companyId, 'developer');
  const readOnly = await developer.get(pagePath);
  assert.equal(readOnly.status, 200);
  assert.doesNotMatch(readOnly.text, /\/archive"/, 'no archive form for a read-only role');
  const forbidden = await developer.request('POST', `${pagePath}/archive`, { _csrf: csrfToken((await developer.get('/console/campaigns')).text) });
  assert.equal(forbidden.status, 403);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).archived_at, null);
});
