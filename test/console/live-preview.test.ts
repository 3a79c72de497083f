/**
 * The editor's live preview and the template's warnings over HTTP (docs/console.md "Editor and live
 * preview"):
 * - the browser's copies of the server's modules (src/console/assets/shared/) are what
 *   `npm run gen:browser` makes of the current sources, and they are served as JavaScript with
 *   liquidjs's browser build (and nothing else of that package), under the console's CSP (no inline
 *   script on the editor page);
 * - the editor page carries the server's render of the saved template in the bubble, the "Preview
 *   changes" fallback renders unsaved changes for a sample first name and variables;
 * - `preview-contact.json` answers the data the pipeline renders with for a phone (scoped to the
 *   company, never cached; 422 for a non-number);
 * - a form submitted with CRLF line endings (what a textarea sends) is stored with LF;
 * - after a create or a save the page shows the unknown-variable warning the operator API answers,
 *   and the send review shows it too; a WhatsApp mapping whose template is no longer approved is
 *   shown on the editor and on the review.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { browserModules, OUT_DIR, REPO_ROOT } from '../../tools/browser-modules.ts';
import { startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { ConsoleClient, newCompany, signedInClient } from './helpers.ts';

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

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(8000 + ++n).padStart(5, '0')}`;

const form = (o: Record<string, string>) => ({
  name: 'Welcome', type: 'api', header_type: 'none', header_text: '', header_url: '', body: 'Hi', b1_text: '', b1_url: '', b2_text: '', b2_url: '',
  wa_name: '', wa_language: '', wa_body_parameters: '', wa_header_parameters: '', ...o,
});
const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const bubbleBody = (page: string) => unescape(/data-bubble-body>([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '(no bubble)');
const warnings = (page: string) => [...page.matchAll(/<li data-warning>([\s\S]*?)<\/li>/g)].map((m) => unescape(m[1]));

test('the browser copies of render.ts, templates.ts and template-form.ts are current (npm run gen:browser)', () => {
  const fresh = browserModules();
  const dir = path.join(REPO_ROOT, OUT_DIR);
  assert.deepEqual(fs.readdirSync(dir).sort(), [...fresh.keys()].sort(), `${OUT_DIR} holds exactly the generated copies`);
  for (const [name, text] of fresh) {
    assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), text, `${OUT_DIR}/${name} is out of date: run npm run gen:browser`);
  }
  assert.match(fresh.get('render.js')!, /from '\.\.\/liquid\/liquid\.browser\.mjs'/);
  for (const text of fresh.values()) assert.doesNotMatch(text, /from 'node:|from '\.\.?\/[^']*\.ts'/, 'no Node module, no TypeScript import');
});

test('the editor page loads its script as a module from this origin; the shared modules and liquidjs are served as JavaScript', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const page = await c.get('/console/automations/new');
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'(;|$)/, 'no inline script allowed');
  const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length >= 2);
  for (const [, attrs, body] of scripts) {
    assert.match(attrs, / src="\/console\/assets\//, 'every script is a file of this origin');
    assert.equal(body, '', 'no inline script');
  }
  assert.ok(scripts.some(([, attrs]) => /type="module" src="\/console\/assets\/editor-preview\.js"/.test(attrs)));
  for (const p of ['editor-preview.js', 'shared/render.js', 'shared/templates.js', 'shared/template-form.js', 'liquid/liquid.browser.mjs']) {
    const r = await c.get(`/console/assets/${p}`);
    assert.equal(r.status, 200, p);
    assert.match(r.headers.get('content-type') ?? '', /^(text|application)\/javascript/, p);
  }
  const liquid = /export \{([^}]*)\};?\s*$/.exec((await c.get('/console/assets/liquid/liquid.browser.mjs')).text)?.[1].split(/\s*,\s*/) ?? [];
  for (const name of ['Liquid', 'Output', 'analyzeSync']) assert.ok(liquid.includes(name), `liquidjs's browser build exports ${name}`);
  for (const p of ['liquid/liquid.node.js', 'liquid/index.d.ts', 'liquid/../package.json']) {
    assert.equal((await c.get(`/console/assets/${p}`)).status, 404, p);
  }
});

test('the bubble shows the saved template; "Preview changes" renders unsaved changes for sample data; bad sample JSON is refused beside its field', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const created = await c.submit('/console/campaigns/new', '/console/campaigns/new', form({ name: 'Bubble', header_type: 'text', header_text: 'Hey {{ first_name }}', body: 'Tab\there 🎉  ', b1_text: 'Shop', b1_url: 'https://e.com/s' }));
  assert.equal(created.status, 303, created.text.slice(0, 300));
  const page = await c.get(created.location!);
  assert.equal(bubbleBody(page.text), 'Tab\there 🎉  ');
  assert.match(page.text, /data-bubble-header>Hey <\/p>/);
  assert.match(page.text, /data-bubble-to>To \+447700900000 · sample data</);
  assert.match(page.text, /<span class="bubble-button">Shop<\/span> <small>https:\/\/e.com\/s<\/small>/);
  assert.match(page.text, /<textarea id="body" name="body"[^>]*>\nTab\there 🎉  <\/textarea>/, 'a newline after <textarea> keeps a leading newline of the body');

  const id = /campaigns\/(\d+)/.exec(created.location!)![1];
  const pv = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({
    name: 'Bubble', body: 'Hi {{ first_name }} from {{ city }}', intent: 'preview', editor_preview_first_name: 'Sam', editor_preview_variables: '{"city": "Köln"}',
  }));
  assert.equal(pv.status, 200);
  assert.equal(bubbleBody(pv.text), 'Hi Sam from Köln');
  assert.match(pv.text, /id="editor_preview_first_name"[^>]*value="Sam"/, 'the sample data is kept');
  const bad = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Bubble', body: 'x', intent: 'preview', editor_preview_variables: '[1]' }));
  assert.equal(bad.status, 422);
  assert.match(bad.text, /id="editor_preview_variables-error" class="error" data-variables-error>Enter a JSON object/);
  assert.equal((await s.admin('GET', `/admin/campaigns/${id}`)).template.body, 'Tab\there 🎉  ', 'nothing saved');

  const broken = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Bubble', body: 'Hi {{ first_name | shout }}' }));
  assert.equal(broken.status, 422);
  assert.match(broken.text, /data-bubble-error>Fix the template to see the message: Not a valid Liquid template: undefined filter: shout/);
});

test('preview-contact.json: the data the pipeline renders with for a phone, scoped to the company, never cached', async () => {
  const companyId = await newCompany(s, { default_country: 'DE' });
  const other = await newCompany(s);
  const [mine, theirs] = [phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: mine, first_name: 'Ada', last_name: 'L', variables: { city: 'Köln', n: 3 } }] });
  await s.admin('PUT', `/admin/companies/${other}/contacts`, { contacts: [{ phone: theirs, first_name: 'Not yours' }] });
  const c = await signedInClient(s, companyId, 'marketer');
  const found = await c.get(`/console/automations/preview-contact.json?phone=${encodeURIComponent('0' + mine.slice(3))}`);
  assert.equal(found.status, 200);
  assert.equal(found.headers.get('cache-control'), 'no-store');
  assert.match(found.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(JSON.parse(found.text), { contact_found: true, contact: { phone: mine, first_name: 'Ada', last_name: 'L', variables: { city: 'Köln', n: 3 } } });
  const foreign = await c.get(`/console/campaigns/preview-contact.json?phone=${encodeURIComponent(theirs)}`);
  assert.deepEqual(JSON.parse(foreign.text), { contact_found: false, contact: { phone: theirs, first_name: null, last_name: null, variables: null } });
  const bad = await c.get('/console/campaigns/preview-contact.json?phone=call%20me');
  assert.equal(bad.status, 422);
  assert.deepEqual(JSON.parse(bad.text), { error: 'Not a phone number.' });
  const developer = await signedInClient(s, companyId, 'developer');
  assert.equal((await developer.get(`/console/automations/preview-contact.json?phone=${encodeURIComponent(mine)}`)).status, 200, 'every role may read the editor, and so its preview');
  assert.equal((await new ConsoleClient(s.url).get(`/console/automations/preview-contact.json?phone=${encodeURIComponent(mine)}`)).status, 303, 'signed out: to sign-in');
});

test('CRLF from the form (what a textarea submits) is stored as LF; create and save show the unknown-variable warning, the send review too', async () => {
  const companyId = await newCompany(s);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(), first_name: 'Ada', variables: { city: 'Köln' } }] });
  const c = await signedInClient(s, companyId, 'marketer');
  const created = await c.submit('/console/campaigns/new', '/console/campaigns/new', form({ name: 'Lines', body: 'Hi {{ frist_name }}\r\nin {{ city }}\r\n\r\n\tbye  \r\n', header_type: 'text', header_text: 'Hello\r\nthere' }));
  assert.equal(created.status, 303, created.text.slice(0, 300));
  const id = Number(/campaigns\/(\d+)/.exec(created.location!)![1]);
  const db = s.service.deps.database.db;
  const raw = await db.selectFrom('campaigns').select('template').where('campaign_id', '=', id).executeTakeFirstOrThrow();
  const stored = raw.template as unknown as { body: string; header: { text: string } };
  assert.equal(stored.body, 'Hi {{ frist_name }}\nin {{ city }}\n\n\tbye  \n', 'the stored bytes have LF only');
  assert.equal(stored.header.text, 'Hello\nthere');

  const page = await c.get(created.location!);
  assert.match(page.text, /Created\./);
  assert.deepEqual(warnings(page.text), ['No contact of this company has the variable frist_name: it renders empty.']);
  const answer = await s.admin('PATCH', `/admin/campaigns/${id}`, { template: { body: 'Hi {{ frist_name }}' } });
  assert.deepEqual(answer.warnings, ['no contact of this company has the variable frist_name: it renders empty'], 'the operator API says the same');
  assert.deepEqual(warnings((await c.get(`/console/campaigns/${id}`)).text), [], 'a plain visit does not look the variables up');

  const saved = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Lines', body: '{{ first_name }} {{ city }} {{ shoe_size }}' }));
  assert.equal(saved.status, 303);
  assert.deepEqual(warnings((await c.get(saved.location!)).text), ['No contact of this company has the variable shoe_size: it renders empty.']);

  const review = await c.submit(`/console/campaigns/${id}/send`, `/console/campaigns/${id}/send`, { audience: 'numbers', numbers: phone(), when: 'now', send_at: '', segment_id: '' });
  assert.equal(review.status, 200, review.text.slice(0, 300));
  assert.match(review.text, /data-plan/);
  // The template's warning, then the names the pasted number (no contact) lacks, shoe_size not twice.
  const reviewWarnings = warnings(review.text);
  assert.deepEqual(reviewWarnings[0], 'No contact of this company has the variable shoe_size: it renders empty.');
  assert.deepEqual(reviewWarnings.slice(1).map((w) => /^\{\{ (\w+) \}\} is empty for 1 recipient of 1 /.exec(w)?.[1]), ['city', 'first_name']);

  const clean = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Lines', body: '{{ first_name }} {{ city }}' }));
  assert.equal(clean.status, 303);
  assert.doesNotMatch((await c.get(clean.location!)).text, /data-warnings/);
});

test('WhatsApp: the bubble lists what each parameter becomes; a mapping whose template was paused is shown on the editor and the send review', async () => {
  const wa = await whatsappCompany(s, graph);
  const c = await signedInClient(s, wa.companyId);
  const camp = await s.admin('POST', `/admin/companies/${wa.companyId}/campaigns`, {
    name: 'Update', template: { body: 'Order {{ order_id | default: "A-1" }} is late', whatsapp: { name: 'order_update', language: 'en' } },
  }, 201);
  const page = await c.get(`/console/campaigns/${camp.campaign_id}`);
  assert.match(page.text, /WhatsApp template <strong>order_update<\/strong> \(en\): its parameters become/);
  assert.match(page.text, /<dt>Body \{\{1\}\}<\/dt><dd>A-1<\/dd>/);
  assert.doesNotMatch(page.text, /data-warnings/);

  await s.service.deps.database.db.updateTable('whatsapp_templates').set({ status: 'PAUSED' })
    .where('company_id', '=', wa.companyId).where('name', '=', 'order_update').where('language', '=', 'en').execute();
  const paused = await c.get(`/console/campaigns/${camp.campaign_id}`);
  assert.deepEqual(warnings(paused.text), ['The WhatsApp template order_update (en) is PAUSED, not APPROVED.']);
  const review = await c.submit(`/console/campaigns/${camp.campaign_id}/send`, `/console/campaigns/${camp.campaign_id}/send`, { audience: 'numbers', numbers: phone(), when: 'now', send_at: '', segment_id: '' });
  assert.equal(review.status, 200, review.text.slice(0, 300));
  assert.ok(warnings(review.text).includes('The WhatsApp template order_update (en) is PAUSED, not APPROVED.'), warnings(review.text).join(' | '));
});
