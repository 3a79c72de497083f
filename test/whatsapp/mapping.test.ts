/**
 * Sources must map to an approved template (docs/whatsapp.md): for a WhatsApp company, creating or
 * changing an automation or campaign (operator API and console) is 422 naming the problem unless the
 * template's `whatsapp` mapping names an APPROVED catalogue template with matching parameters; setting
 * a WhatsApp channel warns about the sources that do not map; `expire_after` on automations and
 * campaigns (default null / 24h, 422 for a bad duration).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { newCompany, signedInClient } from '../console/helpers.ts';

let s: TestServer;
let graph: FakeGraph;

before(async () => {
  s = await startTestServer({ role: 'api' });
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

/** order_shipped en_US of the default catalogue: image header, 2 body parameters, 2 URL buttons with a placeholder. */
const SHIPPED = {
  header: { type: 'image', url: 'https://cdn.example/default.png' },
  body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.',
  buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }, { type: 'url', text: 'Help', url: 'https://shop.example/help' }],
  whatsapp: { name: 'order_shipped', language: 'en_US' },
};

const automation = (template: unknown, extra: Record<string, unknown> = {}) => ({ name: 'wa', type: 'api', active: true, template, ...extra });
const refused = async (path: string, body: unknown, method = 'POST') => (await s.admin(method, path, body, 422)).detail as { type: string; loc: string[]; msg: string }[];

test('create and change: 422 naming the problem unless the mapping names an approved template with matching parameters', async () => {
  const c = await whatsappCompany(s, graph, {
    templates: [
      graphTemplate('promo', 'de', { status: 'PENDING', body: 1 }),
      graphTemplate('greeting', 'en', { header: 'text', body: 1 }),
      graphTemplate('manual', 'en', { header: 'document', body: 0 }),
    ],
  });
  const autos = `/admin/companies/${c.companyId}/automations`;
  const ok = await s.admin('POST', autos, automation(SHIPPED), 201);
  assert.equal(ok.template.whatsapp.name, 'order_shipped');

  const cases: [string, unknown, string[], RegExp][] = [
    ['no mapping', { body: 'Hi' }, ['body', 'template', 'whatsapp'], /map this template to an approved WhatsApp template/],
    ['unknown template', { ...SHIPPED, whatsapp: { name: 'order_shipped', language: 'fr' } }, ['body', 'template', 'whatsapp', 'name'], /order_shipped \(fr\) is not in the company's catalogue/],
    ['not approved', { body: 'Hallo {{ first_name }}', whatsapp: { name: 'promo', language: 'de' } }, ['body', 'template', 'whatsapp', 'name'], /promo \(de\) is PENDING, not APPROVED/],
    ['body count', { ...SHIPPED, body: 'Hi {{ first_name }}' }, ['body', 'template', 'body'], /takes 2 body parameters, but the body has 1 top-level \{\{ \}\} output/],
    ['header kind', { ...SHIPPED, header: { type: 'video', url: 'https://cdn.example/v.mp4' } }, ['body', 'template', 'header', 'type'], /has a image header; this template's header is video/],
    ['no media header', { ...SHIPPED, header: { type: 'none' } }, ['body', 'template', 'header', 'type'], /has a image header; this template's header is none/],
    ['media header on a text template', { header: { type: 'image', url: 'https://cdn.example/i.png' }, body: 'Hi {{ first_name }}', whatsapp: { name: 'greeting', language: 'en' } }, ['body', 'template', 'header', 'type'], /has no image header/],
    ['text header count', { header: { type: 'text', text: 'Hello' }, body: 'Hi {{ first_name }}', whatsapp: { name: 'greeting', language: 'en' } }, ['body', 'template', 'header', 'text'], /takes 1 header parameter, but the header text has 0/],
    ['missing text header', { body: 'Hi {{ first_name }}', whatsapp: { name: 'greeting', language: 'en' } }, ['body', 'template', 'header'], /no header: use a text header/],
    ['document header', { body: 'See attached', whatsapp: { name: 'manual', language: 'en' } }, ['body', 'template', 'header', 'type'], /has a document header/],
    ['too many buttons', { body: 'Hi', buttons: [{ type: 'url', text: 'Go', url: 'https://x.example' }], whatsapp: { name: 'hello', language: 'en' } }, ['body', 'template', 'buttons', '0'], /has 0 buttons; this one has no counterpart/],
    ['URL placeholder without a button', { ...SHIPPED, buttons: [SHIPPED.buttons[0]] }, ['body', 'template', 'buttons'], /button 2 of the WhatsApp template order_shipped \(en_US\) is a URL button with a placeholder/],
  ];
  for (const [what, template, loc, msg] of cases) {
    const detail = await refused(autos, automation(template));
    assert.equal(detail.length, 1, `${what}: ${JSON.stringify(detail)}`);
    assert.deepEqual([detail[0].type, detail[0].loc], ['template_error', loc], what);
    assert.match(detail[0].msg, msg, what);
  }
  const matching = await s.admin('POST', autos, automation({ header: { type: 'text', text: 'Hello {{ first_name }}' }, body: 'Order {{ order_id }}', whatsapp: { name: 'greeting', language: 'en' } }), 201);
  assert.equal(matching.template.header.text, 'Hello {{ first_name }}');

  // Changing: a new template is checked; name and active alone are not.
  const patch = `/admin/automations/${ok.automation_id}`;
  assert.match((await refused(patch, { template: { ...SHIPPED, body: 'Hi' } }, 'PATCH'))[0].msg, /takes 2 body parameters/);
  assert.equal((await s.admin('PATCH', patch, { name: 'renamed', active: false })).name, 'renamed');
  assert.equal((await s.admin('GET', patch)).template.body, SHIPPED.body, 'the refused change wrote nothing');

  // Campaigns: create and PATCH alike.
  const camps = `/admin/companies/${c.companyId}/campaigns`;
  assert.match((await refused(camps, { name: 'p', template: { body: 'Hallo {{ first_name }}', whatsapp: { name: 'promo', language: 'de' } } }))[0].msg, /PENDING/);
  const camp = await s.admin('POST', camps, { name: 'p', template: { body: 'Hello', whatsapp: { name: 'hello', language: 'en_US' } } }, 201);
  assert.match((await refused(`/admin/campaigns/${camp.campaign_id}`, { template: { body: 'Hi', whatsapp: { name: 'nope', language: 'en' } } }, 'PATCH'))[0].msg, /nope \(en\) is not in the company's catalogue/);

  // A company that is not on WhatsApp is not checked.
  const outbox = await s.company();
  await s.admin('POST', `/admin/companies/${outbox.companyId}/automations`, automation({ body: 'Hi', whatsapp: { name: 'anything', language: 'en' } }), 201);
});

test('setting a WhatsApp channel answers warnings for the sources that do not map', async () => {
  const c = await whatsappCompany(s, graph);
  const good = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, automation(SHIPPED), 201);
  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'outbox' });
  const bad = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { ...automation({ body: 'Hi' }), name: 'Plain' }, 201);
  const camp = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'Promo', template: { body: 'Hi', whatsapp: { name: 'gone', language: 'en' } } }, 201);
  const set = await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: c.accessToken, api_base_url: graph.baseUrl, waba_id: c.wabaId });
  assert.equal(set.warnings.length, 2, JSON.stringify(set.warnings));
  assert.match(set.warnings.find((w: string) => w.startsWith(`automation ${bad.automation_id} `)), /^automation \d+ \(Plain\): template\.whatsapp: the company's channel is WhatsApp/);
  assert.match(set.warnings.find((w: string) => w.startsWith(`campaign ${camp.campaign_id} `)), /\(Promo\): template\.whatsapp\.name: the WhatsApp template gone \(en\) is not in the company's catalogue/);
  assert.ok(!set.warnings.some((w: string) => w.startsWith(`automation ${good.automation_id} `)));
  const webhook = await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'outbox' });
  assert.equal(webhook.warnings, undefined, 'only a WhatsApp channel warns');
});

test('expire_after: default null (automations) and 24h (campaigns), stored, shown, changed; 422 for a bad duration', async () => {
  const { companyId } = await s.company();
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hi' }), 201);
  assert.equal(a.expire_after, null);
  const b = await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hi' }, { expire_after: '30m' }), 201);
  assert.equal(b.expire_after, '30m');
  assert.equal((await s.admin('GET', `/admin/automations/${b.automation_id}`)).expire_after, '30m');
  assert.equal((await s.admin('PATCH', `/admin/automations/${b.automation_id}`, { expire_after: '2d' })).expire_after, '2d');
  assert.equal((await s.admin('PATCH', `/admin/automations/${b.automation_id}`, { expire_after: null })).expire_after, null);
  const c = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: { body: 'Hi' } }, 201);
  assert.equal(c.expire_after, '24h');
  const d = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'd', template: { body: 'Hi' }, expire_after: null }, 201);
  assert.equal(d.expire_after, null);
  assert.equal((await s.admin('PATCH', `/admin/campaigns/${c.campaign_id}`, { expire_after: '90s' })).expire_after, '90s');
  const listed = await s.admin('GET', `/admin/companies/${companyId}/campaigns`);
  assert.deepEqual(JSON.stringify(listed).match(/"expire_after":(null|"[^"]*")/g)?.sort(), ['"expire_after":"90s"', '"expire_after":null']);
  for (const bad of ['24', 'h', '1w', '-1h', '0s', ' 24h', 7]) {
    const detail = await refused(`/admin/companies/${companyId}/automations`, automation({ body: 'Hi' }, { expire_after: bad }));
    assert.equal(detail[0].loc[1], 'expire_after', String(bad));
    await refused(`/admin/automations/${a.automation_id}`, { expire_after: bad }, 'PATCH');
    await refused(`/admin/campaigns/${c.campaign_id}`, { expire_after: bad }, 'PATCH');
  }
  assert.equal((await s.admin('GET', `/admin/automations/${a.automation_id}`)).expire_after, null, 'refused changes wrote nothing');
});

test('the console refuses a source that does not map, beside its field', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  // Give the console's company a WhatsApp channel with a synced catalogue (the default templates).
  const phoneNumberId = String(100000000000000 + Math.floor(Math.random() * 1e14));
  const wabaId = String(200000000000000 + Math.floor(Math.random() * 1e14));
  graph.templates.set(wabaId, [graphTemplate('hello', 'en', {})]);
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: graph.accessToken, api_base_url: graph.baseUrl, waba_id: wabaId });
  await s.admin('POST', `/admin/companies/${companyId}/whatsapp/templates/sync`, undefined, 200);
  const page = await c.get('/console/automations/new');
  const select = /<select id="wa_template" name="wa_template"[\s\S]*?<\/select>/.exec(page.text)?.[0] ?? '';
  assert.match(select, /value="hello\|en"/, 'the editor offers the approved templates');
  const form = (o: Record<string, string>) => ({
    name: 'Welcome', type: 'api', header_type: 'none', header_text: '', header_url: '', body: 'Hi', b1_text: '', b1_url: '', b2_text: '', b2_url: '',
    wa_template: '', ...o,
  });
  const bad = await c.submit('/console/automations/new', '/console/automations/new', form({ body: 'Hi {{ first_name }}', wa_template: 'hello|en' }));
  assert.equal(bad.status, 422);
  assert.match(bad.text, /id="body-error"[^>]*>The WhatsApp template hello \(en\) takes 0 body parameters, but the body has 1 top-level/);
  const unmapped = await c.submit('/console/automations/new', '/console/automations/new', form({}));
  assert.equal(unmapped.status, 422);
  assert.match(unmapped.text, /id="wa_template-error"[^>]*>The company&#39;s channel is WhatsApp|id="wa_template-error"[^>]*>The company's channel is WhatsApp/);
  const good = await c.submit('/console/automations/new', '/console/automations/new', form({ wa_template: 'hello|en' }));
  assert.equal(good.status, 303, good.text);
  const edit = await c.get(good.location!);
  assert.match(edit.text, /<option value="hello\|en"[^>]*selected/, 'the edit page shows the chosen template');
  const other = await signedInClient(s, await newCompany(s));
  assert.doesNotMatch((await other.get('/console/automations/new')).text, /name="wa_template"/, 'not for a company that is not on WhatsApp');
});
