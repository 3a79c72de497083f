/**
 * The WhatsApp send path against the fake Graph API (docs/whatsapp.md "What each error code does"),
 * through the real server and workers with a FakeClock: every group of Meta's error codes does what
 * the table says (retry on the schedule honouring Retry-After, pair back-off, marketing hold, opt-out,
 * failure at once, channel pause until resume, catalogue marks), Meta's error is kept and shown
 * (`provider_error`), and batch views count waiting messages by reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { channelState, resumeChannel } from '../../src/db/whatsapp-channel.ts';
import { startFakeGraph, type FakeGraph, type GraphAnswer } from '../helpers/fake-graph.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { ADMIN_TOKEN, eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { addEndpoint } from '../events/helpers.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { whatsappCompany as syncedCompany } from '../helpers/whatsapp.ts';

interface WaCompany { companyId: number; key: string; automationId: number; wabaId: string }

/** A WhatsApp company with a synced catalogue (test/helpers/whatsapp.ts) and an automation of the approved template `hello` / `en`. */
async function whatsappCompany(_s: TestServer, g: FakeGraph): Promise<WaCompany> {
  const c = await syncedCompany(_s, g);
  const a = await _s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'wa', type: 'api', active: true, template: { body: 'Hi', whatsapp: { name: 'hello', language: 'en' } } }, 201);
  return { companyId: c.companyId, key: c.key, automationId: a.automation_id, wabaId: c.wabaId };
}

const clock = new FakeClock(Date.now());
let s: TestServer;
let graph: FakeGraph;
let receiver: WebhookReceiver;

before(async () => {
  s = await startPipelineServer('sendpath', { clock, env: { DELIVERY_RETRY_SCHEDULE: '5s,30s,2m' } });
  graph = await startFakeGraph();
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await receiver.close();
});

const db = () => s.service.deps.database.db;
const sweep = () => s.service.workers!.sweepNow();

/** Meta's error answer with a title and details of its own (so the test sees they are kept). */
function metaError(status: number, code: number, headers?: Record<string, string>): GraphAnswer {
  return {
    status,
    headers,
    body: { error: { message: `(#${code}) message of ${code}`, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: `details of ${code}` }, fbtrace_id: 'Afake' } },
  };
}

// Five digits, with room for every phones() call of this file: past 99999 the numbers are no longer valid.
let run = Math.floor(Math.random() * 80_000) + 10_000;
/** Distinct numbers for one test. */
function phones(n: number): string[] {
  run++;
  return Array.from({ length: n }, (_, i) => `+49157${String(run).padStart(5, '0')}${String(i).padStart(3, '0')}`);
}

async function send(c: WaCompany, to: string[]): Promise<string> {
  const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: to.map((phone, i) => ({ phone, first_name: `F${i}` })) } });
  assert.equal(res.status, 200, res.text);
  return res.json.batch_id;
}

async function byPhone(batchId: string): Promise<Map<string, any>> {
  const { messages } = await s.admin('GET', `/admin/batches/${batchId}/messages`);
  return new Map(messages.map((m: any) => [m.phone, m]));
}

/** Waits until every message of the batch has a committed outcome (final, or pending with its next attempt). */
async function settled(batchId: string, count: number): Promise<Map<string, any>> {
  return eventually(async () => {
    const ms = await byPhone(batchId);
    return ms.size === count && [...ms.values()].every((m) => m.status !== 'pending' || m.next_attempt_at) ? ms : undefined;
  }, 30_000);
}

const requestsTo = (phone: string) => graph.requests.filter((r) => r.body?.to === phone.slice(1)).length;

async function eventsOf(companyId: number, type: string): Promise<any[]> {
  const { rows } = await sql<{ payload: any }>`SELECT payload FROM events WHERE company_id = ${companyId} AND type = ${type} ORDER BY created_at`.execute(db());
  return rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload));
}

test('error codes: retry (Retry-After honoured), pair back-off, marketing hold, opt-out, failed at once; Meta\'s error kept; waiting counted by reason', async () => {
  const c = await whatsappCompany(s, graph);
  await addEndpoint(s, receiver, c.companyId, `/sp-${c.companyId}`);
  const p = phones(9);
  const first: Record<string, GraphAnswer> = {
    [p[0]]: metaError(429, 130429, { 'retry-after': '90' }),
    [p[1]]: metaError(500, 131000),
    [p[2]]: metaError(400, 131056),
    [p[3]]: metaError(400, 131049),
    [p[4]]: metaError(400, 131050),
    [p[5]]: metaError(400, 131047),
    [p[6]]: metaError(400, 131026),
    [p[7]]: metaError(400, 100),
    [p[8]]: metaError(502, 133004),
  };
  graph.script = (req, n) => (n === 1 && req.body?.to ? first['+' + req.body.to] : undefined);
  const t0 = clock.now();
  const batchId = await send(c, p);
  let ms = await settled(batchId, p.length);
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const view = (i: number) => { const m = ms.get(p[i]); return [m.status, m.reason ?? null, m.next_attempt_at ?? null, m.error_code]; };

  assert.deepEqual(view(0), ['pending', null, at(90_000), '130429'], '130429: retried, Retry-After (90 s) longer than the schedule (5 s)');
  assert.deepEqual(view(1), ['pending', null, at(5_000), '131000'], '131000: retried on the schedule');
  assert.deepEqual(view(2), ['pending', 'pair_rate', at(60_000), '131056'], '131056: the pair backs off, then a retry');
  assert.deepEqual(view(3), ['pending', 'marketing_held', at(24 * 3600_000), '131049'], '131049: held 24 h');
  assert.deepEqual(view(4), ['failed', null, null, '131050']);
  assert.deepEqual(view(5), ['failed', null, null, '131047']);
  assert.deepEqual(view(6), ['failed', null, null, '131026']);
  assert.deepEqual(view(7), ['failed', null, null, '100']);
  assert.deepEqual(view(8), ['pending', null, at(5_000), '133004']);
  assert.deepEqual(ms.get(p[6]).provider_error, { code: '131026', title: 'Message undeliverable', message: '(#131026) message of 131026', details: 'details of 131026' });
  assert.deepEqual(ms.get(p[0]).provider_error, { code: '130429', title: 'Rate limit hit', message: '(#130429) message of 130429', details: 'details of 130429' }, 'kept while waiting');

  const batch = await s.admin('GET', `/admin/batches/${batchId}`);
  assert.deepEqual(batch.waiting, { pair_rate: 1, marketing_held: 1 });
  assert.equal(batch.counts.pending, 5);
  const page = await s.admin('GET', `/admin/companies/${c.companyId}/batches`);
  assert.deepEqual(page.batches[0].waiting, { pair_rate: 1, marketing_held: 1 }, 'the list counts them too');

  // 131050: the contact is opted out by WhatsApp, with its event.
  const contact = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p[4])}`);
  assert.equal(contact.opted_out, true);
  assert.equal(contact.opt_out_source, 'whatsapp');
  const optedOut = await eventsOf(c.companyId, 'contact.opted_out');
  assert.deepEqual(optedOut.map((e) => [e.data.phone, e.data.source]), [[p[4], 'whatsapp']]);

  // The retries come due (and are sent); the marketing hold is not due before 24 h.
  clock.advance(90_000);
  await sweep();
  ms = await eventually(async () => {
    const m = await byPhone(batchId);
    return [0, 1, 2, 8].every((i) => m.get(p[i]).status === 'sent') ? m : undefined;
  });
  assert.equal(ms.get(p[3]).status, 'pending');
  assert.equal(requestsTo(p[3]), 1, 'not tried again before 24 h');
  assert.equal(ms.get(p[0]).provider_error, undefined, 'a sent message has no error left');
  clock.advance(24 * 3600_000);
  await sweep();
  ms = await eventually(async () => {
    const m = await byPhone(batchId);
    return m.get(p[3]).status === 'sent' ? m : undefined;
  });
  assert.equal(ms.get(p[3]).attempts, 2);
  for (const i of [4, 5, 6, 7]) assert.equal(requestsTo(p[i]), 1, `${p[i]} failed at once`);
  const done = await eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  });
  assert.deepEqual(done.counts, { total: 9, sent: 5, delivered: 0, read: 0, failed: 4, skipped: 0, pending: 0 });
  assert.deepEqual(done.waiting, {});
});

test('a hold by Meta (131049) does not count against the retry schedule', async () => {
  const c = await whatsappCompany(s, graph);
  const [to] = phones(1);
  // Held twice, then three transient failures: with a 3-wait schedule the last one is still retried.
  graph.script = (req, n) => (req.body?.to !== to.slice(1) ? undefined : n <= 2 ? metaError(400, 131049) : n <= 5 ? metaError(500, 131000) : undefined);
  const batchId = await send(c, [to]);
  for (let attempts = 1; attempts <= 5; attempts++) {
    const m = await eventually(async () => {
      const x = (await byPhone(batchId)).get(to);
      return x?.attempts === attempts && x.status === 'pending' && x.next_attempt_at ? x : undefined;
    });
    assert.equal(m.reason, attempts <= 2 ? 'marketing_held' : undefined);
    clock.advance(24 * 3600_000);
    await sweep();
  }
  const m = await eventually(async () => {
    const x = (await byPhone(batchId)).get(to);
    return x && x.status !== 'pending' ? x : undefined;
  });
  assert.equal(m.status, 'sent', JSON.stringify(m));
  assert.equal(m.attempts, 6);
});

test('131048 / 131031 / 368 / 190 pause the channel: the run\'s other messages wait, nothing is sent until resume', async () => {
  const c = await whatsappCompany(s, graph);
  await addEndpoint(s, receiver, c.companyId, `/sp-${c.companyId}`);
  const p = phones(40);
  const ours = new Set(p.map((x) => x.slice(1)));
  graph.script = (req) => (ours.has(req.body?.to) ? metaError(400, 131048) : undefined);
  const batchId = await send(c, p);
  const ms = await settled(batchId, p.length);
  for (const m of ms.values()) {
    assert.equal(m.status, 'pending');
    assert.equal(m.reason, 'channel_paused');
  }
  const asked = graph.requests.filter((r) => ours.has(r.body?.to)).length;
  assert.ok(asked < p.length, `messages after the pause did not reach Meta (${asked} requests for ${p.length} messages)`);
  assert.deepEqual((await s.admin('GET', `/admin/batches/${batchId}`)).waiting, { channel_paused: 40 });
  const state = await channelState(db(), c.companyId);
  assert.equal(state.state, 'paused');
  assert.equal(state.reason, '131048: Spam rate limit hit');
  assert.deepEqual((await eventsOf(c.companyId, 'channel.paused')).map((e) => e.data), [{ company_id: c.companyId, reason: '131048: Spam rate limit hit' }]);

  // While paused, a new send waits without a request.
  const [later] = phones(1);
  const laterBatch = await send(c, [later]);
  const waiting = (await settled(laterBatch, 1)).get(later);
  assert.deepEqual([waiting.status, waiting.reason, waiting.attempts], ['pending', 'channel_paused', 0]);
  assert.equal(requestsTo(later), 0);

  // A minute later (past the pair interval of the first admissions), resume: everything goes out.
  graph.script = () => undefined;
  clock.advance(60_000);
  const resume = await fetch(`${s.url}/admin/companies/${c.companyId}/channel/resume`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (resume.status === 404) await resumeChannel(db(), c.companyId, 'resumed by the operator', clock.now());
  else assert.equal(resume.status, 200);
  await sweep();
  for (const id of [batchId, laterBatch]) {
    await eventually(async () => {
      const b = await s.admin('GET', `/admin/batches/${id}`);
      return b.status === 'completed' ? b : undefined;
    });
  }
  assert.equal((await s.admin('GET', `/admin/batches/${batchId}`)).counts.sent, 40);
  assert.equal((await byPhone(laterBatch)).get(later).status, 'sent');
  assert.equal((await eventsOf(c.companyId, 'channel.resumed')).length, 1);
});

test('131031, 368 and 190 pause the channel too, each with its reason', async () => {
  for (const [code, title] of [[131031, 'Account has been locked'], [368, 'Temporarily blocked for policies violations'], [190, 'Access token has expired']] as const) {
    const c = await whatsappCompany(s, graph);
    const [to] = phones(1);
    graph.script = (req) => (req.body?.to === to.slice(1) ? metaError(code === 190 ? 401 : 400, code) : undefined);
    const batchId = await send(c, [to]);
    const m = (await settled(batchId, 1)).get(to);
    assert.deepEqual([m.status, m.reason, m.error_code], ['pending', 'channel_paused', String(code)]);
    assert.equal((await channelState(db(), c.companyId)).reason, `${code}: ${title}`);
  }
});

async function templateStatus(companyId: number): Promise<string> {
  const { rows } = await sql<{ status: string }>`SELECT status FROM whatsapp_templates WHERE company_id = ${companyId} AND name = 'hello' AND language = 'en'`.execute(db());
  return rows[0].status;
}

test('template codes mark the catalogue entry: 132015 waits template_paused, the others fail; later sends do not reach Meta', async () => {
  for (const [code, status] of [[132015, 'PAUSED'], [132016, 'DISABLED'], [132001, 'DELETED'], [132000, 'MISMATCHED'], [132005, 'MISMATCHED'], [132007, 'MISMATCHED'], [132012, 'MISMATCHED']] as const) {
    const c = await whatsappCompany(s, graph);
    assert.equal(await templateStatus(c.companyId), 'APPROVED');
    const [to, later] = phones(2);
    graph.script = (req) => (req.body?.to === to.slice(1) ? metaError(400, code) : undefined);
    const batchId = await send(c, [to]);
    const m = (await settled(batchId, 1)).get(to);
    if (code === 132015) assert.deepEqual([m.status, m.reason, m.error_code], ['pending', 'template_paused', '132015']);
    else assert.deepEqual([m.status, m.error_code], ['failed', String(code)]);
    assert.equal(m.provider_error.code, String(code));
    assert.equal(await templateStatus(c.companyId), status, `${code} marks the entry ${status}`);

    // The next send of the template is decided from the catalogue, without a request to Meta.
    const next = (await settled(await send(c, [later]), 1)).get(later);
    if (code === 132015) assert.deepEqual([next.status, next.reason, next.attempts], ['pending', 'template_paused', 0]);
    else assert.deepEqual([next.status, next.error_code, next.attempts], ['failed', 'template_unavailable', 0]);
    assert.equal(requestsTo(later), 0);
  }
});

test("a template refused in the middle of a run: the run's messages not yet sent are decided from the catalogue", async () => {
  const c = await whatsappCompany(s, graph);
  const p = phones(40);
  const ours = new Set(p.map((x) => x.slice(1)));
  graph.script = (req) => (ours.has(req.body?.to) ? metaError(400, 132016) : undefined);
  const batchId = await send(c, p);
  const ms = await settled(batchId, p.length);
  const asked = graph.requests.filter((r) => ours.has(r.body?.to)).length;
  assert.ok(asked < p.length, `${asked} requests for ${p.length} messages`);
  const codes = [...ms.values()].map((m) => m.error_code);
  assert.equal(codes.filter((x) => x === '132016').length, asked);
  assert.equal(codes.filter((x) => x === 'template_unavailable').length, p.length - asked);
  assert.ok([...ms.values()].every((m) => m.status === 'failed'));
});

test('templates the catalogue does not approve: PAUSED waits until approved again, others fail without calling Meta', async () => {
  const c = await whatsappCompany(s, graph);
  const [paused, gone] = phones(2);
  await sql`UPDATE whatsapp_templates SET status = 'PAUSED' WHERE company_id = ${c.companyId} AND name = 'hello' AND language = 'en'`.execute(db());
  const batchId = await send(c, [paused]);
  const m = (await settled(batchId, 1)).get(paused);
  assert.deepEqual([m.status, m.reason, m.attempts], ['pending', 'template_paused', 0]);
  assert.deepEqual((await s.admin('GET', `/admin/batches/${batchId}`)).waiting, { template_paused: 1 });
  assert.equal(requestsTo(paused), 0);

  // Approved again at Meta: a sync of the catalogue releases it, and it is sent.
  await s.admin('POST', `/admin/companies/${c.companyId}/whatsapp/templates/sync`, undefined, 200);
  await sweep();
  const sent = await eventually(async () => {
    const x = (await byPhone(batchId)).get(paused);
    return x.status === 'sent' ? x : undefined;
  });
  assert.equal(sent.attempts, 1);

  await sql`UPDATE whatsapp_templates SET status = 'REJECTED' WHERE company_id = ${c.companyId} AND name = 'hello' AND language = 'en'`.execute(db());
  const goneBatch = await send(c, [gone]);
  const g = (await settled(goneBatch, 1)).get(gone);
  assert.deepEqual([g.status, g.error_code, g.attempts], ['failed', 'template_unavailable', 0]);
  assert.match(g.error, /hello \(en\)/);
  assert.equal(requestsTo(gone), 0);
});

test("pacing's admission before sending: a second message to a recipient within the pair interval waits pair_rate, then goes", async () => {
  const c = await whatsappCompany(s, graph);
  const [to] = phones(1);
  graph.script = () => undefined;
  const first = await send(c, [to]);
  await eventually(async () => (await byPhone(first)).get(to)?.status === 'sent');
  const second = await send(c, [to]);
  const m = (await settled(second, 1)).get(to);
  assert.deepEqual([m.status, m.reason, m.attempts], ['pending', 'pair_rate', 0]);
  assert.equal(requestsTo(to), 1);
  assert.deepEqual((await s.admin('GET', `/admin/batches/${second}`)).waiting, { pair_rate: 1 });
  clock.set(Date.parse(m.next_attempt_at));
  await sweep();
  await eventually(async () => (await byPhone(second)).get(to).status === 'sent');
  assert.equal(requestsTo(to), 2);
});
