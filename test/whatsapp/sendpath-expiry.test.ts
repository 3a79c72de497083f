/**
 * Messages that expire (docs/whatsapp.md "Messages that expire"), through the real server and workers
 * with a FakeClock moved forward: an automation's `expire_after` stops its retries, a campaign message
 * held for delivery hours past its expiry ends skipped (outbox provider), a campaign send's `expire_at`
 * (checked: 422 when past, malformed or not after scheduled_for) ends a message Meta held (131049)
 * at its expiry instead of 24 h later. Nothing stale reaches a provider.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startFakeGraph, type FakeGraph, type GraphAnswer } from '../helpers/fake-graph.ts';
import { ADMIN_TOKEN, eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';

// The expiry counts from the batch's acceptance (database time): the clock starts at the real time.
const clock = new FakeClock(Date.now());
let s: TestServer;
let graph: FakeGraph;

before(async () => {
  s = await startPipelineServer('sendpath_expiry', { clock, env: { DELIVERY_RETRY_SCHEDULE: '5s,30s,2m,10m,30m,1h,2h' } });
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const db = () => s.service.deps.database.db;
const sweep = () => s.service.workers!.sweepNow();
let run = Math.floor(Math.random() * 90_000) + 10_000;
const nextPhone = () => `+49158${String(++run).padStart(5, '0')}001`;
const requestsTo = (phone: string) => graph.requests.filter((r) => r.body?.to === phone.slice(1)).length;

function metaError(status: number, code: number, headers?: Record<string, string>): GraphAnswer {
  return { status, headers, body: { error: { message: `(#${code}) message`, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: 'details' }, fbtrace_id: 'Afake' } } };
}

async function messageOf(batchId: string, ready: (m: any) => boolean): Promise<any> {
  return eventually(async () => {
    const { messages } = await s.admin('GET', `/admin/batches/${batchId}/messages`);
    return messages.length === 1 && ready(messages[0]) ? messages[0] : undefined;
  }, 30_000);
}

async function completedBatch(batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, 30_000);
}

test("an automation's expire_after: retries stop at the expiry, the message ends skipped / expired", async () => {
  const c = await whatsappCompany(s, graph);
  const a = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'otp', type: 'api', active: true, expire_after: '1h', template: { body: 'Code', whatsapp: { name: 'hello', language: 'en' } } }, 201);
  const to = nextPhone();
  // Meta asks to come back in 2 h: later than the expiry.
  graph.script = (req) => (req.body?.to === to.slice(1) ? metaError(429, 130429, { 'retry-after': '7200' }) : undefined);
  const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: a.automation_id, contacts: [{ phone: to }] } });
  assert.equal(res.status, 200, res.text);
  const batchId = res.json.batch_id;
  const m = await messageOf(batchId, (x) => x.attempts === 1 && x.next_attempt_at);
  assert.ok(m.expires_at, 'the message shows its expiry');
  const created = Date.parse((await s.admin('GET', `/admin/batches/${batchId}`)).created_at);
  assert.equal(Date.parse(m.expires_at), created + 3600_000, 'batch created_at + expire_after');
  assert.equal(m.next_attempt_at, m.expires_at, 'the wait ends at the expiry, not 2 h later');

  clock.set(Date.parse(m.expires_at));
  await sweep();
  const done = await messageOf(batchId, (x) => x.status !== 'pending');
  assert.deepEqual([done.status, done.reason, done.attempts], ['skipped', 'expired', 1]);
  assert.equal(requestsTo(to), 1, 'not handed to Meta after its expiry');
  assert.deepEqual((await completedBatch(batchId)).counts, { total: 1, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
});

/** Delivery hours (UTC) that open about 3 h after `now` for 30 minutes. */
function hoursLater(now: number) {
  const h = String((new Date(now).getUTCHours() + 3) % 24).padStart(2, '0');
  return { start: `${h}:00`, end: `${h}:30`, timezone: 'UTC' };
}

test("a campaign message held for delivery hours past the campaign's expire_after ends skipped (outbox)", async () => {
  const { companyId } = await s.company({ delivery_hours: hoursLater(clock.now()) });
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'promo', expire_after: '1h', template: { body: 'Sale' } }, 201);
  const to = nextPhone();
  const sent = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [to] }, 202);
  const m = await messageOf(sent.batch_id, (x) => x.scheduled_for);
  assert.equal(m.status, 'pending');
  assert.ok(Date.parse(m.scheduled_for) > Date.parse(m.expires_at), 'the window opens after the expiry');

  clock.set(Date.parse(m.expires_at) - 1_000);
  await sweep();
  assert.equal((await messageOf(sent.batch_id, () => true)).status, 'pending', 'not expired a second early');
  clock.set(Date.parse(m.expires_at));
  await sweep();
  const done = await messageOf(sent.batch_id, (x) => x.status !== 'pending');
  assert.deepEqual([done.status, done.reason, done.sent_at], ['skipped', 'expired', undefined]);
  await completedBatch(sent.batch_id);
});

test('POST /admin/campaigns/{id}/sends: expire_at must be an RFC 3339 time in the future, after scheduled_for', async () => {
  const { companyId } = await s.company();
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'promo', template: { body: 'Sale' } }, 201);
  const post = async (body: Record<string, unknown>) => {
    const res = await fetch(`${s.url}/admin/campaigns/${campaign.campaign_id}/sends`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contacts: [nextPhone()], ...body }),
    });
    return { status: res.status, json: await res.json() as any };
  };
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const [expire_at, msg] of [[iso(clock.now() - 60_000), 'must be in the future'], [iso(clock.now()), 'must be in the future']] as const) {
    const r = await post({ expire_at });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.deepEqual(r.json.detail.map((d: any) => [d.loc, d.msg]), [[['body', 'expire_at'], msg]]);
  }
  for (const expire_at of ['tomorrow', '2030-01-01T10:00:00', '']) {
    const r = await post({ expire_at });
    assert.equal(r.status, 422, `${expire_at}: ${JSON.stringify(r.json)}`);
    assert.deepEqual(r.json.detail[0].loc, ['body', 'expire_at']);
  }
  const r = await post({ scheduled_for: iso(clock.now() + 3600_000), expire_at: iso(clock.now() + 1800_000) });
  assert.equal(r.status, 422);
  assert.deepEqual(r.json.detail.map((d: any) => [d.loc, d.msg]), [[['body', 'expire_at'], 'must be after scheduled_for']]);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches WHERE company_id = ${companyId}`.execute(db());
  assert.equal(rows[0].n, 0, 'a refused send changes nothing');
});

test("a campaign send's expire_at: a message Meta held (131049) ends skipped at the expiry, not retried 24 h later", async () => {
  const c = await whatsappCompany(s, graph);
  const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'promo', template: { body: 'Sale', whatsapp: { name: 'hello', language: 'en' } } }, 201);
  const to = nextPhone();
  graph.script = (req) => (req.body?.to === to.slice(1) ? metaError(400, 131049) : undefined);
  const expireAt = clock.now() + 2 * 3600_000;
  const sent = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [to], expire_at: new Date(expireAt).toISOString() }, 202);
  const m = await messageOf(sent.batch_id, (x) => x.attempts === 1 && x.next_attempt_at);
  assert.deepEqual([m.status, m.reason, m.expires_at, m.next_attempt_at], ['pending', 'marketing_held', new Date(expireAt).toISOString(), new Date(expireAt).toISOString()]);
  assert.deepEqual((await s.admin('GET', `/admin/batches/${sent.batch_id}`)).waiting, { marketing_held: 1 });

  clock.set(expireAt);
  await sweep();
  const done = await messageOf(sent.batch_id, (x) => x.status !== 'pending');
  assert.deepEqual([done.status, done.reason], ['skipped', 'expired']);
  assert.equal(requestsTo(to), 1);
  const batch = await completedBatch(sent.batch_id);
  assert.deepEqual(batch.waiting, {});
});

test('a campaign without expire_after expires 24 h after its send; a scheduled send counts from its time', async () => {
  const { companyId } = await s.company();
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'promo', template: { body: 'Sale' } }, 201);
  assert.equal(campaign.expire_after, '24h');
  const now = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [nextPhone()] }, 202);
  const m = await messageOf(now.batch_id, (x) => x.status === 'sent');
  const created = Date.parse((await s.admin('GET', `/admin/batches/${now.batch_id}`)).created_at);
  assert.equal(Date.parse(m.expires_at), created + 24 * 3600_000);

  const at = clock.now() + 48 * 3600_000;
  const later = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: [nextPhone()], scheduled_for: new Date(at).toISOString() }, 202);
  const held = await messageOf(later.batch_id, (x) => x.scheduled_for);
  assert.equal(Date.parse(held.expires_at), at + 24 * 3600_000, 'not expired before it starts');
  clock.set(at);
  await sweep();
  assert.equal((await messageOf(later.batch_id, (x) => x.status !== 'pending')).status, 'sent');
});
