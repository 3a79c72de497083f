/**
 * Empty WhatsApp parameters (docs/whatsapp.md "Empty parameters"), through the real server and workers
 * against the fake Graph API:
 * - a campaign whose body parameters are `{{ first_name }}` and `{{ variables.code }}`: the recipients
 *   without a first name, or whose code is white space only, end `skipped` / `empty_parameter` at the
 *   fan-out, their `error` naming the variable (GET /admin/batches/{id}/messages and the
 *   `message.skipped` event), and Meta gets no request for them; the others are sent;
 * - the same audience with `default` filters: nobody is skipped;
 * - the send path's safety net: a message fanned out while the channel was not WhatsApp (so not
 *   checked then) and delivered once it is, is skipped with the same reason, without a request;
 * - render.ts's `emptyParameters` names header, body and button parameters.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { compileTemplate, describeEmptyParameters, emptyParameters, previewEmptyParameters, renderMessage, renderPreview } from '../../src/domain/render.ts';
import { normaliseTemplate } from '../../src/domain/templates.ts';
import { graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { addEndpoint } from '../events/helpers.ts';
import { completed, messagesOf, startPipelineServer } from '../pipeline/helpers.ts';

const clock = new FakeClock(Date.now());
let s: TestServer;
let graph: FakeGraph;
let receiver: WebhookReceiver;

before(async () => {
  s = await startPipelineServer('empty_parameter', { clock });
  graph = await startFakeGraph();
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await receiver.close();
});

const db = () => s.service.deps.database.db;
let run = Math.floor(Math.random() * 80_000) + 10_000;
/** Distinct numbers for one test. */
function phones(n: number): string[] {
  run++;
  return Array.from({ length: n }, (_, i) => `+49159${String(run).padStart(5, '0')}${String(i).padStart(3, '0')}`);
}
const requestsTo = (phone: string) => graph.requests.filter((r) => r.kind === 'messages' && r.body?.to === phone.slice(1));

/** `greeting` (en): two body parameters, approved. */
const GREETING = [graphTemplate('greeting', 'en', { body: 2 })];

async function eventsOf(companyId: number, type: string): Promise<any[]> {
  const { rows } = await sql<{ payload: any }>`SELECT payload FROM events WHERE company_id = ${companyId} AND type = ${type} ORDER BY created_at`.execute(db());
  return rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload));
}

test('a campaign: recipients whose parameter renders empty are skipped, empty_parameter, named; Meta gets nothing for them; default filters skip nobody', async () => {
  const c = await whatsappCompany(s, graph, { templates: GREETING });
  await addEndpoint(s, receiver, c.companyId, `/ep-${c.companyId}`, ['message.skipped']);
  const [ada, nameless, blankCode, dee] = phones(4);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [
    { phone: ada, first_name: 'Ada', variables: { code: 'A-1' } },
    { phone: nameless, variables: { code: 'B-2' } },
    { phone: blankCode, first_name: 'Cy', variables: { code: '  \t' } },
    { phone: dee, first_name: 'Dee', variables: { code: 'D-4' } },
  ] });
  const everyone = [ada, nameless, blankCode, dee];

  const plain = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'plain', template: { body: 'Hi {{ first_name }}, your code is {{ variables.code }}.', whatsapp: { name: 'greeting', language: 'en' } } }, 201);
  const first = await s.admin('POST', `/admin/campaigns/${plain.campaign_id}/sends`, { contacts: everyone }, 202);
  const batch = await completed(s, first.batch_id);
  assert.deepEqual(batch.counts, { total: 4, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 2, pending: 0 });
  const byPhone = new Map((await messagesOf(s, first.batch_id)).map((m) => [m.phone, m]));
  const view = (p: string) => { const m = byPhone.get(p); return [m.status, m.reason ?? null, m.error ?? null, m.attempts]; };
  assert.deepEqual(view(nameless), ['skipped', 'empty_parameter', 'first_name is empty: the WhatsApp body parameter {{1}} ({{ first_name }}) would be empty', 0]);
  assert.deepEqual(view(blankCode), ['skipped', 'empty_parameter', 'code is empty: the WhatsApp body parameter {{2}} ({{ variables.code }}) would be empty', 0], 'white space only counts as empty');
  assert.deepEqual(byPhone.get(nameless).rendered.whatsapp.body_parameters, ['', 'B-2'], 'what would have been sent is kept');
  for (const p of [ada, dee]) assert.deepEqual(view(p), ['sent', null, null, 1]);
  assert.equal(requestsTo(nameless).length + requestsTo(blankCode).length, 0, 'Meta got no request for them');
  assert.deepEqual(requestsTo(ada).map((r) => r.body.template.components), [[{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'A-1' }] }]]);
  assert.equal(requestsTo(dee).length, 1);

  const skipped = await eventually(async () => {
    const events = (await eventsOf(c.companyId, 'message.skipped')).filter((e) => e.data.batch_id === first.batch_id);
    return events.length === 2 ? events : undefined;
  }, 10_000);
  const event = skipped.find((e) => e.data.phone === nameless)!;
  assert.equal(event.data.reason, 'empty_parameter');
  assert.equal(event.data.error, 'first_name is empty: the WhatsApp body parameter {{1}} ({{ first_name }}) would be empty', 'the event names the variable');

  clock.set(clock.now() + 10_000); // past the pair rate (WHATSAPP_PAIR_INTERVAL) of the first send
  const withDefaults = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'defaults', template: { body: 'Hi {{ first_name | default: "there" }}, your code is {{ variables.code | strip | default: "none" }}.', whatsapp: { name: 'greeting', language: 'en' } } }, 201);
  const second = await s.admin('POST', `/admin/campaigns/${withDefaults.campaign_id}/sends`, { contacts: everyone }, 202);
  assert.deepEqual((await completed(s, second.batch_id)).counts, { total: 4, sent: 4, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  const sent = requestsTo(nameless).map((r) => r.body.template.components[0].parameters);
  assert.deepEqual(sent, [[{ type: 'text', text: 'there' }, { type: 'text', text: 'B-2' }]]);
  assert.deepEqual(requestsTo(blankCode).map((r) => r.body.template.components[0].parameters), [[{ type: 'text', text: 'Cy' }, { type: 'text', text: 'none' }]]);
});

test('the send path skips a message with an empty parameter that the fan-out did not check (channel not WhatsApp then)', async () => {
  const c = await whatsappCompany(s, graph, { templates: GREETING });
  const [ok, nameless] = phones(2);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: ok, first_name: 'Ok', variables: { code: 'C' } }, { phone: nameless, variables: { code: 'C' } }] });
  const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'later', template: { body: 'Hi {{ first_name }} {{ variables.code }}', whatsapp: { name: 'greeting', language: 'en' } } }, 201);
  const channel = (await s.admin('GET', `/admin/companies/${c.companyId}`)).channel;
  // Fanned out while the channel is the outbox: held until the scheduled time, nothing checked.
  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, { provider: 'outbox' });
  const at = clock.now() + 3600_000;
  const send = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [ok, nameless], scheduled_for: new Date(at).toISOString() }, 202);
  const held = await eventually(async () => {
    const ms = await messagesOf(s, send.batch_id);
    return ms.length === 2 ? ms : undefined;
  }, 10_000);
  assert.deepEqual(held.map((m) => [m.status, m.reason ?? null]), [['pending', null], ['pending', null]], 'another channel sends the mapping as data: not skipped at the fan-out');

  await s.admin('PUT', `/admin/companies/${c.companyId}/channel`, {
    provider: 'whatsapp', phone_number_id: c.phoneNumberId, waba_id: c.wabaId, access_token: c.accessToken, api_base_url: channel.api_base_url,
    app_secret: c.appSecret, verify_token: c.verifyToken,
  });
  clock.set(at);
  await s.service.workers!.sweepNow();
  assert.deepEqual((await completed(s, send.batch_id)).counts, { total: 2, sent: 1, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
  const byPhone = new Map((await messagesOf(s, send.batch_id)).map((m) => [m.phone, m]));
  assert.deepEqual([byPhone.get(nameless).status, byPhone.get(nameless).reason, byPhone.get(nameless).attempts], ['skipped', 'empty_parameter', 0]);
  assert.equal(byPhone.get(ok).status, 'sent');
  assert.equal(requestsTo(nameless).length, 0, 'never sent to Meta');
  assert.equal(requestsTo(ok).length, 1);
});

test('emptyParameters names the header, body and button parameters that render empty (or white space only)', () => {
  const template = normaliseTemplate({
    header: { type: 'text', text: 'Hello {{ variables.city }}' },
    body: '{{ first_name | upcase }} {{ "x" }} {{ last_name | default: nick }} {{ "  " }}',
    buttons: [{ type: 'url', text: 'Go', url: 'https://e.com/' }],
    whatsapp: { name: 't', language: 'en' },
  });
  const compiled = compileTemplate(template);
  const r = renderMessage(compiled, {
    message_id: 'm', batch_id: 'b', company_id: 1, kind: 'campaign', source_id: 1,
    contact: { phone: '+4915112345678', first_name: null, last_name: null, variables: { city: ' ' } },
    overrides: { url: 'https://e.com/ ' },
  });
  const empty = emptyParameters(compiled, r.whatsapp!);
  assert.deepEqual(empty, [
    { component: 'header', index: 1, source: '{{ variables.city }}', variables: ['city'] },
    { component: 'body', index: 1, source: '{{ first_name | upcase }}', variables: ['first_name'] },
    { component: 'body', index: 3, source: '{{ last_name | default: nick }}', variables: ['last_name', 'nick'] },
    { component: 'body', index: 4, source: '{{ "  " }}', variables: [] },
    { component: 'button', index: 1, source: 'url', variables: ['url'] },
  ]);
  assert.equal(describeEmptyParameters(empty.slice(2)), 'last_name, nick are empty: the WhatsApp body parameter {{3}} ({{ last_name | default: nick }}) would be empty; '
    + 'the WhatsApp body parameter {{4}} ({{ "  " }}) would be empty; url is empty: the WhatsApp button 1 parameter (url) would be empty');
  // The editor's preview: the same names, from the template and its preview.
  const preview = renderPreview(template, { phone: '+4915112345678', first_name: 'Kim', last_name: 'Lee', variables: { city: 'Oslo' } });
  assert.deepEqual(previewEmptyParameters(template, preview), [{ component: 'body', index: 4, source: '{{ "  " }}', variables: [] }]);
  assert.deepEqual(previewEmptyParameters(normaliseTemplate({ body: '{{ first_name }}' }), renderPreview(normaliseTemplate({ body: '{{ first_name }}' }), { phone: '+4915112345678', first_name: null, last_name: null, variables: null })), [], 'no mapping: no WhatsApp parameters');
});
