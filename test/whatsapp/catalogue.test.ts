/**
 * The WhatsApp template catalogue and channel fields (docs/whatsapp.md "The channel", "Template
 * catalogue") against the fake Graph API: sync follows Meta's paging and replaces the copy (updated,
 * new and gone templates; whatsapp.template.updated for changed ones), Meta's refusals and outages and
 * malformed data leave the catalogue exactly as it was, submit stores Meta's answer, and the channel
 * shows its limits, state and budget in use.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { pauseChannel } from '../../src/db/whatsapp-channel.ts';
import { graphError, graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';

let s: TestServer;
let graph: FakeGraph;
const clock = new FakeClock(Date.parse('2026-03-02T09:00:00Z'));

before(async () => {
  s = await startTestServer({ clock, role: 'api' });
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const list = async (companyId: number) => (await s.admin('GET', `/admin/companies/${companyId}/whatsapp/templates`)).templates as any[];
const sync = (companyId: number, status = 200) => s.admin('POST', `/admin/companies/${companyId}/whatsapp/templates/sync`, undefined, status);

test('sync follows paging.next to the last page and lists every template with its parameters', async () => {
  const many = Array.from({ length: 230 }, (_, i) => graphTemplate(`bulk_${String(i).padStart(3, '0')}`, 'de', { body: i % 3 }));
  const c = await whatsappCompany(s, graph, { templates: many });
  const total = graph.templates.get(c.wabaId)!.length;
  assert.ok(total > 200);
  const gets = graph.requests.filter((r) => r.kind === 'templates' && r.wabaId === c.wabaId && r.method === 'GET');
  assert.equal(gets.length, 3, 'three pages of 100');
  assert.match(gets[0].path, /\?limit=100$/);
  assert.match(gets[1].path, /after=/);
  assert.equal(gets[0].headers.authorization, `Bearer ${c.accessToken}`);

  const templates = await list(c.companyId);
  assert.equal(templates.length, total);
  assert.equal(templates.filter((t) => t.name.startsWith('bulk_')).length, 230);
  const shipped = templates.find((t) => t.name === 'order_shipped' && t.language === 'en_US');
  const meta = graph.templates.get(c.wabaId)!.find((t) => t.name === 'order_shipped' && t.language === 'en_US')!;
  assert.deepEqual(shipped, {
    template_id: meta.id, name: 'order_shipped', language: 'en_US', status: 'APPROVED', category: 'UTILITY',
    quality_score: 'UNKNOWN', rejected_reason: null, parameters: { header: 'image', body: 2, buttons: [1, 1] },
    components: meta.components, synced_at: new Date(clock.now()).toISOString(),
  });
  assert.deepEqual(templates.find((t) => t.name === 'bulk_005').parameters, { header: 0, body: 2, buttons: [] });
  assert.deepEqual(templates.find((t) => t.name === 'hello' && t.language === 'en').parameters, { header: 0, body: 0, buttons: [] });
});

test('parameters: text header, named and repeated placeholders, non-URL buttons, quality and rejection', async () => {
  const odd = {
    ...graphTemplate('odd', 'en', { status: 'REJECTED', quality: 'RED', rejected_reason: 'INVALID_FORMAT' }),
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Hi {{1}}' },
      { type: 'BODY', text: 'Order {{order}} for {{name}}: {{order}} again.' },
      { type: 'FOOTER', text: 'Reply STOP' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Stop' }, { type: 'URL', text: 'Track', url: 'https://x.example/t/{{1}}' }, { type: 'URL', text: 'Shop', url: 'https://x.example/' }] },
    ],
  };
  const doc: any = { ...graphTemplate('doc', 'en', { header: 'document', body: 1 }), quality_score: undefined, category: undefined };
  const c = await whatsappCompany(s, graph, { templates: [odd, doc] });
  const templates = await list(c.companyId);
  const o = templates.find((t) => t.name === 'odd');
  assert.deepEqual([o.status, o.quality_score, o.rejected_reason, o.parameters], ['REJECTED', 'RED', 'INVALID_FORMAT', { header: 1, body: 2, buttons: [0, 1, 0] }]);
  const d = templates.find((t) => t.name === 'doc');
  assert.deepEqual([d.quality_score, d.category, d.parameters], [null, null, { header: 'document', body: 1, buttons: [] }]);
});

test('a re-sync updates known templates, adds new ones, removes gone ones; whatsapp.template.updated for changed ones', async () => {
  const c = await whatsappCompany(s, graph);
  await s.admin('POST', `/admin/companies/${c.companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/events', events: ['whatsapp.template.updated'] }, 201);
  const wab = graph.templates.get(c.wabaId)!;
  const paused = wab.find((t) => t.name === 'order_shipped' && t.language === 'en')!;
  paused.status = 'PAUSED';
  paused.quality_score = { score: 'RED' };
  const gone = wab.find((t) => t.name === 'hello' && t.language === 'en')!;
  graph.templates.set(c.wabaId, [...wab.filter((t) => t !== gone), graphTemplate('brand_new', 'fr', { body: 3 })]);
  clock.advance(60_000);
  assert.deepEqual(await sync(c.companyId), { templates: wab.length });
  const templates = await list(c.companyId);
  assert.equal(templates.find((t) => t.name === 'hello' && t.language === 'en'), undefined, 'gone from Meta, gone here');
  assert.equal(templates.find((t) => t.name === 'brand_new').parameters.body, 3);
  const p = templates.find((t) => t.template_id === paused.id);
  assert.deepEqual([p.status, p.quality_score, p.synced_at], ['PAUSED', 'RED', new Date(clock.now()).toISOString()]);
  const { rows } = await sql<{ payload: any }>`SELECT payload FROM events WHERE company_id = ${c.companyId} AND type = 'whatsapp.template.updated'`.execute(s.service.deps.database.db);
  assert.equal(rows.length, 1, 'only the changed template has an event');
  const payload = typeof rows[0].payload === 'string' ? JSON.parse(rows[0].payload) : rows[0].payload;
  assert.equal(payload.data.template_id, paused.id);
  assert.equal(payload.data.status, 'PAUSED');
});

test('Meta refusing, an outage on a later page, and malformed data are 502 and change nothing', async () => {
  const many = Array.from({ length: 150 }, (_, i) => graphTemplate(`t_${i}`, 'en', {}));
  const c = await whatsappCompany(s, graph, { templates: many });
  const before = await list(c.companyId);
  const wab = graph.templates.get(c.wabaId)!;
  wab[0].status = 'DISABLED';
  wab.push(graphTemplate('added_meanwhile', 'en', {}));
  clock.advance(1000);

  graph.script = (r) => (r.kind === 'templates' && r.wabaId === c.wabaId && /after=/.test(r.path) ? graphError(500, 2, 'Service temporarily unavailable') : undefined);
  const outage = await sync(c.companyId, 502);
  assert.match(outage.detail, /HTTP 500, error 2: Service temporarily unavailable/);
  assert.deepEqual(await list(c.companyId), before, 'an outage on page 2 changes nothing');

  graph.script = (r) => (r.kind === 'templates' && r.wabaId === c.wabaId ? { status: 200, body: { data: 'nope' } } : undefined);
  assert.match((await sync(c.companyId, 502)).detail, /without a `data` array/);
  graph.script = (r) => (r.kind === 'templates' && r.wabaId === c.wabaId ? { status: 200, body: { data: [], paging: { next: 'https://evil.example/steal' } } } : undefined);
  assert.match((await sync(c.companyId, 502)).detail, /paging\.next/);
  graph.script = () => undefined;

  const [n120, n121] = [wab[120].name, wab[121].name];
  (wab[120] as any).name = 42;
  const malformed = await sync(c.companyId, 502);
  assert.match(malformed.detail, /data\[120\]\.name is not a non-empty string/);
  (wab[120] as any).name = 't_dup';
  (wab[121] as any).name = 't_dup';
  assert.match((await sync(c.companyId, 502)).detail, /twice/);
  wab[120].name = n120;
  wab[121].name = n121;
  (wab[5] as any).components = [{ type: 'BODY' }];
  assert.match((await sync(c.companyId, 502)).detail, /data\[5\]\.components\[0\]\.text is not a string/);
  assert.deepEqual(await list(c.companyId), before, 'malformed data changes nothing');

  graph.templates.get(c.wabaId)![5].components = [{ type: 'BODY', text: 'ok' }];
  assert.equal((await sync(c.companyId)).templates, wab.length, 'and the next good sync applies');
});

test('a wrong access token is 502 with Meta\'s 190 error; 409 without WhatsApp or waba_id; 404 unknown company', async () => {
  const c = await whatsappCompany(s, graph);
  const before = await list(c.companyId);
  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: 'EAAG-expired', api_base_url: graph.baseUrl, waba_id: c.wabaId });
  const refused = await sync(c.companyId, 502);
  assert.match(refused.detail, /HTTP 401, error 190: Invalid OAuth access token/);
  assert.ok(!JSON.stringify(refused).includes('EAAG-expired'));
  assert.deepEqual(await list(c.companyId), before);

  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: c.accessToken, api_base_url: graph.baseUrl });
  assert.match((await sync(c.companyId, 409)).detail, /no waba_id/);
  assert.match((await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, { name: 'x', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'x' }] }, 409)).detail, /no waba_id/);
  const outbox = await s.company();
  assert.match((await sync(outbox.companyId, 409)).detail, /not WhatsApp/);
  assert.deepEqual(await list(outbox.companyId), []);
  assert.equal((await sync(2147480000, 404)).detail, 'Company not found');
  assert.equal((await s.admin('GET', '/admin/companies/2147480000/whatsapp/templates', undefined, 404)).detail, 'Company not found');
  assert.equal((await s.admin('POST', '/admin/companies/2147480000/whatsapp/templates', { name: 'x', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'x' }] }, 404)).detail, 'Company not found');
});

test('submit sends the template to Meta and stores its answer; 422 for a bad body; 502 when Meta refuses', async () => {
  const c = await whatsappCompany(s, graph);
  const body = {
    name: 'spring_sale', language: 'de', category: 'MARKETING',
    components: [
      { type: 'HEADER', format: 'VIDEO', example: { header_handle: ['4::aW...'] } },
      { type: 'BODY', text: 'Hallo {{1}}, {{2}} % auf alles.', example: { body_text: [['Ada', '20']] } },
      { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Shop', url: 'https://shop.example/{{1}}', example: ['https://shop.example/sale'] }] },
    ],
  };
  const stored = await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, body, 201);
  const post = graph.requests.filter((r) => r.kind === 'templates' && r.method === 'POST' && r.wabaId === c.wabaId);
  assert.equal(post.length, 1);
  assert.deepEqual(post[0].body, body);
  assert.equal(post[0].headers.authorization, `Bearer ${c.accessToken}`);
  const meta = graph.templates.get(c.wabaId)!.find((t) => t.name === 'spring_sale')!;
  assert.deepEqual(stored, {
    template_id: meta.id, name: 'spring_sale', language: 'de', status: 'PENDING', category: 'MARKETING', quality_score: null,
    rejected_reason: null, parameters: { header: 'video', body: 2, buttons: [1] }, components: body.components,
    synced_at: new Date(clock.now()).toISOString(),
  });
  assert.deepEqual((await list(c.companyId)).find((t) => t.name === 'spring_sale'), stored);

  const again = await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, body, 502);
  assert.match(again.detail, /error 100: Invalid parameter: Content in this language already exists/);

  const bad = await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, { ...body, name: 'Spring Sale' }, 422);
  assert.deepEqual(bad.detail[0].loc, ['body', 'name']);
  assert.deepEqual((await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, { ...body, category: 'PROMO' }, 422)).detail[0].loc.slice(0, 2), ['body', 'category']);
  const noText = await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, { ...body, name: 'other', components: [{ type: 'HEADER', format: 'TEXT', text: 'x' }, { type: 'BODY' }] }, 422);
  assert.deepEqual(noText.detail[0].loc, ['body', 'components', 1, 'text']);
  assert.equal(graph.requests.filter((r) => r.kind === 'templates' && r.method === 'POST' && r.wabaId === c.wabaId).length, 2, '422s never reach Meta');

  // Deleted at Meta meanwhile (the catalogue not synced since): resubmitting replaces the stale entry.
  const stale = (await list(c.companyId)).find((t) => t.name === 'hello' && t.language === 'en');
  graph.templates.set(c.wabaId, graph.templates.get(c.wabaId)!.filter((t) => t.id !== stale.template_id));
  const again2 = await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates`, { name: 'hello', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello again' }] }, 201);
  assert.notEqual(again2.template_id, stale.template_id);
  assert.deepEqual((await list(c.companyId)).filter((t) => t.name === 'hello' && t.language === 'en').map((t) => [t.template_id, t.status]), [[again2.template_id, 'PENDING']]);
});

test('channel: waba_id, throughput_per_second and messaging_limit stored and shown with state and budget; resume', async () => {
  const c = await whatsappCompany(s, graph, { channel: { throughput_per_second: 40, messaging_limit: 2000 } });
  const put = await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: c.accessToken, api_base_url: graph.baseUrl, waba_id: c.wabaId, throughput_per_second: 40, messaging_limit: null });
  assert.deepEqual(put.channel, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, api_base_url: graph.baseUrl, waba_id: c.wabaId, throughput_per_second: 40, messaging_limit: null });
  let company = await s.admin('GET', `/admin/companies/${c.companyId}`);
  assert.deepEqual(company.channel, {
    provider: 'whatsapp', phone_number_id: c.phoneNumberId, api_base_url: graph.baseUrl, waba_id: c.wabaId, throughput_per_second: 40,
    messaging_limit: null, state: 'active', paused_reason: null, quality_rating: null, messaging_limit_used: 0, messaging_limit_resets_at: null,
  });
  assert.ok(!JSON.stringify(company).includes(c.accessToken) && !JSON.stringify(company).includes(c.appSecret));

  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: c.accessToken, api_base_url: graph.baseUrl });
  company = await s.admin('GET', `/admin/companies/${c.companyId}`);
  assert.deepEqual([company.channel.waba_id, company.channel.throughput_per_second, company.channel.messaging_limit], [null, 80, 250], 'defaults');
  for (const bad of [{ throughput_per_second: 0 }, { throughput_per_second: 1001 }, { messaging_limit: 300 }, { waba_id: '12ab' }]) {
    const r = await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'whatsapp', phone_number_id: c.phoneNumberId, access_token: c.accessToken, ...bad }, 422);
    assert.equal(r.detail[0].loc[1], Object.keys(bad)[0]);
  }

  const db = s.service.deps.database.db;
  const now = clock.now();
  const at = (ms: number) => new Date(ms).toISOString();
  await sql`INSERT INTO whatsapp_limit_counts (company_id, recipient, counted_at) VALUES
    (${c.companyId}, '+4915100000001', ${at(now - 25 * 3600_000)}::timestamptz),
    (${c.companyId}, '+4915100000002', ${at(now - 20 * 3600_000)}::timestamptz),
    (${c.companyId}, '+4915100000003', ${at(now - 3600_000)}::timestamptz)`.execute(db);
  await pauseChannel(db, c.companyId, '131048: spam rate limit hit', now);
  await sql`UPDATE whatsapp_channel_state SET quality_rating = 'YELLOW' WHERE company_id = ${c.companyId}`.execute(db);
  company = await s.admin('GET', `/admin/companies/${c.companyId}`);
  assert.deepEqual([company.channel.state, company.channel.paused_reason, company.channel.quality_rating], ['paused', '131048: spam rate limit hit', 'YELLOW']);
  assert.deepEqual([company.channel.messaging_limit_used, company.channel.messaging_limit_resets_at], [2, at(now + 4 * 3600_000)], 'the 25-h-old count is outside the window');

  const resumed = await s.admin('POST', `/admin/companies/${c.companyId}/channel/resume`, undefined, 200);
  assert.deepEqual([resumed.company_id, resumed.channel.state, resumed.channel.paused_reason], [c.companyId, 'active', null]);
  assert.equal((await s.admin('POST', `/admin/companies/${c.companyId}/channel/resume`, undefined, 200)).channel.state, 'active', 'resuming an active channel changes nothing');
  const outbox = await s.company();
  assert.match((await s.admin('POST', `/admin/companies/${outbox.companyId}/channel/resume`, undefined, 409)).detail, /not WhatsApp/);
  assert.equal((await s.admin('POST', '/admin/companies/2147480000/channel/resume', undefined, 404)).detail, 'Company not found');
  assert.deepEqual((await s.admin('GET', `/admin/companies/${outbox.companyId}`)).channel, { provider: 'outbox' });
});
