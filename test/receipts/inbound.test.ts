/**
 * Inbound WhatsApp messages and keyword opt-outs (docs/decisions.md#9-whatsapp-webhooks-in) and the contact view
 *: an inbound STOP opts the contact out (source `keyword`, the message's time), the
 * next campaign skips it (`skipped`, `opted_out`), an automation still reaches it, START opts it back
 * in; duplicates and late keywords change nothing; custom keywords and button payloads; operator changes
 * are recorded as `operator`; another company's contact is 404.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { postInbound, startFakeGraph, waButton, waText, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { completedBatch, messagesByPhone, receiptsSettled, TEMPLATE, whatsappCompany } from './helpers.ts';

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

const phoneOf = (r: number, i: number) => `+49152${String(r).padStart(5, '0')}${String(i).padStart(3, '0')}`;
const iso = (ms: number) => new Date(ms).toISOString();

async function campaignSend(companyId: number, key: string, campaignId: number, phones: string[]) {
  await s.admin('DELETE', `/admin/companies/${companyId}/rate-limits`, undefined, 204);
  const res = await s.api('/api/connector/send', { key, body: { campaign_id: campaignId, contacts: phones.map((phone) => ({ phone })) } });
  assert.equal(res.status, 200, res.text);
  const batchId = /\(batch ([0-9a-f-]{36})\)$/.exec(res.json.message)![1];
  await completedBatch(s, batchId);
  return messagesByPhone(s, batchId);
}

test('STOP opts out, campaigns skip, automations still reach, START opts back in; duplicates and late keywords change nothing', async () => {
  const c = await whatsappCompany(s, graph);
  await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true, provider: 'push' });
  const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'promo', template: TEMPLATE }, 201);
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const p = phoneOf(r, 1);
  const q = phoneOf(r, 2);
  const view = () => s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`);
  await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`, undefined, 404);

  const tStop = Date.parse('2026-03-02T08:00:00Z');
  const stop = waText(p.slice(1), '  Stop ', tStop);
  const res = await postInbound(s.url, c.appSecret, c.phoneNumberId, [stop, waText(q.slice(1), 'Hello, when is my order coming?', tStop + 1000)]);
  assert.equal(res.status, 200, res.text);
  const out = await eventually(async () => {
    const v = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`, undefined).catch(() => undefined);
    return v?.opted_out ? v : undefined;
  });
  assert.equal(out.phone, p, 'the contact was created with its E.164 number');
  assert.equal(out.opt_out_source, 'keyword');
  assert.equal(out.opt_out_at, iso(tStop));
  assert.equal(out.inbound.length, 1);
  assert.deepEqual(out.inbound[0], { provider_message_id: stop.id, type: 'text', text: '  Stop ', payload: null, received_at: iso(tStop) });
  // The national form of the number finds the same contact (default country DE).
  const national = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent('0' + p.slice(3))}`);
  assert.equal(national.contact_id, out.contact_id);
  const other = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(q)}`);
  assert.equal(other.opted_out, false, 'a question is not a keyword');
  assert.equal(other.inbound[0].text, 'Hello, when is my order coming?');

  // The next campaign skips the opted-out contact and sends to the other.
  const first = await campaignSend(c.companyId, c.key, campaign.campaign_id, [p, q]);
  assert.equal(first.get(p).status, 'skipped');
  assert.equal(first.get(p).reason, 'opted_out');
  assert.equal(first.get(q).status, 'sent');
  // An automation still reaches it (docs/api.md 4.3).
  const auto = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: [{ phone: p }] } });
  assert.equal(auto.status, 200, auto.text);
  await completedBatch(s, auto.json.batch_id);
  assert.equal((await messagesByPhone(s, auto.json.batch_id)).get(p).status, 'sent');

  // START (any case) opts it back in; the STOP delivered again, and an older STOP arriving late, change nothing.
  const tStart = tStop + 60_000;
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), 'start', tStart)])).status, 200);
  await eventually(async () => (await view()).opted_out === false);
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [stop])).status, 200);
  assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), 'STOP', tStop + 30_000)])).status, 200);
  await receiptsSettled(s);
  const back = await view();
  assert.equal(back.opted_out, false);
  assert.equal(back.opt_out_source, 'keyword');
  assert.equal(back.opt_out_at, iso(tStart));
  assert.equal(back.inbound.length, 3, 'the duplicate was stored once');
  assert.deepEqual(back.inbound.map((m: any) => m.received_at), [iso(tStart), iso(tStop + 30_000), iso(tStop)], 'newest first');
  assert.ok(back.messages.length >= 2, 'the messages sent to it are listed');
  assert.ok(back.messages.some((m: any) => m.status === 'skipped' && m.reason === 'opted_out'));

  const second = await campaignSend(c.companyId, c.key, campaign.campaign_id, [p]);
  assert.equal(second.get(p).status, 'sent');
});

test('custom keywords, button payloads; operator changes recorded as operator; foreign contacts 404', async () => {
  const c = await whatsappCompany(s, graph, { opt_out_keywords: ['Abmelden', ' stopp '], opt_in_keywords: ['ANMELDEN'] });
  const company = await s.admin('GET', `/admin/companies/${c.companyId}`);
  assert.deepEqual(company.opt_out_keywords, ['Abmelden', 'stopp']);
  assert.deepEqual(company.opt_in_keywords, ['ANMELDEN']);
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const p = phoneOf(r, 7);
  const url = `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`;
  const t = Date.parse('2026-03-03T09:00:00Z');
  // STOP is not a keyword of this company; a quick-reply button whose payload is one is.
  await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), 'STOP', t)]);
  await receiptsSettled(s);
  assert.equal((await eventually(() => s.admin('GET', url).catch(() => undefined))).opted_out, false);
  await postInbound(s.url, c.appSecret, c.phoneNumberId, [waButton(p.slice(1), 'ABMELDEN', 'Keine Werbung mehr', t + 1000)]);
  const out = await eventually(async () => { const v = await s.admin('GET', url); return v.opted_out ? v : undefined; });
  assert.equal(out.opt_out_source, 'keyword');
  assert.deepEqual({ type: out.inbound[0].type, text: out.inbound[0].text, payload: out.inbound[0].payload }, { type: 'button', text: 'Keine Werbung mehr', payload: 'ABMELDEN' });

  // PATCH changes the lists.
  const patched = await s.admin('PATCH', `/admin/companies/${c.companyId}`, { opt_in_keywords: ['YES'] });
  assert.deepEqual(patched.opt_in_keywords, ['YES']);
  await s.admin('PATCH', `/admin/companies/${c.companyId}`, { opt_in_keywords: [''] }, 422);

  // The operator opts it back in: source operator, a new time; setting the same value changes nothing.
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, opted_out: false }] });
  const op = await s.admin('GET', url);
  assert.equal(op.opted_out, false);
  assert.equal(op.opt_out_source, 'operator');
  assert.ok(op.opt_out_at && op.opt_out_at !== out.opt_out_at);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, opted_out: false, first_name: 'Ada' }] });
  const same = await s.admin('GET', url);
  assert.equal(same.opt_out_at, op.opt_out_at);
  assert.equal(same.first_name, 'Ada');

  // Another company sees nothing of it; unknown and malformed numbers are 404.
  const { companyId: otherId } = await s.company();
  await s.admin('GET', `/admin/companies/${otherId}/contacts/${encodeURIComponent(p)}`, undefined, 404);
  await s.admin('GET', `/admin/companies/${c.companyId}/contacts/not-a-phone`, undefined, 404);
  await s.admin('GET', `/admin/companies/999999999/contacts/${encodeURIComponent(p)}`, undefined, 404);
});
