/**
 * The editor's preview names the WhatsApp parameters that would be empty (docs/whatsapp.md "Empty
 * parameters"), over HTTP: the server's bubble of a saved template for sample data without a first
 * name lists `first_name` with the `default` filter that avoids it; "Preview changes" with a sample
 * first name, or the template with that filter, shows no such note; a template without a WhatsApp
 * mapping never does. editor-preview.js builds the same markup in the browser
 * (empty-parameter-preview.browser.test.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
let graph: FakeGraph;
before(async () => {
  s = await startTestServer({ role: 'api' });
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const unescape = (t: string) => t.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
/** The texts of the note's items (tags removed), or [] without a note. */
const emptyNotes = (page: string) => [...page.matchAll(/<li data-empty-parameter>([\s\S]*?)<\/li>/g)].map((m) => unescape(m[1]));

test('the bubble names the empty parameter and its variable, with the default filter that avoids it; gone with a sample name or the filter', async () => {
  const wa = await whatsappCompany(s, graph);
  const c = await signedInClient(s, wa.companyId);
  const camp = await s.admin('POST', `/admin/companies/${wa.companyId}/campaigns`, {
    name: 'Greeting', template: { body: 'Hi {{ first_name }}, your order is late', whatsapp: { name: 'order_update', language: 'en' } },
  }, 201);
  const page = await c.get(`/console/campaigns/${camp.campaign_id}`);
  assert.equal(page.status, 200);
  assert.match(page.text, /<dt>Body \{\{1\}\}<\/dt><dd class="empty">\(empty\)<\/dd>/);
  assert.match(page.text, /data-empty-parameters>\n<p><strong>Meta refuses an empty parameter: on a WhatsApp channel, a recipient like this one is skipped \(reason empty_parameter\)\.<\/strong><\/p>/);
  assert.deepEqual(emptyNotes(page.text), ['first_name is empty: the WhatsApp body parameter {{1}} ({{ first_name }}) would be empty. Give it a default: {{ first_name | default: "there" }}']);

  const form = { name: 'Greeting', header_type: 'none', header_text: '', header_url: '', body: 'Hi {{ first_name }}, your order is late', b1_text: '', b1_url: '', b2_text: '', b2_url: '', wa_template: 'order_update|en', intent: 'preview' };
  const named = await c.submit(`/console/campaigns/${camp.campaign_id}`, `/console/campaigns/${camp.campaign_id}`, { ...form, editor_preview_first_name: 'Kim' });
  assert.equal(named.status, 200, named.text.slice(0, 300));
  assert.match(named.text, /<dt>Body \{\{1\}\}<\/dt><dd>Kim<\/dd>/);
  assert.deepEqual(emptyNotes(named.text), [], 'a sample first name: nothing empty');
  assert.doesNotMatch(named.text, /data-empty-parameters/);
  const blank = await c.submit(`/console/campaigns/${camp.campaign_id}`, `/console/campaigns/${camp.campaign_id}`, { ...form, editor_preview_first_name: '   ' });
  assert.deepEqual(emptyNotes(blank.text).length, 1, 'white space only counts as empty');

  const filtered = await c.submit(`/console/campaigns/${camp.campaign_id}`, `/console/campaigns/${camp.campaign_id}`, { ...form, body: 'Hi {{ first_name | default: "there" }}, your order is late' });
  assert.match(filtered.text, /<dt>Body \{\{1\}\}<\/dt><dd>there<\/dd>/);
  assert.deepEqual(emptyNotes(filtered.text), [], 'the default filter avoids it');

  const plainCompany = await newCompany(s);
  const plain = await signedInClient(s, plainCompany);
  const noMapping = await s.admin('POST', `/admin/companies/${plainCompany}/campaigns`, { name: 'Plain', template: { body: 'Hi {{ first_name }}' } }, 201);
  assert.doesNotMatch((await plain.get(`/console/campaigns/${noMapping.campaign_id}`)).text, /data-empty-parameter/, 'no WhatsApp mapping: no note');
});
