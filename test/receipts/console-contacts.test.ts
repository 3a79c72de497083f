/**
 * Console Contacts pages: /console/contacts lists who wrote recently and searches by
 * number; /console/contacts/{phone or id} shows opt-out state with source and time, inbound messages
 * (escaped) and messages sent; another company's contact is 404.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postInbound, startFakeGraph, waText, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { insertBatch, signedInClient } from '../console/helpers.ts';
import { whatsappCompany } from './helpers.ts';

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

test('contacts list, search, contact page with opt-out, inbound and sent; foreign contact 404', async () => {
  const c = await whatsappCompany(s, graph);
  const r = String(Math.floor(Math.random() * 90_000) + 10_000);
  const p = `+49152${r}601`;
  const q = `+49152${r}602`;
  const t = Date.parse('2026-03-05T10:00:00Z');
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), '<script>alert(1)</script>', t), waText(p.slice(1), 'stop', t + 1000)])).status, 200);
  await eventually(async () => (await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`).catch(() => undefined))?.opted_out === true);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: q, first_name: 'Quinn' }] });
  const batchId = await insertBatch(s, c.companyId, [{ phone: p, status: 'sent' }, { phone: q, status: 'skipped', reason: 'opted_out' }]);
  // The send's automation, written directly (a WhatsApp company's automation needs an approved template mapping).
  const automation = await s.service.deps.database.db.insertInto('automations')
    .values({ company_id: c.companyId, name: 'Order <shipped>', type: 'api', active: true, template: JSON.stringify({ body: 'Hi' }) })
    .returning('automation_id').executeTakeFirstOrThrow();
  await s.service.deps.database.db.updateTable('batches').set({ source_id: automation.automation_id }).where('batch_id', '=', batchId).execute();

  const console = await signedInClient(s, c.companyId);
  const list = await console.get('/console/contacts');
  assert.equal(list.status, 200);
  assert.ok(list.text.includes(`href="/console/contacts/${encodeURIComponent(p)}"`), 'the contact who wrote is listed');
  assert.match(list.text, /aria-current="page"[^>]*>Contacts|Contacts<\/a>/);

  const exact = await console.get(`/console/contacts?q=${encodeURIComponent('0' + p.slice(3))}`);
  assert.equal(exact.status, 303);
  assert.equal(exact.location, `/console/contacts/${encodeURIComponent(p)}`);
  const partial = await console.get(`/console/contacts?q=${r}60`);
  assert.equal(partial.status, 200);
  assert.ok(partial.text.includes(p) && partial.text.includes(q) && partial.text.includes('Quinn'));

  const page = await console.get(`/console/contacts/${encodeURIComponent(p)}`);
  assert.equal(page.status, 200);
  assert.match(page.text, /data-opted-out="true"/);
  assert.match(page.text, /data-opt-out-source>keyword</);
  assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !page.text.includes('<script>alert(1)'), 'inbound text escaped');
  assert.ok(page.text.indexOf('>stop<') < page.text.indexOf('&lt;script&gt;'), 'newest first');
  assert.match(page.text, /badge-sent/);
  assert.ok(page.text.includes(`<a href="/console/sends/${batchId}">Order &lt;shipped&gt;</a>`), 'the send is named by its automation (escaped)');
  const contactId = (await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(q)}`)).contact_id;
  const byId = await console.get(`/console/contacts/${contactId}`);
  assert.equal(byId.status, 200);
  assert.ok(byId.text.includes(q) && byId.text.includes('The contact opted out of campaigns'), 'the skip reason in words');

  // Another company's console sees none of it.
  const { companyId: otherId } = await s.company();
  const other = await signedInClient(s, otherId);
  assert.equal((await other.get(`/console/contacts/${encodeURIComponent(p)}`)).status, 404);
  assert.equal((await other.get(`/console/contacts/${contactId}`)).status, 404);
  assert.ok(!(await other.get('/console/contacts')).text.includes(p));
  assert.equal((await other.get(`/console/contacts?q=${encodeURIComponent(p)}`)).status, 200);
});
