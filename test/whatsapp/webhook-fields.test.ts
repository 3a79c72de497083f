/**
 * Every Meta webhook field through POST /webhooks/whatsapp (docs/whatsapp.md "Webhook fields"):
 * template status / quality / category changes reach every company of the WABA (whatsapp.template.updated
 * events; APPROVED releases messages waiting for a paused template), phone number quality and messaging
 * limit, account_update bans and restrictions pause every channel of the WABA (channel.paused), any other
 * field is answered 200 and counted; WABA routing and signatures (401, nothing written), malformed
 * account-level changes (400, nothing written, never a 5xx).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { changeValue, graphTemplate, hubSignature, postPayload, startFakeGraph, webhookPayload, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { addEndpoint, until } from '../events/helpers.ts';
import { receiptsSettled, sendAndComplete } from '../receipts/helpers.ts';
import {
  accountPayload, changesCounted, channelOf, postAccount, randomWabaId, templateRow, templateStatus, wabaCompany,
} from './webhook-helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let events: WebhookReceiver;
const clock = new FakeClock();

before(async () => {
  s = await startPipelineServer('wa_webhook_fields', { clock });
  graph = await startFakeGraph();
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await events.close();
});

const templateId = () => String(1_000_000_000_000_000 + Math.floor(Math.random() * 1e15));
const body = (path: string, type: string) => [...events.delivered(path).values()].map((v) => v[0].body).filter((b) => b.type === type);

test('template status, quality and category: applied to every company of the WABA, events written, APPROVED releases template_paused waits', async () => {
  const wabaId = randomWabaId();
  const secret = 'shared-app-secret-' + Math.random().toString(36).slice(2);
  const promo = { id: templateId(), name: 'spring_sale', language: 'de' };
  const templates = () => [graphTemplate('order_shipped', 'en_US', { body: 1 }), graphTemplate(promo.name, promo.language, { id: promo.id, category: 'MARKETING', quality: 'GREEN', body: 1 })];
  const a = await wabaCompany(s, graph, { wabaId, appSecret: secret, automation: true, templates: templates() });
  const b = await wabaCompany(s, graph, { wabaId, appSecret: secret });
  const other = await wabaCompany(s, graph, { wabaId: randomWabaId(), appSecret: secret, templates: templates() });
  assert.equal((await templateRow(s, b.companyId, promo.id)).quality_score, 'GREEN', 'synced');
  // Company b's copy has an older id for the same template: found by name and language.
  const bOld = templateId();
  await sql`UPDATE whatsapp_templates SET template_id = ${bOld} WHERE company_id = ${b.companyId} AND template_id = ${promo.id}`.execute(s.service.deps.database.db);
  const path = `/tpl-${a.companyId}`;
  await addEndpoint(s, events, a.companyId, path, ['whatsapp.template.updated']);

  // Two messages of company a wait: one for the paused template, one for the pair rate.
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const phones = [`+49155${r}001`, `+49155${r}002`];
  const sent = await sendAndComplete(s, graph, { ...a, automationId: a.automationId!, verifyToken: '' }, phones);
  const far = new Date(clock.now() + 3 * 24 * 3600 * 1000).toISOString();
  const db = s.service.deps.database.db;
  const waiting = async () => (await sql<{ phone: string; held_until: Date | null; reason: string }>`
    SELECT phone, held_until, reason FROM messages WHERE batch_id = ${sent.batchId} ORDER BY phone`.execute(db)).rows;
  await sql`UPDATE messages SET status = 'pending', held_until = ${far}::timestamptz,
    reason = CASE WHEN phone = ${phones[0]} THEN 'template_paused' ELSE 'pair_rate' END WHERE batch_id = ${sent.batchId}`.execute(db);

  // PAUSED (Meta's quality pause): status and no release; then the quality drops, the category changes.
  let res = await postAccount(s.url, secret, [{ wabaId, field: 'message_template_status_update', value: templateStatus('PAUSED', promo) }]);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { statuses: 0, messages: 0 });
  await eventually(async () => (await templateRow(s, a.companyId, promo.id)).status === 'PAUSED');
  await eventually(async () => (await templateRow(s, b.companyId, bOld))?.status === 'PAUSED');
  res = await postAccount(s.url, secret, [
    { wabaId, field: 'message_template_quality_update', value: { previous_quality_score: 'GREEN', new_quality_score: 'RED', message_template_id: Number(promo.id), message_template_name: promo.name, message_template_language: promo.language } },
    { wabaId, field: 'template_category_update', value: { message_template_id: Number(promo.id), message_template_name: promo.name, message_template_language: promo.language, previous_category: 'MARKETING', new_category: 'UTILITY' } },
  ]);
  assert.equal(res.status, 200, res.text);
  await receiptsSettled(s);
  assert.ok((await waiting()).every((m) => m.held_until && new Date(m.held_until).toISOString() === far), 'PAUSED releases nothing');
  const paused = await templateRow(s, a.companyId, promo.id);
  assert.deepEqual([paused.status, paused.quality_score, paused.category, paused.rejected_reason], ['PAUSED', 'RED', 'UTILITY', null]);
  assert.equal((await templateRow(s, b.companyId, bOld)).quality_score, 'RED');
  assert.equal((await templateRow(s, other.companyId, promo.id)).status, 'APPROVED', 'another WABA is not touched');

  // REINSTATED (approved again): the message waiting for a paused template is released, the other not.
  res = await postAccount(s.url, secret, [{ wabaId, field: 'message_template_status_update', value: templateStatus('REINSTATED', promo) }]);
  assert.equal(res.status, 200, res.text);
  await eventually(async () => (await templateRow(s, a.companyId, promo.id)).status === 'APPROVED');
  await receiptsSettled(s);
  const after = await waiting();
  const released = after.find((m) => m.phone === phones[0])!;
  // Released: no longer held until `far`. The workers' sweep may already have tried it again, and the
  // pair rate (it went to the same person moments ago) then holds it a few seconds.
  assert.ok(released.held_until === null || new Date(released.held_until).getTime() < Date.parse(far), `released: ${released.held_until}`);
  assert.equal(new Date(after.find((m) => m.phone === phones[1])!.held_until!).toISOString(), far, 'a message waiting for something else still waits');

  // REJECTED keeps the reason; an older change arriving late (before the copy was synced) changes nothing.
  res = await postAccount(s.url, secret, [{ wabaId, field: 'message_template_status_update', value: templateStatus('REJECTED', promo, 'INVALID_FORMAT') }]);
  assert.equal(res.status, 200);
  await eventually(async () => (await templateRow(s, a.companyId, promo.id)).rejected_reason === 'INVALID_FORMAT');
  res = await postAccount(s.url, secret, [{ wabaId, field: 'message_template_status_update', value: templateStatus('APPROVED', promo), time: Math.floor(Date.parse('2025-06-01T00:00:00Z') / 1000) }]);
  assert.equal(res.status, 200);
  await receiptsSettled(s);
  assert.equal((await templateRow(s, a.companyId, promo.id)).status, 'REJECTED');

  // One whatsapp.template.updated per change of company a: PAUSED, quality, category, APPROVED, REJECTED.
  await until(() => body(path, 'whatsapp.template.updated').length >= 5);
  const got = body(path, 'whatsapp.template.updated');
  assert.equal(got.length, 5, JSON.stringify(got.map((e) => e.data)));
  assert.ok(got.every((e) => e.data.template_id === promo.id && e.data.name === promo.name && e.data.language === promo.language));
  assert.deepEqual(new Set(got.map((e) => `${e.data.status}/${e.data.quality_score}/${e.data.category}`)),
    new Set(['PAUSED/GREEN/MARKETING', 'PAUSED/RED/MARKETING', 'PAUSED/RED/UTILITY', 'APPROVED/RED/UTILITY', 'REJECTED/RED/UTILITY']));
  const rejected = got.find((e) => e.data.status === 'REJECTED');
  assert.equal(rejected.data.rejected_reason, 'INVALID_FORMAT');
  assert.deepEqual(Object.keys(rejected.data).sort(), ['category', 'components', 'language', 'name', 'parameters', 'quality_score', 'rejected_reason', 'status', 'synced_at', 'template_id']);
  assert.ok(await changesCounted(s, 'message_template_status_update', 'applied') >= 4);
});

test('phone_number_quality_update: quality rating and the messaging limit Meta names, for every channel of the WABA', async () => {
  const wabaId = randomWabaId();
  const secret = 'limit-secret-' + Math.random().toString(36).slice(2);
  const a = await wabaCompany(s, graph, { wabaId, appSecret: secret });
  const b = await wabaCompany(s, graph, { wabaId, appSecret: secret });
  const post = async (value: Record<string, unknown>) => {
    const res = await postAccount(s.url, secret, [{ wabaId, field: 'phone_number_quality_update', value: { display_phone_number: '15550783881', ...value } }]);
    assert.equal(res.status, 200, res.text);
    await receiptsSettled(s);
  };
  await post({ event: 'FLAGGED', current_limit: 'TIER_2K' });
  for (const c of [a, b]) {
    const channel = await channelOf(s, c.companyId);
    assert.equal(channel.quality_rating, 'FLAGGED');
    assert.equal(channel.state, 'active', 'a flag does not pause');
    assert.equal(channel.messaging_limit, 2000);
    assert.equal(channel.phone_number_id, c.phoneNumberId, 'the rest of the channel is kept');
    assert.equal(channel.waba_id, wabaId);
  }
  // max_daily_conversations_per_business (Meta's newer field) wins over current_limit.
  await post({ event: 'UPGRADE', old_limit: 'TIER_2K', current_limit: 'TIER_10K', max_daily_conversations_per_business: 'TIER_100K' });
  assert.equal((await channelOf(s, a.companyId)).messaging_limit, 100_000);
  assert.equal((await channelOf(s, a.companyId)).quality_rating, 'FLAGGED', 'a limit event keeps the rating');
  await post({ event: 'UNFLAGGED', current_limit: 'TIER_UNLIMITED' });
  assert.equal((await channelOf(s, b.companyId)).messaging_limit, null);
  assert.equal((await channelOf(s, b.companyId)).quality_rating, 'UNFLAGGED');
  // TIER_1K (Meta's former tier) becomes 250; TIER_50 and TIER_NOT_SET leave the limit as it is.
  await post({ event: 'DOWNGRADE', current_limit: 'TIER_1K' });
  assert.equal((await channelOf(s, a.companyId)).messaging_limit, 250);
  await post({ event: 'UPGRADE', current_limit: 'TIER_10K' });
  await post({ event: 'DOWNGRADE', current_limit: 'TIER_50' });
  await post({ event: 'ONBOARDING', current_limit: 'TIER_NOT_SET' });
  assert.equal((await channelOf(s, a.companyId)).messaging_limit, 10_000);
});

test('account_update: a ban or a restriction of business-initiated messages pauses every channel of the WABA, once; other events change nothing', async () => {
  const wabaId = randomWabaId();
  const secret = 'ban-secret-' + Math.random().toString(36).slice(2);
  const a = await wabaCompany(s, graph, { wabaId, appSecret: secret });
  const b = await wabaCompany(s, graph, { wabaId, appSecret: secret });
  const c = await wabaCompany(s, graph, { wabaId: randomWabaId(), appSecret: secret });
  const paths = [a, b, c].map((x) => `/ban-${x.companyId}`);
  for (const [i, x] of [a, b, c].entries()) await addEndpoint(s, events, x.companyId, paths[i], ['channel.paused', 'channel.resumed']);

  const harmless = [
    { event: 'ACCOUNT_VIOLATION', violation_info: { violation_type: 'ADULT' } },
    { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'REINSTATE', waba_ban_date: 'April 17, 2026' } },
    { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'SCHEDULE_FOR_DISABLE', waba_ban_date: 'April 17, 2026' } },
    { event: 'ACCOUNT_RESTRICTION', restriction_info: [{ restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: 1893456000 }] },
    { event: 'PARTNER_ADDED', waba_info: { waba_id: wabaId, owner_business_id: '2329417887457253' } },
  ];
  const before = await changesCounted(s, 'account_update', 'ignored');
  const res = await postAccount(s.url, secret, harmless.map((value) => ({ wabaId, field: 'account_update', value })));
  assert.equal(res.status, 200, res.text);
  await receiptsSettled(s);
  assert.equal((await channelOf(s, a.companyId)).state, 'active');
  assert.equal(await changesCounted(s, 'account_update', 'ignored'), before + harmless.length);

  const ban = { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: 'April 17, 2026' } };
  for (let i = 0; i < 2; i++) assert.equal((await postAccount(s.url, secret, [{ wabaId, field: 'account_update', value: ban }])).status, 200);
  await receiptsSettled(s);
  for (const x of [a, b]) {
    const channel = await channelOf(s, x.companyId);
    assert.equal(channel.state, 'paused');
    assert.equal(channel.paused_reason, 'account_update: DISABLED_UPDATE (DISABLE)');
  }
  assert.equal((await channelOf(s, c.companyId)).state, 'active', 'another WABA stays active');
  // A restriction after the ban keeps the first reason; a paused channel is paused once.
  const restriction = { event: 'ACCOUNT_RESTRICTION', restriction_info: [{ restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: 1893456000 }] };
  assert.equal((await postAccount(s.url, secret, [{ wabaId, field: 'account_update', value: restriction }])).status, 200);
  await receiptsSettled(s);
  assert.equal((await channelOf(s, a.companyId)).paused_reason, 'account_update: DISABLED_UPDATE (DISABLE)');

  await until(() => body(paths[0], 'channel.paused').length >= 1 && body(paths[1], 'channel.paused').length >= 1);
  for (const [i, x] of [a, b].entries()) {
    const got = body(paths[i], 'channel.paused');
    assert.equal(got.length, 1);
    assert.deepEqual(got[0].data, { company_id: x.companyId, reason: 'account_update: DISABLED_UPDATE (DISABLE)' });
  }
  assert.equal(events.delivered(paths[2]).size, 0);

  // A restriction of business-initiated messages pauses a channel too.
  assert.equal((await postAccount(s.url, secret, [{ wabaId: c.wabaId, field: 'account_update', value: restriction }])).status, 200);
  await receiptsSettled(s);
  assert.equal((await channelOf(s, c.companyId)).paused_reason, 'account_update: ACCOUNT_RESTRICTION (RESTRICTED_BIZ_INITIATED_MESSAGING)');
  await until(() => body(paths[2], 'channel.paused').length === 1);

  // The operator resumes a channel (channel.resumed); a reinstatement alone does not.
  assert.equal((await postAccount(s.url, secret, [{ wabaId, field: 'account_update', value: harmless[1] }])).status, 200);
  await receiptsSettled(s);
  assert.equal((await channelOf(s, a.companyId)).state, 'paused');
  await s.admin('POST', `/admin/companies/${a.companyId}/channel/resume`);
  assert.equal((await channelOf(s, a.companyId)).state, 'active');
  await until(() => body(paths[0], 'channel.resumed').length === 1);
});

test('any other field is answered 200 and counted by name (unknown names as `other`), nothing else changes', async () => {
  const wabaId = randomWabaId();
  const c = await wabaCompany(s, graph, { wabaId });
  const counts = async () => Promise.all([
    changesCounted(s, 'security', 'ignored'), changesCounted(s, 'other', 'ignored'), changesCounted(s, 'message_echoes', 'ignored'),
    changesCounted(s, 'message_template_status_update', 'ignored'),
  ]);
  const before = await counts();
  const payload = {
    object: 'whatsapp_business_account',
    entry: [
      { id: wabaId, time: Math.floor(Date.now() / 1000), changes: [
        { field: 'security', value: { display_phone_number: '15550783881', event: 'PIN_CHANGED' } },
        { field: 'brand_new_field_2027', value: { anything: [1, 2, 3] } },
        // A template event that names no status (the sync keeps the copy right).
        { field: 'message_template_status_update', value: templateStatus('FLAGGED', { id: '1689556908129835', name: 'x', language: 'en' }) },
      ] },
      { id: wabaId, changes: [{ field: 'message_echoes', value: changeValue(c.phoneNumberId, {}) }] },
    ],
  };
  const res = await postPayload(s.url, c.appSecret, payload);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(await counts(), before.map((n) => n + 1));
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'receipts-apply' AND data->>'company_id' = ${String(c.companyId)}`.execute(s.service.deps.database.db);
  assert.equal(Number(rows[0].n), 0, 'nothing to apply: no job');
  assert.equal((await channelOf(s, c.companyId)).state, 'active');
});

test('routing and signatures: a WABA no channel owns, a wrong secret, a WABA without app secret: 401 and nothing written', async () => {
  const wabaId = randomWabaId();
  const tpl = { id: templateId(), name: 'order_update', language: 'en_US' };
  const c = await wabaCompany(s, graph, { wabaId, templates: [graphTemplate(tpl.name, tpl.language, { id: tpl.id })] });
  const change = { wabaId, field: 'message_template_status_update', value: templateStatus('DISABLED', tpl) };
  const raw = JSON.stringify(accountPayload([change]));
  for (const [name, signature] of [['none', null], ['wrong secret', hubSignature('not-the-secret', raw)], ['another body', hubSignature(c.appSecret, raw + ' ')]] as const) {
    const res = await postPayload(s.url, c.appSecret, raw, { signature });
    assert.equal(res.status, 401, name);
    assert.deepEqual(res.json, { detail: 'Invalid signature' });
  }
  // A WABA no channel owns: nobody here can verify it (the same answer as an unknown phone_number_id).
  assert.equal((await postAccount(s.url, c.appSecret, [{ ...change, wabaId: randomWabaId() }])).status, 401);
  // A valid change together with one for an unknown WABA: 401, the valid one not applied either.
  assert.equal((await postAccount(s.url, c.appSecret, [change, { ...change, wabaId: randomWabaId() }])).status, 401);
  // A payload mixing a messages change of a number and the WABA change must verify with both.
  const stranger = await wabaCompany(s, graph, { wabaId: randomWabaId() });
  const mixed = { ...accountPayload([change]) };
  mixed.entry.push({ id: stranger.wabaId, time: 1, changes: [{ value: changeValue(stranger.phoneNumberId, { statuses: [] }) as never, field: 'messages' }] });
  assert.equal((await postPayload(s.url, c.appSecret, mixed)).status, 401);
  // A WABA whose only channel has no app secret cannot receive webhooks.
  const bare = await wabaCompany(s, graph, { wabaId: randomWabaId(), appSecret: null });
  assert.equal((await postAccount(s.url, 'any', [{ ...change, wabaId: bare.wabaId }])).status, 401);
  await receiptsSettled(s);
  assert.equal((await templateRow(s, c.companyId, tpl.id)).status, 'APPROVED');
  // Signed right, it applies.
  assert.equal((await postAccount(s.url, c.appSecret, [change])).status, 200);
  await eventually(async () => (await templateRow(s, c.companyId, tpl.id)).status === 'DISABLED');
});

test('malformed account-level changes: 400 with a detail, nothing written, never a 5xx', async () => {
  const wabaId = randomWabaId();
  const tpl = { id: templateId(), name: 'welcome', language: 'en' };
  const c = await wabaCompany(s, graph, { wabaId, templates: [graphTemplate(tpl.name, tpl.language, { id: tpl.id })] });
  const good = { wabaId, field: 'message_template_status_update', value: templateStatus('PAUSED', tpl) };
  const bad: { why: string; payload: object }[] = [
    { why: 'template event missing', payload: accountPayload([good, { ...good, value: { message_template_id: Number(tpl.id) } }]) },
    { why: 'template event not a word', payload: accountPayload([good, { ...good, value: { ...templateStatus('PAUSED', tpl), event: 'paused; drop' } }]) },
    { why: 'no template named', payload: accountPayload([good, { ...good, value: { event: 'APPROVED', message_template_name: 'welcome' } }]) },
    { why: 'template id not a number', payload: accountPayload([good, { ...good, value: { ...templateStatus('PAUSED', tpl), message_template_id: 'abc', message_template_name: null } }]) },
    { why: 'quality without score', payload: accountPayload([good, { wabaId, field: 'message_template_quality_update', value: { message_template_id: Number(tpl.id) } }]) },
    { why: 'category without category', payload: accountPayload([good, { wabaId, field: 'template_category_update', value: { message_template_id: Number(tpl.id), new_category: 7 } }]) },
    { why: 'phone quality without event', payload: accountPayload([good, { wabaId, field: 'phone_number_quality_update', value: { current_limit: 'TIER_2K' } }]) },
    { why: 'account_update without event', payload: accountPayload([good, { wabaId, field: 'account_update', value: { ban_info: { waba_ban_state: 'DISABLE' } } }]) },
    { why: 'value not an object', payload: accountPayload([good, { wabaId, field: 'account_update', value: 'DISABLED' }]) },
    { why: 'WABA id not digits', payload: accountPayload([good, { ...good, wabaId: 'waba-1' }]) },
    { why: 'field not a name', payload: accountPayload([good, { ...good, field: 'Message Template!' }]) },
  ];
  const db = s.service.deps.database.db;
  const jobs = async () => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'receipts-apply' AND data->>'company_id' = ${String(c.companyId)}`.execute(db)).rows[0].n);
  const jobsBefore = await jobs();
  for (const { why, payload } of bad) {
    const res = await postPayload(s.url, c.appSecret, payload);
    assert.equal(res.status, 400, `${why}: ${res.text}`);
    assert.equal(typeof res.json?.detail, 'string', why);
  }
  assert.equal(await jobs(), jobsBefore, 'nothing enqueued');
  assert.equal((await templateRow(s, c.companyId, tpl.id)).status, 'APPROVED', 'the valid change of a refused payload is not applied');
  // A message_template_status_update for a template the copy does not have: 200, nothing written.
  const unknown = await postAccount(s.url, c.appSecret, [{ ...good, value: templateStatus('PAUSED', { id: templateId(), name: 'not_here', language: 'en' }) }]);
  assert.equal(unknown.status, 200);
  await receiptsSettled(s);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM whatsapp_templates WHERE company_id = ${c.companyId}`.execute(db);
  assert.equal(Number(rows[0].n), 1);
  // The messages field keeps needing its phone number.
  const noNumber = await postPayload(s.url, c.appSecret, webhookPayload([{ messaging_product: 'whatsapp' } as never]));
  assert.equal(noNumber.status, 400);
});
