/**
 * Automations and campaigns in the console, over HTTP with a signed-in user: create,
 * edit, activate / deactivate through the forms (CSRF, POST-redirect-GET), a template that does not
 * parse refused beside its field with the input kept and nothing written, the live preview equal to what
 * the pipeline then sends for the same contact, the test send appearing in Sends, and another company's
 * ids answering 404.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(++n).padStart(5, '0')}`;

const form = (o: Record<string, string>) => ({
  name: 'Welcome', type: 'api', header_type: 'none', header_text: '', header_url: '', body: 'Hi', b1_text: '', b1_url: '', b2_text: '', b2_url: '',
  wa_name: '', wa_language: '', wa_body_parameters: '', wa_header_parameters: '', ...o,
});

const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

test('create, edit, activate an automation through the forms; a bad template is refused beside its field', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const list = await c.get('/console/automations');
  assert.equal(list.status, 200);
  assert.match(list.text, /aria-current="page">Automations/);

  const bad = await c.submit('/console/automations/new', '/console/automations/new', form({ body: 'Hi {{ first_name | shout }}', b1_text: 'Go', b1_url: 'ftp://x' }));
  assert.equal(bad.status, 422);
  assert.match(bad.text, /id="body-error"[^>]*>Not a valid Liquid template: undefined filter: shout \(line 1, column 4\)/);
  assert.match(bad.text, /id="b1_url-error"[^>]*>Must be an http\(s\) URL/);
  assert.match(bad.text, /Hi \{\{ first_name \| shout \}\}<\/textarea>/, 'input kept');
  const db = s.service.deps.database.db;
  const count = async () => Number((await db.selectFrom('automations').select((eb) => eb.fn.countAll<string>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow()).n);
  assert.equal(await count(), 0, 'nothing written');

  const created = await c.submit('/console/automations/new', '/console/automations/new', form({
    body: 'Hello {{ first_name }}', header_type: 'text', header_text: 'Hey {{ first_name }}', b1_text: 'Shop', b1_url: 'https://example.com/s',
    wa_name: 'welcome', wa_language: 'en_US', wa_body_parameters: '1', wa_header_parameters: '1',
  }));
  assert.equal(created.status, 303);
  const m = /^\/console\/automations\/(\d+)\?done=created$/.exec(created.location ?? '');
  assert.ok(m, created.location ?? '');
  const id = Number(m[1]);
  const stored = await s.admin('GET', `/admin/automations/${id}`);
  assert.equal(stored.active, false);
  assert.deepEqual(stored.template, {
    header: { type: 'text', text: 'Hey {{ first_name }}' }, body: 'Hello {{ first_name }}', buttons: [{ type: 'url', text: 'Shop', url: 'https://example.com/s' }],
    whatsapp: { name: 'welcome', language: 'en_US', body_parameters: 1, header_parameters: 1 },
  });
  const page = await c.get(created.location!);
  assert.match(page.text, /Created\./);

  // Edit: a WhatsApp parameter count that does not match is refused, stored template unchanged.
  const mismatch = await c.submit(`/console/automations/${id}`, `/console/automations/${id}`, form({ name: 'Renamed', body: 'Hello', wa_name: 'welcome', wa_language: 'en_US', wa_body_parameters: '1' }));
  assert.equal(mismatch.status, 422);
  assert.match(mismatch.text, /id="body-error"[^>]*>The WhatsApp template welcome takes 1 parameter here/);
  assert.match(mismatch.text, /value="Renamed"/);
  assert.equal((await s.admin('GET', `/admin/automations/${id}`)).name, 'Welcome');
  const saved = await c.submit(`/console/automations/${id}`, `/console/automations/${id}`, form({ name: 'Renamed', body: 'Bye {{ last_name }}' }));
  assert.equal(saved.status, 303);
  assert.equal(saved.location, `/console/automations/${id}?done=saved`);
  const after1 = await s.admin('GET', `/admin/automations/${id}`);
  assert.deepEqual([after1.name, after1.template.body, after1.template.whatsapp], ['Renamed', 'Bye {{ last_name }}', undefined]);

  const act = await c.submit(`/console/automations/${id}`, `/console/automations/${id}/active`, { active: 'true' });
  assert.equal(act.status, 303);
  assert.equal((await s.admin('GET', `/admin/automations/${id}`)).active, true);
  assert.match((await c.get(act.location!)).text, /Deactivate/);
  await c.submit(`/console/automations/${id}`, `/console/automations/${id}/active`, { active: 'false' });
  assert.equal((await s.admin('GET', `/admin/automations/${id}`)).active, false);

  // Without a CSRF token: refused, nothing changed.
  const noCsrf = await c.request('POST', `/console/automations/${id}/active`, { active: 'true' });
  assert.equal(noCsrf.status, 403);
  assert.equal((await s.admin('GET', `/admin/automations/${id}`)).active, false);
});

test('campaign: preview equals what the test send delivers; the test send appears in Sends', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const [p1, p2] = [phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [
    { phone: p1, first_name: 'Zoë & <Co>', variables: { city: 'Köln', n: 3 } },
    { phone: p2, first_name: 'Bo', variables: { city: '' } },
  ] });
  const templates = [
    form({ name: 'T1', body: 'Hi {{ first_name }} in {{ city | default: "nowhere" }}\n{% for i in (1..n) %}*{% endfor %}' }),
    form({ name: 'T2', header_type: 'text', header_text: '{{ first_name | upcase }}', body: '{{ city | size }} · {{ phone | slice: 0, 3 }}', b1_text: 'A', b1_url: 'https://e.com/a' }),
  ];
  for (const t of templates) {
    const created = await c.submit('/console/campaigns/new', '/console/campaigns/new', t);
    assert.equal(created.status, 303, created.text.slice(0, 500));
    const id = Number(/campaigns\/(\d+)/.exec(created.location!)![1]);
    for (const p of [p1, p2]) {
      const pv = await c.get(`/console/campaigns/${id}?preview=1&preview_phone=${encodeURIComponent(p)}`);
      assert.equal(pv.status, 200, (/role="alert"[^<]*<?[^<]*/.exec(pv.text) ?? [""])[0]);
      const body = unescape(/data-preview-body>([\s\S]*?)<\/pre>/.exec(pv.text)![1]);
      const sent = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}/test-send`, { test_phone: p });
      assert.equal(sent.status, 303);
      const batchId = /^\/console\/sends\/([0-9a-f-]{36})$/.exec(sent.location!)![1];
      const done = await eventually(async () => {
        const b = await s.admin('GET', `/admin/batches/${batchId}`);
        return b.status === 'completed' ? b : undefined;
      });
      assert.equal(done.kind, 'campaign');
      assert.equal(done.source_id, id);
      const [msg] = (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages;
      assert.equal(msg.status, 'sent');
      assert.equal(Buffer.compare(Buffer.from(body), Buffer.from(msg.rendered.body)), 0, `${t.name} ${p}: ${JSON.stringify(body)} vs ${JSON.stringify(msg.rendered.body)}`);
      if (msg.rendered.header.type === 'text') assert.equal(unescape(/data-preview-header>([\s\S]*?)<\/strong>/.exec(pv.text)![1]), msg.rendered.header.text);
      const sends = await c.get('/console/sends');
      assert.ok(sends.text.includes(batchId), 'the test send is listed in Sends');
    }
  }
  // Sample data, bad JSON, bad test phone.
  const id = Number(/campaigns\/(\d+)/.exec((await c.submit('/console/campaigns/new', '/console/campaigns/new', form({ name: 'S', body: 'Yo {{ first_name }} {{ k }}' }))).location!)![1]);
  const sample = await c.get(`/console/campaigns/${id}?preview=1&preview_first_name=Sam&preview_variables=${encodeURIComponent('{"k": 5}')}`);
  assert.match(sample.text, /data-preview-body>Yo Sam 5<\/pre>/);
  const badJson = await c.get(`/console/campaigns/${id}?preview=1&preview_variables=nope`);
  assert.equal(badJson.status, 422);
  assert.match(badJson.text, /id="preview_variables-error"/);
  assert.match(badJson.text, /value="nope"/);
  const badPhone = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}/test-send`, { test_phone: 'call me' });
  assert.equal(badPhone.status, 422);
  assert.match(badPhone.text, /id="test_phone-error"/);
  assert.match(badPhone.text, /value="call me"/);
});

test("another company's automation and campaign ids answer 404 and change nothing", async () => {
  const other = await newCompany(s);
  const a = await s.admin('POST', `/admin/companies/${other}/automations`, { name: 'theirs', type: 'api', active: false, template: { body: 'x' } }, 201);
  const camp = await s.admin('POST', `/admin/companies/${other}/campaigns`, { name: 'theirs', template: { body: 'x' } }, 201);
  const c = await signedInClient(s, await newCompany(s));
  for (const p of [`/console/automations/${a.automation_id}`, `/console/campaigns/${camp.campaign_id}`, `/console/campaigns/${camp.campaign_id}?preview=1&preview_phone=%2B4915100000000`, '/console/automations/99999999999']) {
    assert.equal((await c.get(p)).status, 404, p);
  }
  const own = await c.get('/console/automations/new');
  for (const [p, f] of [
    [`/console/automations/${a.automation_id}`, form({ name: 'mine' })],
    [`/console/automations/${a.automation_id}/active`, { active: 'true' }],
    [`/console/campaigns/${camp.campaign_id}/test-send`, { test_phone: phone() }],
  ] as const) {
    const token = /name="_csrf" value="([^"]+)"/.exec(own.text)![1];
    assert.equal((await c.request('POST', p, { _csrf: token, ...f })).status, 404, p);
  }
  const stored = await s.admin('GET', `/admin/automations/${a.automation_id}`);
  assert.deepEqual([stored.name, stored.active], ['theirs', false]);
});

test('"Preview changes" renders the unsaved template for a contact or sample data and writes nothing', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const p = phone();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, first_name: 'Mo', variables: { plan: 'gold' } }] });
  const fresh = await c.submit('/console/campaigns/new', '/console/campaigns/new', form({ name: 'Draft', body: 'Plan {{ plan | upcase }} for {{ first_name }}', intent: 'preview', editor_preview_phone: p }));
  assert.equal(fresh.status, 200);
  assert.match(fresh.text, /data-bubble-body>Plan GOLD for Mo<\/div>/);
  assert.match(fresh.text, /data-bubble-to>To \+49\d+ · a contact of your company</);
  const db = s.service.deps.database.db;
  assert.equal((await db.selectFrom('campaigns').select('campaign_id').where('company_id', '=', companyId).execute()).length, 0, 'nothing created');

  const created = await c.submit('/console/campaigns/new', '/console/campaigns/new', form({ name: 'Draft', body: 'Old {{ first_name }}' }));
  const id = Number(/campaigns\/(\d+)/.exec(created.location!)![1]);
  const pv = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Draft', body: 'New {{ first_name | default: "there" }}', intent: 'preview' }));
  assert.equal(pv.status, 200);
  assert.match(pv.text, /data-bubble-body>New there<\/div>/);
  assert.match(pv.text, /unsaved changes/);
  assert.match(pv.text, /New \{\{ first_name \| default: &quot;there&quot; \}\}<\/textarea>/, 'the edited input is kept');
  assert.equal((await s.admin('GET', `/admin/campaigns/${id}`)).template.body, 'Old {{ first_name }}', 'nothing saved');
  const badPhone = await c.submit(`/console/campaigns/${id}`, `/console/campaigns/${id}`, form({ name: 'Draft', body: 'x', intent: 'preview', editor_preview_phone: 'nope' }));
  assert.equal(badPhone.status, 422);
  assert.match(badPhone.text, /id="editor_preview_phone-error"/);
});
