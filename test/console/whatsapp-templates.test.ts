/**
 * WhatsApp templates in the console (docs/whatsapp.md "In the console"), over HTTP with signed-in
 * users against the fake Graph API: the Templates page lists the synced catalogue in words; Sync now
 * runs the sync (Meta's refusal shown in words, the catalogue unchanged); the submit form builds Meta's
 * components (bad input refused beside its field, nothing sent); roles (everyone looks, owners and
 * marketers change); a company whose channel is not WhatsApp (or has no waba_id) is told why; the
 * automation/campaign editor offers only the approved templates with their parameters, and says so
 * (with a link) when there are none.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { graphError, graphTemplate, randomPhoneNumberId, startFakeGraph, GRAPH_TOKEN, type FakeGraph } from '../helpers/fake-graph.ts';
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

const PAGE = '/console/whatsapp/templates';
const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
/** The table row of a template (`name|language`), as text without tags. */
function row(page: string, name: string, language: string): string {
  const m = new RegExp(`<tr data-template="${name}\\|${language}">([\\s\\S]*?)</tr>`).exec(page);
  assert.ok(m, `no row for ${name} (${language})`);
  return unescape(m[1]);
}
const text = (fragment: string) => fragment.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
const catalogue = async (companyId: number) => (await s.admin('GET', `/admin/companies/${companyId}/whatsapp/templates`)).templates as any[];
const templateRequests = (wabaId: string, method: string) => graph.requests.filter((r) => r.kind === 'templates' && r.wabaId === wabaId && r.method === method).length;

const EXTRA = [
  graphTemplate('spring_sale', 'de', { status: 'REJECTED', category: 'MARKETING', rejected_reason: 'INVALID_FORMAT', body: 1 }),
  graphTemplate('winter_sale', 'de', { status: 'PAUSED', category: 'MARKETING', quality: 'RED', header: 'text', body: 3 }),
  graphTemplate('new_offer', 'en_US', { status: 'PENDING', category: 'MARKETING' }),
];

test('the Templates page lists the synced catalogue in words; Templates is in the navigation', async () => {
  const wa = await whatsappCompany(s, graph, { templates: EXTRA });
  const c = await signedInClient(s, wa.companyId);
  const page = await c.get(PAGE);
  assert.equal(page.status, 200, page.text.slice(0, 500));
  assert.match(page.text, /<a href="\/console\/whatsapp\/templates" aria-current="page">Templates<\/a>/);
  const rows = [...page.text.matchAll(/<tr data-template="([^"]+)">/g)].map((m) => unescape(m[1]));
  assert.deepEqual(rows, (await catalogue(wa.companyId)).map((t) => `${t.name}|${t.language}`), 'every template, in the catalogue\'s order');
  assert.equal(rows.length, 9);

  const shipped = row(page.text, 'order_shipped', 'en_US');
  assert.match(shipped, /<span class="badge badge-approved" title="Meta approved it: automations and campaigns may use it.">approved<\/span>/);
  assert.match(text(shipped), /order_shipped en_US approved utility not rated yet — image header; 2 body parameters; 2 buttons \(2 with a URL parameter\)/);
  assert.match(shipped, /<time datetime="[^"]+">/);
  assert.match(text(row(page.text, 'spring_sale', 'de')), /rejected marketing not rated yet invalid format 1 body parameter/);
  assert.match(row(page.text, 'spring_sale', 'de'), /title="Meta rejected it \(see the reason\)/);
  assert.match(text(row(page.text, 'winter_sale', 'de')), /paused marketing low \(red\) — text header with 1 parameter; 3 body parameters/);
  assert.match(text(row(page.text, 'new_offer', 'en_US')), /pending marketing/);
  assert.match(page.text, /What the statuses mean/);
  assert.match(page.text, /<form method="post" action="\/console\/whatsapp\/templates\/sync"/);
  assert.match(page.text, /data-submit-template/);

  // A company whose channel is not WhatsApp has no Templates entry.
  const other = await signedInClient(s, await newCompany(s));
  assert.doesNotMatch((await other.get('/console/overview')).text, /whatsapp\/templates/);
});

test('Sync now reads Meta\'s list again; Meta refusing is shown in words and the catalogue stays as it was', async () => {
  const wa = await whatsappCompany(s, graph);
  const c = await signedInClient(s, wa.companyId);
  const wab = graph.templates.get(wa.wabaId)!;
  graph.templates.set(wa.wabaId, [...wab.filter((t) => t.name !== 'hello'), graphTemplate('welcome_back', 'en', { body: 1 })]);
  const gets = templateRequests(wa.wabaId, 'GET');
  const synced = await c.submit(PAGE, `${PAGE}/sync`, {});
  assert.equal(synced.status, 303);
  assert.equal(synced.location, `${PAGE}?done=synced`);
  assert.equal(templateRequests(wa.wabaId, 'GET'), gets + 1);
  const page = await c.get(synced.location!);
  assert.match(page.text, /Synced with Meta/);
  assert.match(page.text, /data-template="welcome_back\|en"/);
  assert.doesNotMatch(page.text, /data-template="hello\|/);
  const audit = await s.service.deps.database.db.selectFrom('audit_log').select(['actor', 'action']).where('company_id', '=', wa.companyId).where('action', '=', 'whatsapp.templates.sync').orderBy('entry_id', 'desc').executeTakeFirst();
  assert.match(audit?.actor ?? '', /^console:/);

  const before1 = await catalogue(wa.companyId);
  graph.templates.set(wa.wabaId, [graphTemplate('only_one', 'en', {})]);
  graph.script = (r) => (r.kind === 'templates' && r.wabaId === wa.wabaId ? graphError(500, 2, 'Service temporarily unavailable') : undefined);
  try {
    const refused = await c.submit(PAGE, `${PAGE}/sync`, {});
    assert.equal(refused.status, 502);
    assert.match(unescape(refused.text), /role="alert" data-problem>Meta refused the sync: Meta answered HTTP 500, error 2: Service temporarily unavailable\. Nothing changed here: the catalogue below is as it was\./);
    assert.match(refused.text, /data-template="welcome_back\|en"/);
  } finally {
    graph.script = () => undefined;
  }
  assert.deepEqual(await catalogue(wa.companyId), before1);
});

test('the submit form builds Meta\'s components; bad input is refused beside its field and nothing is sent', async () => {
  const wa = await whatsappCompany(s, graph);
  const c = await signedInClient(s, wa.companyId, 'marketer');
  const posts = () => templateRequests(wa.wabaId, 'POST');

  const bad = await c.submit(PAGE, PAGE, {
    name: 'Order Ready', language: 'english', category: 'UTILITY', header_text: 'Order {{2}}', header_example: '', body: 'Hi {{1}}, see {{3}}',
    body_examples: '', button_text: 'Track', button_url: 'https://shop.example/{{1}}/x', button_example: '',
  });
  assert.equal(bad.status, 422);
  const t = unescape(bad.text);
  assert.match(t, /id="t_name-error"[^>]*>Use 1 to 512 lower-case letters, digits and underscores\./);
  assert.match(t, /id="t_language-error"[^>]*>Enter a language code such as en_US or de\./);
  assert.match(t, /id="t_header_text-error"[^>]*>A header may have one placeholder, written \{\{1\}\}\./);
  assert.match(t, /id="t_body-error"[^>]*>Number the placeholders from \{\{1\}\} without gaps \(found \{\{1\}\}, \{\{3\}\}\)\./);
  assert.match(t, /id="t_button_url-error"[^>]*>A URL may have one placeholder, \{\{1\}\}, at its end\./);
  assert.match(t, /value="Order Ready"/, 'input kept');
  assert.equal(posts(), 0, 'nothing sent to Meta');

  const missingSamples = await c.submit(PAGE, PAGE, { name: 'order_ready', language: 'en_US', category: 'UTILITY', body: 'Hi {{1}}, order {{2}}', body_examples: 'Ada' });
  assert.equal(missingSamples.status, 422);
  assert.match(unescape(missingSamples.text), /id="t_body_examples-error"[^>]*>Give 2 sample values, one per line .*you gave 1\./);
  assert.equal(posts(), 0);

  const ok = await c.submit(PAGE, PAGE, {
    name: 'order_ready', language: 'en_US', category: 'UTILITY', header_text: 'Order {{1}}', header_example: 'A-17',
    body: 'Hi {{1}}, your order {{2}} is ready.', body_examples: 'Ada\r\nA-17\r\n', button_text: 'Track', button_url: 'https://shop.example/track/{{1}}',
    button_example: 'https://shop.example/track/A-17',
  });
  assert.equal(ok.status, 303, ok.text.slice(0, 500));
  assert.equal(ok.location, `${PAGE}?done=submitted`);
  const sent = graph.requests.filter((r) => r.kind === 'templates' && r.wabaId === wa.wabaId && r.method === 'POST');
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].body, {
    name: 'order_ready', language: 'en_US', category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['A-17'] } },
      { type: 'BODY', text: 'Hi {{1}}, your order {{2}} is ready.', example: { body_text: [['Ada', 'A-17']] } },
      { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://shop.example/track/{{1}}', example: ['https://shop.example/track/A-17'] }] },
    ],
  });
  const stored = (await catalogue(wa.companyId)).find((x) => x.name === 'order_ready');
  assert.deepEqual([stored.status, stored.parameters], ['PENDING', { header: 1, body: 2, buttons: [1] }]);
  const page = await c.get(ok.location!);
  assert.match(page.text, /Submitted to Meta for review/);
  assert.match(text(row(page.text, 'order_ready', 'en_US')), /pending utility/);

  // Meta refuses (the same name and language again): its words, nothing stored twice.
  const again = await c.submit(PAGE, PAGE, { name: 'order_ready', language: 'en_US', category: 'UTILITY', body: 'Hello' });
  assert.equal(again.status, 502);
  assert.match(unescape(again.text), /Meta refused the submission: Meta answered HTTP 400, error 100: Invalid parameter: Content in this language already exists\./);
  assert.match(again.text, /value="order_ready"/, 'input kept');
  assert.equal((await catalogue(wa.companyId)).filter((x) => x.name === 'order_ready').length, 1);
});

test('roles: a developer looks without forms and is refused changes; owners and marketers sync', async () => {
  const wa = await whatsappCompany(s, graph);
  const dev = await signedInClient(s, wa.companyId, 'developer');
  const page = await dev.get(PAGE);
  assert.equal(page.status, 200);
  assert.match(page.text, />Templates<\/a>/);
  assert.match(page.text, /data-template="order_shipped\|en_US"/);
  assert.match(page.text, /Read only: your role \(developer\)/);
  assert.match(page.text, /Your role can view templates but not change them\./);
  assert.doesNotMatch(page.text, /templates\/sync/);
  assert.doesNotMatch(page.text, /data-submit-template/);
  const gets = templateRequests(wa.wabaId, 'GET');
  const refused = await dev.submit('/console/overview', `${PAGE}/sync`, {});
  assert.equal(refused.status, 403);
  assert.match(refused.text, /Not allowed/);
  const refusedSubmit = await dev.submit('/console/overview', PAGE, { name: 'x_y', language: 'en', category: 'UTILITY', body: 'Hi' });
  assert.equal(refusedSubmit.status, 403);
  assert.equal(templateRequests(wa.wabaId, 'GET'), gets, 'Meta not asked');
  assert.equal(templateRequests(wa.wabaId, 'POST'), 0);

  for (const role of ['owner', 'marketer'] as const) {
    const c = await signedInClient(s, wa.companyId, role);
    const r = await c.submit(PAGE, `${PAGE}/sync`, {});
    assert.equal(r.status, 303, `${role}: ${r.text.slice(0, 300)}`);
  }
  assert.equal(templateRequests(wa.wabaId, 'GET'), gets + 2);
});

test('a company whose channel is not WhatsApp, or has no waba_id, is told why; sync and submit answer 409', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const page = await c.get(PAGE);
  assert.equal(page.status, 200);
  assert.match(unescape(page.text), /Your company's channel is outbox, not WhatsApp: message templates belong to WhatsApp\./);
  assert.doesNotMatch(page.text, /templates\/sync"/);
  assert.doesNotMatch(page.text, /data-submit-template/);
  assert.match(page.text, /No templates yet/);
  const sync = await c.submit(PAGE, `${PAGE}/sync`, {});
  assert.equal(sync.status, 409);
  assert.match(unescape(sync.text), /data-problem>Your company's channel is outbox, not WhatsApp/);
  const submit = await c.submit(PAGE, PAGE, { name: 'hello_there', language: 'en', category: 'UTILITY', body: 'Hello' });
  assert.equal(submit.status, 409);

  // WhatsApp without a WABA id.
  const noWaba = await newCompany(s);
  await s.admin('PUT', `/admin/companies/${noWaba}/channel`, {
    provider: 'whatsapp', phone_number_id: randomPhoneNumberId(), access_token: GRAPH_TOKEN, api_base_url: graph.baseUrl, app_secret: 'app-secret-x', verify_token: 'verify-x',
  });
  const w = await signedInClient(s, noWaba);
  const wPage = await w.get(PAGE);
  assert.equal(wPage.status, 200);
  assert.match(wPage.text, /has no WhatsApp Business Account id \(waba_id\)/);
  assert.match(wPage.text, /aria-current="page">Templates/);
  const wSync = await w.submit(PAGE, `${PAGE}/sync`, {});
  assert.equal(wSync.status, 409);
  assert.match(wSync.text, /data-problem>Your WhatsApp channel has no WhatsApp Business Account id/);
});

test('the editor offers only approved templates with their parameters; the mapping is saved in its usual shape', async () => {
  const wa = await whatsappCompany(s, graph, { templates: EXTRA });
  const c = await signedInClient(s, wa.companyId, 'marketer');
  const page = await c.get('/console/campaigns/new');
  assert.equal(page.status, 200);
  const select = /<select id="wa_template" name="wa_template"[\s\S]*?<\/select>/.exec(page.text)?.[0] ?? '';
  const values = [...select.matchAll(/<option value="([^"]*)"/g)].map((m) => unescape(m[1]));
  assert.deepEqual(values, ['', 'hello|en', 'hello|en_US', 'order_shipped|en', 'order_shipped|en_US', 'order_update|en', 'order_update|en_US'], 'approved ones only');
  assert.match(unescape(select), />order_shipped \(en_US\) · image header; 2 body parameters; 2 buttons \(2 with a URL parameter\)<\/option>/);
  assert.match(page.text, /id="wa_template-help"[^>]*>Choose a template to see its parameters\.<\/p>/);
  assert.doesNotMatch(page.text, /name="wa_name"/, 'no typed name');

  const created = await c.submit('/console/campaigns/new', '/console/campaigns/new', {
    name: 'Updates', header_type: 'none', header_text: '', header_url: '', body: 'Hi {{ first_name }}', b1_text: '', b1_url: '', b2_text: '', b2_url: '',
    wa_template: 'order_update|en_US',
  });
  assert.equal(created.status, 303, created.text.slice(0, 800));
  const id = Number(/\/console\/campaigns\/(\d+)/.exec(created.location ?? '')?.[1]);
  assert.deepEqual((await s.admin('GET', `/admin/campaigns/${id}`)).template.whatsapp, { name: 'order_update', language: 'en_US' });
  const edit = await c.get(`/console/campaigns/${id}`);
  assert.match(edit.text, /<option value="order_update\|en_US" data-help="[^"]*" selected>/);
  assert.match(unescape(edit.text), /id="wa_template-help"[^>]*>order_update \(en_US\): 1 body parameter\. The body must have exactly 1 top-level \{\{ \}\} output: they fill \{\{1\}\} in order\. Header: none\. No buttons\.<\/p>/);

  // A saved mapping that is no longer approved stays visible, marked with its status.
  await s.service.deps.database.db.updateTable('whatsapp_templates').set({ status: 'PAUSED' })
    .where('company_id', '=', wa.companyId).where('name', '=', 'order_update').where('language', '=', 'en_US').execute();
  const paused = unescape((await c.get(`/console/campaigns/${id}`)).text);
  assert.match(paused, /<option value="order_update\|en_US" data-help="[^"]*" selected>order_update \(en_US\) \(paused: Meta paused it/);

  // An empty catalogue: said, with a link to the Templates page.
  const empty = await whatsappCompany(s, graph, { noSync: true });
  const e = await signedInClient(s, empty.companyId);
  const emptyPage = await e.get('/console/automations/new');
  assert.match(emptyPage.text, /data-no-approved-templates>Your WhatsApp catalogue has no approved templates\. <a href="\/console\/whatsapp\/templates">Open the Templates page<\/a>/);

  // A company whose channel is not WhatsApp keeps the typed mapping fields.
  const other = await signedInClient(s, await newCompany(s));
  const otherPage = await other.get('/console/automations/new');
  assert.match(otherPage.text, /name="wa_name"/);
  assert.doesNotMatch(otherPage.text, /name="wa_template"/);
});

test('saving through the picker is checked by the domain: the problem is shown beside the select or its field, nothing written', async () => {
  const wa = await whatsappCompany(s, graph);
  const c = await signedInClient(s, wa.companyId);
  const base = { name: 'Shipping', header_type: 'none', header_text: '', header_url: '', body: 'Hi', b1_text: '', b1_url: '', b2_text: '', b2_url: '' };
  const db = s.service.deps.database.db;
  const count = async () => (await db.selectFrom('campaigns').select('campaign_id').where('company_id', '=', wa.companyId).execute()).length;

  const none = await c.submit('/console/campaigns/new', '/console/campaigns/new', { ...base, wa_template: '' });
  assert.equal(none.status, 422);
  assert.match(unescape(none.text), /id="wa_template-error" class="error" role="alert">The company's channel is WhatsApp: map this template to an approved WhatsApp template/);
  assert.match(none.text, /aria-describedby="wa_template-help wa_template-error" aria-invalid="true"/);

  const mismatch = await c.submit('/console/campaigns/new', '/console/campaigns/new', { ...base, wa_template: 'order_shipped|en_US' });
  assert.equal(mismatch.status, 422);
  assert.match(unescape(mismatch.text), /id="body-error"[^>]*>The WhatsApp template order_shipped \(en_US\) takes 2 body parameters, but the body has 0 top-level \{\{ \}\} outputs\./);
  assert.match(mismatch.text, /<option value="order_shipped\|en_US" data-help="[^"]*" selected>/, 'choice kept');

  const gone = await c.submit('/console/campaigns/new', '/console/campaigns/new', { ...base, wa_template: 'nope|en' });
  assert.equal(gone.status, 422);
  assert.match(unescape(gone.text), /id="wa_template-error"[^>]*>The WhatsApp template nope \(en\) is not in the company's catalogue/);
  assert.match(gone.text, /<option value="nope\|en" [^>]*selected>nope \(en\) \(not in your catalogue\)<\/option>/);
  assert.equal(await count(), 0, 'nothing written');
});
