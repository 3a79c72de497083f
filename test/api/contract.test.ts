/**
 * The contract test: a broad mix of valid and invalid requests to every
 * operation of `/openapi.json`, through the real server, each answer checked against the document by
 * a validating layer built from it (Ajv 2020-12 over the document's schemas, `$ref`s to components
 * resolved): 0 undocumented statuses, bodies, media types or headers.
 *
 * - The requests are generated from the document: for every operation a happy request (the
 *   documented request example, ids replaced by this test's own fixtures) and error variants (no
 *   credentials, an unknown id, a path id that is not an integer, a malformed body, a body of the wrong
 *   type, the path with a trailing slash: 307). New routes are covered without editing this file.
 * - Hand-written cases add what generation cannot reach: 429, an Idempotency-Key replay, 403, 413,
 *   400 for bytes that are not text, 401 with an invalid key, the webhooks' signatures, 404/405 of
 *   unknown routes.
 * - A response header is "documented" when the answer's response object lists it; only the transport
 *   headers of {@link TRANSPORT} are exempt.
 * - Every operation must have been called at least once, and have answered an error at least once
 *   if it documents a 4xx (health and metrics have none).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { claimKey, requestHash } from '../../src/domain/idempotency.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

type Json = any;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** Headers any HTTP answer may carry that no API documents. */
const TRANSPORT = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

interface Operation { method: string; path: string; regex: RegExp; literal: number; op: Json }
interface Answer { status: number; headers: Headers; text: string }
interface Call { label: string; method: string; url: string; headers?: Record<string, string>; body?: string | Buffer }

/** The validating layer: matches an answer to its operation and checks status, body and headers. */
class Contract {
  readonly operations: Operation[] = [];
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #compiled = new Map<object, ValidateFunction>();
  readonly doc: Json;

  constructor(doc: Json) {
    this.doc = doc;
    addFormats(this.#ajv);
    this.#ajv.addSchema({ $id: 'urn:cms:openapi', components: { schemas: rewriteRefs(doc.components?.schemas ?? {}) } });
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item as Record<string, Json>)) {
        const parts = path.split('/');
        this.operations.push({
          method: method.toUpperCase(), path, op,
          regex: new RegExp(`^${parts.map((p) => (/^\{.+\}$/.test(p) ? '[^/]+' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`),
          literal: parts.filter((p) => !/^\{.+\}$/.test(p)).length,
        });
      }
    }
  }

  /** The operation serving `method path` (the most literal template wins, as routers do). */
  find(method: string, path: string): Operation | undefined {
    return this.operations.filter((o) => o.method === method && o.regex.test(path)).sort((a, b) => b.literal - a.literal)[0];
  }

  #validator(schema: object): ValidateFunction {
    let v = this.#compiled.get(schema);
    if (!v) this.#compiled.set(schema, (v = this.#ajv.compile(rewriteRefs(schema))));
    return v;
  }

  /** Problems of one answer to `method path` (empty: it conforms). */
  check(method: string, path: string, answer: Answer): { problems: string[]; operation?: Operation } {
    const problems: string[] = [];
    // A 307 is the toggled path's answer (Starlette's routing): it is documented on the operation it redirects to.
    const target = answer.status === 307 ? (path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`) : path;
    const operation = this.find(method, target);
    if (!operation) return { problems: [`no operation documents ${method} ${target}`] };
    const responses = operation.op.responses as Record<string, Json>;
    const response = responses[String(answer.status)] ?? responses[`${String(answer.status)[0]}XX`] ?? responses.default;
    if (!response) return { operation, problems: [`status ${answer.status} is not documented (documented: ${Object.keys(responses).join(', ')})`] };
    const documented = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()));
    answer.headers.forEach((_v, name) => {
      if (!TRANSPORT.has(name) && !documented.has(name)) problems.push(`header ${name} is not documented for ${answer.status}`);
    });
    for (const [name, h] of Object.entries(response.headers ?? {}) as [string, Json][]) {
      const value = answer.headers.get(name);
      if (value === null) {
        if (h.required) problems.push(`required header ${name} missing`);
        continue;
      }
      if (h.schema && !this.#validator(h.schema)(value)) problems.push(`header ${name}: ${value} does not fit ${JSON.stringify(h.schema)}`);
    }
    const content = response.content as Record<string, Json> | undefined;
    if (!content) {
      if (answer.text.length > 0) problems.push(`status ${answer.status} is documented without a body, got ${answer.text.slice(0, 80)}`);
      return { operation, problems };
    }
    const type = (answer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const media = content[type];
    if (!media) return { operation, problems: [...problems, `media type "${type}" is not documented for ${answer.status} (documented: ${Object.keys(content).join(', ')})`] };
    let value: unknown = answer.text;
    if (type.endsWith('json')) {
      try {
        value = JSON.parse(answer.text);
      } catch {
        return { operation, problems: [...problems, `body is not JSON: ${answer.text.slice(0, 80)}`] };
      }
    }
    if (media.schema) {
      const validate = this.#validator(media.schema);
      if (!validate(value)) problems.push(`body ${answer.text.slice(0, 200)} does not fit the schema: ${this.#ajv.errorsText(validate.errors)}`);
    }
    return { operation, problems };
  }
}

/** `#/components/schemas/X` → a reference into the schema registered as `urn:cms:openapi`. */
function rewriteRefs(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(rewriteRefs);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `urn:cms:openapi${v}` : rewriteRefs(v);
  return out;
}

let s: TestServer;
let contract: Contract;
let receiver: http.Server;
let receiverUrl: string;
const calls = new Map<string, { count: number; statuses: Set<number> }>();
const failures: string[] = [];

/** Sends one request and checks its answer; records what each operation answered. */
async function send(c: Call): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(s.url + c.url, { method: c.method, headers: c.headers, body: c.body as BodyInit | undefined, redirect: 'manual' });
  const answer = { status: res.status, headers: res.headers, text: await res.text() };
  if (process.env.CONTRACT_TIMING) console.log(Math.round(performance.now() - t0), c.method, c.url, answer.status);
  const path = decodeURI(c.url.split('?')[0]);
  const { problems, operation } = contract.check(c.method, path, answer);
  if (operation && answer.status !== 307) {
    const key = `${operation.method} ${operation.path}`;
    const seen = calls.get(key) ?? { count: 0, statuses: new Set<number>() };
    seen.count++;
    seen.statuses.add(answer.status);
    calls.set(key, seen);
  }
  for (const p of problems) failures.push(`${c.label}: ${c.method} ${c.url} → ${answer.status}: ${p}`);
  return answer;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const jsonHeaders = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });

/** Ids of this test's own objects, by path parameter or body field name. */
const fixtures: Record<string, string | number> = {};

/** A realistic body for an operation: its documented example, ids replaced by the fixtures. */
function exampleBody(op: Json): unknown {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  const example = media.example ?? (media.examples ? (Object.values(media.examples)[0] as Json).value : undefined) ?? media.schema?.examples?.[0];
  return example === undefined ? {} : withFixtures(structuredClone(example));
}

function withFixtures(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withFixtures);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = k in fixtures && typeof v !== 'object' ? fixtures[k] : withFixtures(v);
  return out;
}

/** The path with its parameters filled: fixtures, or `fill(name)`. */
function fillPath(path: string, fill: (name: string) => string | number | undefined = () => undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(String(fill(name) ?? fixtures[name] ?? 2147483000)));
}

/** The credentials an operation needs (none for `security: []`). */
function credentials(op: Json): Record<string, string> {
  const schemes = (op.security ?? []).flatMap((r: Json) => Object.keys(r));
  if (schemes.includes('AdminBearer')) return admin;
  if (schemes.includes('APIKeyHeader')) return { 'service-api-key': String(fixtures.api_key) };
  return {};
}

before(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
  s = await startTestServer({ role: 'api' });
  contract = new Contract(await (await fetch(`${s.url}/openapi.json`)).json());

  // Fixtures: a company with a key, a segment, an automation, a campaign, contacts, a batch, an
  // event endpoint, a second key to revoke, and another company (tenancy).
  const { companyId, key, keyId } = await s.company({ default_country: 'DE' });
  Object.assign(fixtures, { company_id: companyId, api_key: key });
  const spare = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'to revoke' });
  fixtures.key_id = spare.key_id;
  void keyId;
  const template = { body: 'Hello {{ first_name }}, your order {{ order_id }} ships today.' };
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template });
  fixtures.automation_id = automation.automation_id;
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Summer sale', template });
  fixtures.campaign_id = campaign.campaign_id;
  await s.admin('PUT', `/admin/companies/${companyId}/connector`, { connected: true });
  const segment = await s.api('/api/segments/create', { key, body: { name: 'Newsletter subscribers' } });
  fixtures.segment_id = segment.json.segment_id;
  const sent = await s.api('/api/automations/send', { key, body: { automation_id: automation.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Anna' }] } });
  fixtures.batch_id = sent.json.batch_id;
  fixtures.phone = '+4915112345678';
  const endpoint = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: receiverUrl });
  fixtures.endpoint_id = endpoint.endpoint_id;
  const event = await s.service.deps.database.db.selectFrom('events').select('event_id').where('company_id', '=', companyId).executeTakeFirst();
  fixtures.event_id = event?.event_id ?? 'evt_unknown';
  const other = await s.company();
  fixtures.other_company_id = other.companyId;
  // Documented example URLs name hosts that do not resolve here: the happy requests use the receiver.
  fixtures.url = receiverUrl;
});

after(async () => {
  await s?.close();
  await new Promise((r) => receiver?.close(r));
});

test('every operation, generated from the document: happy, unauthenticated, unknown id, bad id, bad body, trailing slash', async () => {
  const ops = contract.operations.filter((o) => !o.path.startsWith('/webhooks/'));
  const deletes = ops.filter((o) => o.method === 'DELETE');
  // Happy requests (deletes last: they remove fixtures), then the error variants.
  for (const o of [...ops.filter((x) => x.method !== 'DELETE'), ...deletes]) {
    const body = exampleBody(o.op);
    await send({
      label: `happy ${o.op.operationId}`, method: o.method, url: fillPath(o.path),
      headers: { ...credentials(o.op), ...(body !== undefined ? jsonHeaders() : {}) }, body: body === undefined ? undefined : JSON.stringify(body),
    });
  }
  // The error variants change nothing: sent 8 at a time.
  const variants: Call[] = [];
  for (const o of ops) {
    const body = exampleBody(o.op);
    const withBody = body !== undefined ? { headers: { ...credentials(o.op), ...jsonHeaders() }, body: JSON.stringify(body) } : { headers: credentials(o.op) };
    const call = (v: string, url: string, extra: Partial<Call> = {}) => variants.push({ label: `${v} ${o.op.operationId}`, method: o.method, url, ...withBody, ...extra });
    if (Object.keys(credentials(o.op)).length > 0) call('no credentials', fillPath(o.path), { headers: body !== undefined ? jsonHeaders() : {} });
    if (o.path.includes('{')) {
      call('unknown id', fillPath(o.path, (n) => (n === 'event_id' ? 'evt_2Lh7kQ9rXc3vB1nT' : n === 'phone' ? '+4930123456789' : 2147483000)));
      call('id not an integer', fillPath(o.path, () => 'abc'));
      if (o.path.includes('{company_id}')) call('another company', fillPath(o.path, (n) => (n === 'company_id' ? fixtures.other_company_id : undefined)));
    }
    if (body !== undefined) {
      const raw = { headers: { ...credentials(o.op), ...jsonHeaders() } };
      call('malformed JSON', fillPath(o.path), { ...raw, body: '{"name": ' });
      call('body of the wrong type', fillPath(o.path), { ...raw, body: '[1, 2]' });
      call('empty JSON body', fillPath(o.path), { ...raw, body: '' });
    }
    call('trailing slash', `${fillPath(o.path)}/`);
  }
  await pool(variants, 8, send);
  assert.deepEqual(failures, []);
});

test('public operations: 401 invalid key, 403, 413, 400 unparseable, 429 with Retry-After, Idempotency-Key replay, 409 in flight', async () => {
  failures.length = 0;
  // A company of its own: the generated happy requests changed the fixture company (PATCH ...).
  const { companyId, key } = await s.company({ default_country: 'DE' });
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } });
  const segment = (await s.api('/api/segments/create', { key, body: { name: 'VIP' } })).json.segment_id;
  const post = (label: string, url: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    send({ label, method: 'POST', url, headers: { 'content-type': 'application/json', 'service-api-key': key, ...headers }, body });
  assert.equal((await post('invalid key', '/api/segments/create', '{"name":"x"}', { 'service-api-key': 'cms_live_unknown' })).status, 401);
  assert.equal((await post('not text', '/api/segments/create', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))).status, 400);
  assert.equal((await post('too large', '/api/segments/create', `{"name":"${'x'.repeat(1024 * 1024)}"}`)).status, 413);
  // 4.2 allows 1 per minute: the second is 429 with Retry-After.
  const contactsUrl = `/api/segments/${segment}/contacts`;
  const first = await post('segment contacts', contactsUrl, JSON.stringify({ contacts: ['+4915112345678'], mode: 'add' }));
  const second = await post('segment contacts again', contactsUrl, JSON.stringify({ contacts: ['+4915112345678'], mode: 'add' }));
  assert.ok([first.status, second.status].includes(429), `${first.status} ${second.status}`);
  // An Idempotency-Key replay answers the stored answer with Idempotent-Replayed.
  const idem = { 'idempotency-key': `contract-${Date.now()}` };
  const body = JSON.stringify({ automation_id: automation.automation_id, contacts: [{ phone: '+4917612345678' }] });
  const a = await post('idempotent send', '/api/automations/send', body, idem);
  const b = await post('idempotent replay', '/api/automations/send', body, idem);
  assert.equal(a.status, 200);
  assert.equal(b.headers.get('idempotent-replayed'), 'true');
  assert.equal((await post('idempotency key reused', '/api/automations/send', body.replace('+4917612345678', '+4917612345679'), idem)).status, 422);
  assert.equal((await post('malformed idempotency key', '/api/automations/send', body, { 'idempotency-key': 'ä' })).status, 400);
  // 403: a company without subscription (4.2), a connector not connected (4.4).
  const unsubscribed = await s.company({ subscription_active: false });
  assert.equal((await post('no subscription', contactsUrl, JSON.stringify({ contacts: [], mode: 'add' }), { 'service-api-key': unsubscribed.key })).status, 403);
  assert.equal((await post('connector not connected', '/api/connector/send', JSON.stringify({ campaign_id: 1, contacts: [{ phone: '+4915112345678' }] }), { 'service-api-key': unsubscribed.key })).status, 404);
  // 409: the key is claimed by a request still being handled (claimed here as the pipeline claims it).
  const inFlight = `contract-in-flight-${Date.now()}`;
  const db = s.service.deps.database.db;
  assert.equal((await claimKey(db, companyId, inFlight, requestHash('trigger_automation', Buffer.from(body)), s.service.deps.clock.now())).kind, 'claimed');
  const busy = await post('idempotency key in flight', '/api/automations/send', body, { 'idempotency-key': inFlight });
  assert.equal(busy.status, 409);
  assert.equal(busy.headers.get('retry-after'), '1');
  assert.deepEqual(failures, []);
});

test('webhooks: a signed payload and the handshake; signature refusals, malformed payloads', async () => {
  failures.length = 0;
  const post = (label: string, url: string, body: string, headers: Record<string, string> = {}) =>
    send({ label, method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, body });
  assert.equal((await post('whatsapp not json', '/webhooks/whatsapp', 'nope')).status, 400);
  const meta = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: { metadata: { phone_number_id: '106540352242922' }, statuses: [] } }] }] });
  assert.equal((await post('whatsapp unsigned', '/webhooks/whatsapp', meta, { 'x-hub-signature-256': 'sha256=00' })).status, 401);
  assert.equal((await post('gateway bad shape', '/webhooks/provider/status', '{"statuses":[]}')).status, 400);
  const receipts = JSON.stringify({ statuses: [{ message_id: '3f0c9a52-8d1e-4b7a-9c2f-6e5d4a3b2c1d', status: 'delivered', timestamp: '2026-06-01T12:00:05Z' }] });
  assert.equal((await post('gateway unknown message', '/webhooks/provider/status', receipts, { 'webhook-id': 'msg_1', 'webhook-timestamp': '1780315205', 'webhook-signature': 'v1,AAAA' })).status, 401);
  // A company's WhatsApp channel: the signed payload and the handshake succeed.
  const phoneNumberId = String(100000000000000 + Math.floor(Math.random() * 1e14));
  const appSecret = 'contract-app-secret';
  await s.admin('PUT', `/admin/companies/${fixtures.company_id}/channel`, {
    provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: 'EAAG-contract', app_secret: appSecret, verify_token: 'contract-verify-token',
  });
  const signed = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: { metadata: { phone_number_id: phoneNumberId }, statuses: [] } }] }] });
  const signature = `sha256=${createHmac('sha256', appSecret).update(signed).digest('hex')}`;
  assert.equal((await post('whatsapp signed', '/webhooks/whatsapp', signed, { 'x-hub-signature-256': signature })).status, 200);
  const handshake = await send({ label: 'handshake', method: 'GET', url: '/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=contract-verify-token&hub.challenge=1158201444' });
  assert.equal(handshake.status, 200);
  assert.equal(handshake.text, '1158201444');
  const verify = await send({ label: 'handshake refused', method: 'GET', url: '/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=unknown&hub.challenge=1158201444' });
  assert.equal(verify.status, 403);
  await send({ label: 'webhook trailing slash', method: 'POST', url: '/webhooks/provider/status/', headers: jsonHeaders(), body: receipts });
  assert.deepEqual(failures, []);
});

test('health, metrics; unknown routes answer 404/405 in the documented error shape', async () => {
  failures.length = 0;
  for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await send({ label: url, method: 'GET', url })).status, 200);
  const detail = contract.doc.components.schemas.Detail;
  assert.ok(detail, 'components.schemas.Detail');
  for (const [method, url, status] of [['GET', '/api/unknown', 404], ['GET', '/api/segments/create', 405], ['POST', '/admin/unknown', 404]] as const) {
    const res = await fetch(s.url + url, { method, headers: admin });
    assert.equal(res.status, status, `${method} ${url}`);
    const body = await res.json();
    assert.equal(typeof body.detail, 'string');
    if (status === 405) assert.ok(res.headers.get('allow'), 'Allow on 405');
  }
  assert.deepEqual(failures, []);
});

test('coverage: every documented operation was called, and answered an error at least once if it documents one', () => {
  const missing: string[] = [];
  for (const o of contract.operations) {
    const seen = calls.get(`${o.method} ${o.path}`);
    if (!seen) missing.push(`${o.method} ${o.path}: never called`);
    else if (Object.keys(o.op.responses).some((st) => /^4/.test(st)) && ![...seen.statuses].some((st) => st >= 400)) missing.push(`${o.method} ${o.path}: no error answer (${[...seen.statuses].join(', ')})`);
  }
  assert.deepEqual(missing, []);
});
