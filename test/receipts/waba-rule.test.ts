/**
 * The WABA rule of WhatsApp webhooks (docs/whatsapp.md "What the service does with a webhook"): an
 * entry that names a phone number must name that number's WhatsApp Business Account in `entry[].id`,
 * and the signature must verify with the app secret of every channel of every WABA the payload names.
 * A payload breaking it is 401 `{"detail":"Invalid signature"}` and nothing of it is applied, to
 * anyone: neither statuses nor inbound messages (a STOP opts nobody out), not even its valid entries.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { changeValue, graphTemplate, postPayload, startFakeGraph, waStatus, waText, webhookPayload, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany as syncedWhatsappCompany } from '../helpers/whatsapp.ts';
import { wabaBelongs } from '../../src/http/webhooks/whatsapp-receive.ts';
import { messagesByPhone, receiptsSettled, sendAndComplete, TEMPLATE, type WaCompany } from './helpers.ts';

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

const REFUSED = { detail: 'Invalid signature' };
const run = () => Math.floor(Math.random() * 90_000) + 10_000;
const phoneOf = (r: number, i: number) => `+49152${String(r).padStart(5, '0')}${String(i).padStart(3, '0')}`;

/** A WhatsApp company (its own WABA; `appSecret` when given, e.g. shared by a BSP's companies) with an automation of TEMPLATE. */
async function company(appSecret?: string): Promise<WaCompany & { wabaId: string }> {
  const c = await syncedWhatsappCompany(s, graph, {
    templates: [graphTemplate('order_shipped', 'en_US', { body: 1 })], ...(appSecret ? { channel: { app_secret: appSecret } } : {}),
  });
  const a = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'wa', type: 'api', active: true, template: TEMPLATE }, 201);
  return { ...c, appSecret: appSecret ?? c.appSecret, automationId: a.automation_id };
}

/** The contact as the operator API shows it, or undefined when there is none. */
async function contact(companyId: number, phone: string): Promise<any> {
  try {
    return await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phone)}`, undefined, 200);
  } catch (err) {
    if (/answered 404/.test(String(err))) return undefined;
    throw err;
  }
}

test('wabaBelongs: the channel\'s own WABA; without one, only a WABA no channel has', () => {
  assert.equal(wabaBelongs('111', '111', new Set()), true);
  assert.equal(wabaBelongs('222', '111', new Set()), false);
  assert.equal(wabaBelongs('222', '111', new Set(['222'])), false);
  assert.equal(wabaBelongs('333', null, new Set()), true);
  assert.equal(wabaBelongs('333', null, new Set(['333'])), false);
});

test('signed with A\'s secret, A\'s number under B\'s WABA: 401, nothing applied; under A\'s own WABA the same statuses apply', async () => {
  const a = await company();
  const b = await company();
  const r = run();
  const phones = [phoneOf(r, 1)];
  const { batchId, wamids } = await sendAndComplete(s, graph, a, phones);
  const delivered = [waStatus(wamids.get(phones[0])!, 'delivered', phones[0].slice(1), Date.parse('2026-03-01T10:00:05Z'))];

  const foreign = await postPayload(s.url, a.appSecret, webhookPayload([changeValue(a.phoneNumberId, { statuses: delivered })], b.wabaId));
  assert.equal(foreign.status, 401, foreign.text);
  assert.deepEqual(foreign.json, REFUSED);
  // A's number under a WABA nobody here has: A's channel names its own WABA, so this is refused too.
  const unknown = await postPayload(s.url, a.appSecret, webhookPayload([changeValue(a.phoneNumberId, { statuses: delivered })], '1029384756'));
  assert.equal(unknown.status, 401, unknown.text);
  await receiptsSettled(s);
  assert.equal((await messagesByPhone(s, batchId)).get(phones[0]).status, 'sent', 'a refused payload changes nothing');

  const own = await postPayload(s.url, a.appSecret, webhookPayload([changeValue(a.phoneNumberId, { statuses: delivered })], a.wabaId));
  assert.equal(own.status, 200, own.text);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phones[0]).status === 'delivered');
});

test('one app secret shared by two companies (BSP): A\'s number under B\'s WABA is 401; a STOP in it opts nobody out, a status changes nothing', async () => {
  const shared = 'bsp-app-secret-' + Math.random().toString(36).slice(2);
  const a = await company(shared);
  const b = await company(shared);
  const r = run();
  const [p, q] = [phoneOf(r, 1), phoneOf(r, 2)];
  const { batchId, wamids } = await sendAndComplete(s, graph, a, [p]);
  const t = Date.parse('2026-03-02T08:00:00Z');
  const value = changeValue(a.phoneNumberId, { statuses: [waStatus(wamids.get(p)!, 'read', p.slice(1), t)], messages: [waText(p.slice(1), 'STOP', t + 1000), waText(q.slice(1), 'STOP', t + 2000)] });

  const res = await postPayload(s.url, shared, webhookPayload([value], b.wabaId));
  assert.equal(res.status, 401, res.text);
  assert.deepEqual(res.json, REFUSED);
  await receiptsSettled(s);
  assert.equal((await messagesByPhone(s, batchId)).get(p).status, 'sent');
  assert.equal((await contact(a.companyId, p))?.opted_out ?? false, false, 'A\'s contact is not opted out');
  assert.equal(await contact(a.companyId, q), undefined, 'no contact made for A');
  assert.equal(await contact(b.companyId, q), undefined, 'nor for B');

  // The same value under A's WABA is A's.
  const ok = await postPayload(s.url, shared, webhookPayload([value], a.wabaId));
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json, { statuses: 1, messages: 2 });
  await eventually(async () => (await contact(a.companyId, q))?.opted_out === true);
  assert.equal(await contact(b.companyId, q), undefined);
});

test('one entry under its own WABA and one under another: the whole payload is 401 and its valid entry is not applied', async () => {
  const shared = 'bsp-app-secret-' + Math.random().toString(36).slice(2);
  const a = await company(shared);
  const b = await company(shared);
  const r = run();
  const [pa, pb] = [phoneOf(r, 1), phoneOf(r, 2)];
  const t = Date.parse('2026-03-02T09:00:00Z');
  const body = {
    object: 'whatsapp_business_account',
    entry: [
      { id: b.wabaId, changes: [{ field: 'messages', value: changeValue(b.phoneNumberId, { messages: [waText(pb.slice(1), 'STOP', t)] }) }] },
      { id: b.wabaId, changes: [{ field: 'messages', value: changeValue(a.phoneNumberId, { messages: [waText(pa.slice(1), 'STOP', t)] }) }] },
    ],
  };
  const res = await postPayload(s.url, shared, body);
  assert.equal(res.status, 401, res.text);
  assert.deepEqual(res.json, REFUSED);
  await receiptsSettled(s);
  assert.equal(await contact(b.companyId, pb), undefined, 'B\'s valid entry is not applied either');
  assert.equal(await contact(a.companyId, pa), undefined);
  body.entry[1].id = a.wabaId;
  const ok = await postPayload(s.url, shared, body);
  assert.equal(ok.status, 200, ok.text);
  await eventually(async () => (await contact(b.companyId, pb))?.opted_out === true && (await contact(a.companyId, pa))?.opted_out === true);
});

test('a channel without waba_id: an entry id that is no channel\'s WABA applies, another company\'s WABA is 401; an id that is not digits is 400', async () => {
  const shared = 'bsp-app-secret-' + Math.random().toString(36).slice(2);
  const b = await company(shared);
  const a = await syncedWhatsappCompany(s, graph, { channel: { app_secret: shared, waba_id: undefined }, noSync: true });
  assert.equal((await s.admin('GET', `/admin/companies/${a.companyId}`)).channel.waba_id ?? null, null, 'the channel has no WABA');
  const r = run();
  const [p, q] = [phoneOf(r, 1), phoneOf(r, 2)];
  const t = Date.parse('2026-03-02T10:00:00Z');
  const stop = (phone: string) => changeValue(a.phoneNumberId, { messages: [waText(phone.slice(1), 'STOP', t)] });

  const foreign = await postPayload(s.url, shared, webhookPayload([stop(p)], b.wabaId));
  assert.equal(foreign.status, 401, foreign.text);
  assert.deepEqual(foreign.json, REFUSED);
  const letters = await postPayload(s.url, shared, webhookPayload([stop(p)], 'waba-' + b.wabaId));
  assert.equal(letters.status, 400, letters.text);
  assert.match(letters.json.detail, /entry\[0\]\.id must be the digits of a WhatsApp Business Account/);
  await receiptsSettled(s);
  assert.equal(await contact(a.companyId, p), undefined, 'nothing applied');

  const nobodys = await postPayload(s.url, shared, webhookPayload([stop(q)], '1029384756'));
  assert.equal(nobodys.status, 200, nobodys.text);
  await eventually(async () => (await contact(a.companyId, q))?.opted_out === true);
});
