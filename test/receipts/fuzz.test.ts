/**
 * Fuzzing the webhooks in with fast-check: POST /webhooks/whatsapp and
 * POST /webhooks/provider/status get malformed and hostile payloads (random JSON, mutated Meta and
 * gateway payloads, wrong types, prototype keys, U+0000 and lone surrogates, deep nesting, huge
 * strings, bytes that are not UTF-8) with missing, wrong or valid signatures. Checks:
 *
 * - never a 5xx; every answer is one the route documents (200, 400, 401, 413);
 * - without a valid signature: never 200, and nothing is written (the test company's inbound messages,
 *   contacts and messages are the same before and after);
 * - with a valid signature: 200 or 400, and every job it enqueued is applied without failing.
 *
 * Seed fixed by default (replay or vary with FUZZ_SEED); FUZZ_RUNS runs per property (default 150).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scalarValue } from '../helpers/arbitraries.ts';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { changeValue, hubSignature, startFakeGraph, waStatus, waText, webhookPayload, type FakeGraph, type WaMessage, type WaStatus } from '../helpers/fake-graph.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { completedBatch, messagesByPhone, receiptsSettled, sendAndComplete, whatsappCompany, type WaCompany } from './helpers.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : 20261124;

let s: TestServer;
let graph: FakeGraph;
let receiver: WebhookReceiver;
let wa: WaCompany;
let wamid: string;
let waPhone: string;
let gw: { companyId: number; messageId: string };

before(async () => {
  // A server of its own: a test counts the failed receipts-apply jobs of the whole queue.
  s = await startTestServer({ own: true });
  graph = await startFakeGraph();
  receiver = await startReceiver();
  wa = await whatsappCompany(s, graph);
  waPhone = `+49152${String(Math.floor(Math.random() * 90_000) + 10_000)}950`;
  wamid = (await sendAndComplete(s, graph, wa, [waPhone])).wamids.get(waPhone)!;
  const g = await s.company();
  await s.admin('PUT', `/admin/companies/${g.companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const a = await s.admin('POST', `/admin/companies/${g.companyId}/automations`, { name: 'gw', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const res = await s.api('/api/automations/send', { key: g.key, body: { automation_id: a.automation_id, contacts: [{ phone: waPhone }] } });
  await completedBatch(s, res.json.batch_id);
  gw = { companyId: g.companyId, messageId: [...(await messagesByPhone(s, res.json.batch_id)).values()][0].message_id };
});
after(async () => {
  await s.close();
  await graph.close();
  await receiver.close();
});

/** Rows a request without a valid signature must not change, for both test companies. */
async function footprint() {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT (SELECT count(*)::int FROM inbound_messages WHERE company_id IN (${wa.companyId}, ${gw.companyId})) AS inbound,
           (SELECT count(*)::int FROM contacts WHERE company_id IN (${wa.companyId}, ${gw.companyId})) AS contacts,
           (SELECT string_agg(message_id::text || status || coalesce(delivered_at::text, '') || coalesce(read_at::text, '') || coalesce(error_code, ''), ',' ORDER BY message_id)
              FROM messages WHERE company_id IN (${wa.companyId}, ${gw.companyId})) AS messages`.execute(s.service.deps.database.db);
  return rows[0];
}

const hostileString = fc.oneof(
  fc.string(), fc.string({ unit: scalarValue, maxLength: 40 }), fc.constantFrom('\u0000', '\ud800', 'STOP\u0000', '__proto__', 'constructor', ' STOP ', 'x'.repeat(5000), '../../etc', '1e309', '-1', ''),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}),
  fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(1e308, -0, 2 ** 53 + 1, '99999999999999999999'),
);

/** A Meta-shaped payload for `phoneNumberId` with a few statuses and messages, then mutated. */
function waPayloadArb(phoneNumberId: string) {
  const status = fc.record({
    id: fc.oneof(fc.constant(wamid), hostileString),
    status: fc.constantFrom('sent', 'delivered', 'read', 'failed', 'deleted', 'warning'),
    timestamp: fc.oneof(fc.integer({ min: 0, max: 4_000_000_000 }).map(String), fc.constant('999999999999'), hostileValue),
    recipient_id: hostileString,
    errors: fc.option(fc.array(fc.record({ code: hostileValue, title: hostileValue }), { maxLength: 2 }), { nil: undefined }),
  }, { requiredKeys: ['id', 'status', 'timestamp'] });
  const message = fc.record({
    from: fc.oneof(fc.constant(waPhone.slice(1)), fc.stringMatching(/^\d{1,20}$/), hostileString),
    id: hostileString,
    timestamp: fc.oneof(fc.integer({ min: 0, max: 4_000_000_000 }).map(String), hostileValue),
    type: fc.constantFrom('text', 'button', 'interactive', 'image', '__proto__', 'constructor'),
    text: fc.option(fc.record({ body: hostileValue }), { nil: undefined }),
    button: fc.option(fc.record({ payload: hostileValue, text: hostileValue }), { nil: undefined }),
    interactive: fc.option(fc.record({ type: fc.constant('button_reply'), button_reply: fc.record({ id: hostileValue, title: hostileValue }) }), { nil: undefined }),
  }, { requiredKeys: ['from', 'id', 'timestamp', 'type'] });
  const base = fc.record({ statuses: fc.array(status, { maxLength: 4 }), messages: fc.array(message, { maxLength: 3 }) })
    .map(({ statuses, messages }) => webhookPayload([changeValue(phoneNumberId, { statuses: statuses as unknown as WaStatus[], messages: messages as unknown as WaMessage[] } /* hostile values on purpose */)]) as Record<string, any>);
  // Mutations: replace a random path of the payload with a hostile value, or add prototype keys.
  return fc.tuple(base, fc.array(fc.tuple(fc.constantFrom('object', 'entry', 'changes', 'value', 'metadata', 'statuses', 'messages', 'phone_number_id', '__proto__', 'constructor'), hostileValue), { maxLength: 2 }))
    .map(([p, muts]) => {
      for (const [where, v] of muts) {
        try {
          const value = p.entry[0].changes[0].value;
          if (where === 'object') p.object = v;
          else if (where === 'entry') p.entry = v;
          else if (where === 'changes') p.entry[0].changes = v;
          else if (where === 'value') p.entry[0].changes[0].value = v;
          else if (where === 'metadata') value.metadata = v;
          else if (where === 'phone_number_id') value.metadata.phone_number_id = v;
          else if (where === 'statuses' || where === 'messages') value[where] = v;
          else Object.defineProperty(p, where, { value: v, enumerable: true, configurable: true, writable: true });
        } catch {
          break; // an earlier mutation left no object there
        }
      }
      return JSON.stringify(p);
    });
}

/** A body (bytes): a mutated Meta payload (mostly), random JSON text, raw bytes, or deep nesting. */
const bodyArb = (phoneNumberId: () => string): fc.Arbitrary<Buffer> => fc.oneof(
  { weight: 6, arbitrary: fc.constant(null).chain(() => waPayloadArb(phoneNumberId())).map((t) => Buffer.from(t, 'utf8')) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200_000 }).map((n) => Buffer.from('{"object":"whatsapp_business_account","entry":' + '['.repeat(n) + ']'.repeat(n) + '}')) },
);

type SigChoice = 'none' | 'wrong' | 'otherBody' | 'badFormat';
const sigArb = fc.constantFrom<SigChoice>('none', 'wrong', 'otherBody', 'badFormat');

async function postWa(body: Buffer | string, sig: SigChoice | 'valid') {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (sig === 'valid') headers['x-hub-signature-256'] = hubSignature(wa.appSecret, body);
  else if (sig === 'wrong') headers['x-hub-signature-256'] = hubSignature(wa.appSecret + 'x', body);
  else if (sig === 'otherBody') headers['x-hub-signature-256'] = hubSignature(wa.appSecret, Buffer.concat([Buffer.from(body), Buffer.from('\n')]));
  else if (sig === 'badFormat') headers['x-hub-signature-256'] = 'sha256=' + hubSignature(wa.appSecret, body);
  const res = await fetch(`${s.url}/webhooks/whatsapp`, { method: 'POST', headers, body: body as BodyInit });
  return { status: res.status, text: await res.text() };
}

async function postGw(body: string, sig: SigChoice | 'valid') {
  const id = 'msg_' + Math.random().toString(36).slice(2);
  const now = new Date();
  const headers: Record<string, string> = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) };
  const hook = new Webhook(receiver.secret);
  if (sig === 'valid') headers['webhook-signature'] = hook.sign(id, now, body);
  else if (sig === 'wrong') headers['webhook-signature'] = new Webhook('whsec_' + Buffer.from('wrong-secret-wrong-secret-123456').toString('base64')).sign(id, now, body);
  else if (sig === 'otherBody') headers['webhook-signature'] = hook.sign(id, now, body + ' ');
  else if (sig === 'badFormat') headers['webhook-signature'] = 'v2,' + hook.sign(id, now, body).slice(3);
  const res = await fetch(`${s.url}/webhooks/provider/status`, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}

const gwBodyArb = () => fc.oneof(
  { weight: 5, arbitrary: fc.record({
    statuses: fc.array(fc.record({
      message_id: fc.oneof(fc.constant(gw.messageId), fc.constant(gw.messageId.toUpperCase()), fc.uuid(), hostileString),
      status: fc.oneof(fc.constantFrom('delivered', 'read', 'failed'), hostileValue),
      timestamp: fc.oneof(fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString()), hostileValue),
      error: fc.option(fc.oneof(fc.record({ code: hostileValue, title: hostileValue }), hostileValue), { nil: undefined }),
    }, { requiredKeys: ['message_id', 'status', 'timestamp'] }), { maxLength: 4 }),
  }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: scalarValue, maxLength: 200 }) },
);

const ANSWERS = new Set([200, 400, 401, 413]);

test('without a valid signature: no 5xx, never 200, nothing written', async (t) => {
  t.diagnostic(`seed ${SEED}, ${RUNS} runs per property (FUZZ_SEED / FUZZ_RUNS)`);
  await receiptsSettled(s);
  const before = await footprint();
  await fc.assert(fc.asyncProperty(bodyArb(() => wa.phoneNumberId), sigArb, async (body, sig) => {
    const res = await postWa(body, sig);
    assert.ok(res.status < 500 && ANSWERS.has(res.status) && res.status !== 200, `whatsapp ${sig}: ${res.status} ${res.text}`);
  }), { seed: SEED, numRuns: RUNS });
  await fc.assert(fc.asyncProperty(gwBodyArb(), sigArb, async (body, sig) => {
    const res = await postGw(body, sig);
    assert.ok(res.status < 500 && ANSWERS.has(res.status) && res.status !== 200, `gateway ${sig}: ${res.status} ${res.text}`);
  }), { seed: SEED, numRuns: RUNS });
  await receiptsSettled(s);
  assert.deepEqual(await footprint(), before);
});

test('with a valid signature: no 5xx, 200 or 400, every enqueued job applies without failing', async () => {
  const db = s.service.deps.database.db;
  const failedBefore = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'receipts-apply' AND (state = 'failed' OR retry_count > 0)`.execute(db)).rows[0].n);
  await fc.assert(fc.asyncProperty(bodyArb(() => wa.phoneNumberId), async (body) => {
    const res = await postWa(body, 'valid');
    assert.ok(res.status === 200 || res.status === 400 || res.status === 413, `whatsapp: ${res.status} ${res.text}`);
  }), { seed: SEED, numRuns: RUNS });
  await fc.assert(fc.asyncProperty(gwBodyArb(), async (body) => {
    const res = await postGw(body, 'valid');
    assert.ok(res.status === 200 || res.status === 400 || res.status === 401, `gateway: ${res.status} ${res.text}`);
  }), { seed: SEED, numRuns: RUNS });
  // A well-formed STOP among them still works, and nothing the fuzzer enqueued failed.
  const p = `+49152${String(Math.floor(Math.random() * 90_000) + 10_000)}951`;
  const ok = await postWa(JSON.stringify(webhookPayload([changeValue(wa.phoneNumberId, { messages: [waText(p.slice(1), 'STOP', Date.now())], statuses: [waStatus(wamid, 'read', waPhone.slice(1), Date.now())] })])), 'valid');
  assert.equal(ok.status, 200, ok.text);
  await eventually(async () => (await s.admin('GET', `/admin/companies/${wa.companyId}/contacts/${encodeURIComponent(p)}`).catch(() => undefined))?.opted_out === true);
  await receiptsSettled(s);
  const failedAfter = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'receipts-apply' AND (state = 'failed' OR retry_count > 0)`.execute(db)).rows[0].n);
  assert.equal(failedAfter, failedBefore, 'no receipts-apply job failed');
});
