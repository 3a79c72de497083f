/**
 * The property-based fuzz of the four public operations (test/fuzz/public-api.test.ts for 4.1 and 4.2,
 * public-api-trigger.test.ts for 4.3, public-api-connector.test.ts for 4.4: three files so that none
 * runs longer than 15 s): the server and companies it runs against ({@link publicApiServer}), the
 * request generator and the checks on every answer ({@link fuzz}). For each operation FUZZ_RUNS requests
 * (default 2,000) go to the real server over HTTP, about 40 % valid and 60 % mutated (see
 * generators.ts and mutations.ts). Checks on every answer:
 *
 * - never a 5xx; always JSON with a JSON Content-Type;
 * - every 4xx body is `{detail: string}`, `{detail: [{type, loc, msg, input?, ctx?}]}` or `{error: string}`;
 * - a valid request is never refused with 422; more precisely it gets the status the current state
 *   decides (200, or the documented 400/403/404, or 429 when the limiter was not reset);
 * - a request whose defect docs/decisions.md fixes gets that status, in its order: 413, 400 (encoding,
 *   nesting, digits), 422 json_invalid, 401, 403, 422 validation, 400 bad Idempotency-Key;
 * - another company's key with this company's ids gets 404, as an unknown id does (BOLA);
 * - every answer of a documented status matches the document's schema (Ajv), and a 200 agrees with
 *   its request (echoed name, segment id, mode, counts).
 *
 * In `npm test` the seed is fixed ({@link FIXED_SEED}): the run is the same every time. `npm run
 * test:fuzz` (FUZZ_SEED=random) draws a new seed; the seed is printed either way; replay a run with
 * FUZZ_SEED=<seed> (and FUZZ_RUNS=<n>). Rate limits: each
 * request resets its company's window first, except in a tenth of the runs, where a 429 may answer.
 */
import { after, before, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { AutomationContact, ConnectorContact, jsonSchemaComponents, type Model } from '../../src/http/validation/index.ts';
import { ajvProblem, errorShapeProblem } from './checks.ts';
import { freshDatabase, type FreshDatabase } from './fresh-database.ts';
import { integerArb, isRaw, MAX_INT_DIGITS, MAX_NESTING, toJsonText, validArb, type Hints } from './generators.ts';
import { BODY_LIMIT, isJsonType, JSON_CONTENT_TYPES, mutateValue, mutationPickArb, OTHER_CONTENT_TYPES, rawBodies, type RawBody } from './mutations.ts';
import { loadPublicApi, type DocumentedOperation, type PublicApiDocument } from './openapi.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
/** The seed of `npm test`'s run (deterministic; random seeds only with FUZZ_SEED=random). */
const FIXED_SEED = 20261124;
const SEED = process.env.FUZZ_SEED === 'random' ? (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0
  : process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== '' ? Number(process.env.FUZZ_SEED) : FIXED_SEED;

/** How the `service-api-key` header is sent. */
type KeyChoice =
  | 'own' | 'other' | 'unsubscribed' | 'padded' | 'dupOwnFirst'          // authenticate
  | 'missing' | 'empty'                                                     // 401 Not authenticated
  | 'garbage' | 'badChecksum' | 'revoked' | 'dupGarbageFirst' | 'lowercase'; // 401 Invalid API key

const NOT_AUTHENTICATED: KeyChoice[] = ['missing', 'empty'];
const INVALID_KEY: KeyChoice[] = ['garbage', 'badChecksum', 'revoked', 'dupGarbageFirst', 'lowercase'];

/** One generated request, before the runtime state (keys, companies) fills it in. */
interface RequestSpec {
  valid: boolean;
  labels: string[];
  value: unknown;
  ascii: boolean;
  raw?: RawBody;
  /** Status a single schema mutation makes certain (422; parser limits are recomputed from the value). */
  certain?: 400 | 422;
  schemaMutations: number;
  contentType: string | null;
  key: KeyChoice;
  /** Path parameters as sent (already URL-encoded). */
  path: Record<string, string>;
  pathCertain422?: boolean;
  /** A path that may not even reach the route (empty segment, `..`, encoded slash): generic checks only. */
  pathUncertain?: boolean;
  idem: 'none' | 'fresh' | 'reuse' | { bad: string };
  reset: boolean;
}

interface Company {
  companyId: number;
  key: string;
  segments: number;
  /** Ids of this company's segments (created in setup or by 4.1 runs). */
  segmentIds: Set<number>;
  automations: Map<number, 200 | 400>;
  campaigns: Set<number>;
  subscribed: boolean;
}

export let s: TestServer;
export let doc: PublicApiDocument;
export let agent: Agent;
let fresh: FreshDatabase | undefined;
let own: Company;          // subscription, connector, automations, a campaign, a segment
let other: Company;        // another tenant: subscription and connector, no objects
let unsubscribed: Company; // no subscription, no connector
let revokedKey: string;
let segmentOwner: Company; // 4.1 only: replaced when it holds 20 segments
const phones = ['+4915112345678', '+4915112345679', '+14155550100', '+447700900123', '4915112345670'];
/** Every status docs/api.md, and docs/decisions.md give the public operations. */
const KNOWN_STATUSES = new Set([200, 400, 401, 403, 404, 409, 413, 422, 429]);
export const IDEMPOTENCY_MISMATCH = 'Idempotency-Key reused with a different request';
/** Statuses each operation answered during the fuzz runs. */
export const answered = new Map<string, Set<number>>();
let idemCounter = 0;
let lastIdemKey = 'never-used';
let rotations = 0;

export async function newCompany(subscribed = true, connector = true): Promise<Company> {
  const c = await s.company({ subscription_active: subscribed });
  if (connector) await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true });
  return { companyId: c.companyId, key: c.key, segments: 0, segmentIds: new Set(), automations: new Map(), campaigns: new Set(), subscribed };
}

/**
 * Registers the hooks of a test file of the fuzz: before its tests, a server (`role: api`; on PostgreSQL
 * in a database of its own) and its companies, keys, automations, a campaign and a segment; after
 * them, closes it all. Call once at the top level of the file; the exported bindings (`s`, `doc`,
 * `agent`, `answered`) are that file's while it runs.
 */
export function publicApiServer(): void {
  before(async () => {
    answered.clear();
    // On PostgreSQL, a database of its own (dropped at the end): the fuzz writes thousands of batches.
    if (process.env.TEST_DATABASE_URL) fresh = await freshDatabase(process.env.TEST_DATABASE_URL, 'fuzz');
    s = await startTestServer({ role: 'api', ...(fresh ? { env: { DATABASE_URL: fresh.url } } : {}) });
    agent = new Agent({ connections: 4, keepAliveTimeout: 10_000 });
    // Component schemas the document may name without defining come from the same source the server
    // documents its request models from (reported by the $ref test below).
    const fallbacks = jsonSchemaComponents([AutomationContact, ConnectorContact] as Model<unknown>[]) as Record<string, object>;
    doc = await loadPublicApi(s.url, fallbacks);
    own = await newCompany();
    other = await newCompany();
    unsubscribed = await newCompany(false, false);
    segmentOwner = await newCompany();
    const template = { body: 'Hi {{ first_name }} {{ order_id }}', buttons: [{ type: 'url', text: 'Go', url: 'https://shop.example/x' }] };
    for (const [type, active, status] of [['api', true, 200], ['api', false, 400], ['event', true, 400]] as const) {
      const a = await s.admin('POST', `/admin/companies/${own.companyId}/automations`, { name: `${type}-${active}`, type, active, template });
      own.automations.set(a.automation_id, status);
    }
    own.campaigns.add((await s.admin('POST', `/admin/companies/${own.companyId}/campaigns`, { name: 'c', template })).campaign_id);
    const seg = await s.api('/api/segments/create', { key: own.key, body: { name: 'fuzz' } });
    own.segmentIds.add(seg.json.segment_id);
    own.segments = 1;
    await s.admin('PUT', `/admin/companies/${own.companyId}/contacts`, { contacts: phones.map((phone) => ({ phone, first_name: 'F' })) });
    const k = await s.admin('POST', `/admin/companies/${own.companyId}/api-keys`, { label: 'revoked' });
    await s.admin('DELETE', `/admin/api-keys/${k.key_id}`, undefined, 204);
    revokedKey = k.api_key;
  });

  after(async () => {
    await agent?.close();
    await s?.close();
    await fresh?.drop();
  });
}

/** Whether bytes are strict UTF-8 (a body under a non-JSON Content-Type is read as such text). */
function isUtf8(b: Buffer): boolean {
  try { new TextDecoder('utf-8', { fatal: true }).decode(b); return true; } catch { return false; }
}

/** Whether a body value exceeds the parser's limits: nesting over 512 or an integer over 4300 digits. */
function parserLimitHit(value: unknown): boolean {
  const walk = (v: unknown, depth: number): boolean => {
    if (isRaw(v)) return /^-?\d+$/.test(toJsonText(v)) && toJsonText(v).replace('-', '').length > MAX_INT_DIGITS;
    if (v === null || typeof v !== 'object') return false;
    if (depth + 1 > MAX_NESTING) return true;
    return (Array.isArray(v) ? v : Object.values(v)).some((x) => walk(x, depth + 1));
  };
  return walk(value, 0);
}

/** The integer a generated JSON value or path text stands for, when it is one. */
function intOf(v: unknown): bigint | undefined {
  let text: string;
  if (typeof v === 'number') text = String(v);
  else if (typeof v === 'string') text = v.trim().replace(/_/g, '');
  else if (v !== null && typeof v === 'object' && (JSON as unknown as { isRawJSON(x: unknown): boolean }).isRawJSON(v)) text = JSON.stringify(v);
  else return undefined;
  const m = /^([+-]?\d+)(?:\.0*)?$/.exec(text);
  return m ? BigInt(m[1]) : undefined;
}

/** Arbitrary of requests for one operation: valid ones and mutated ones. */
function requestArb(op: DocumentedOperation, hints: Hints): fc.Arbitrary<RequestSpec> {
  const body = validArb(op.body, hints);
  const idempotent = op.headerParams.some((h) => h.name === 'idempotency-key');
  const pathArb: fc.Arbitrary<Record<string, string>> = op.pathParams.length === 0
    ? fc.constant({})
    : fc.tuple(...op.pathParams.map((p) => fc.oneof(
      { weight: 6, arbitrary: integerArb(hints.ids[p.name] ?? []).map((v) => String(intOf(v) ?? 0n)) },
      // Lax spellings of an integer (docs/decisions.md#1-request-handling-order, step 5).
      { weight: 1, arbitrary: fc.constantFrom(...(hints.ids[p.name] ?? [1]).flatMap((id) => [` +${id} `, `0${id}`, `${id}`.replace(/^(\d)(\d+)$/, '$1_$2')])) },
    ).map((t) => [p.name, encodeURIComponent(t)] as const))).map((entries) => Object.fromEntries(entries));
  const validKey = fc.constantFrom<KeyChoice>('own', 'own', 'own', 'own', 'own', 'own', 'other', 'unsubscribed', 'padded', 'dupOwnFirst');
  const reset = fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
  const base = fc.record({
    value: body,
    ascii: fc.boolean(),
    contentType: fc.oneof({ weight: 5, arbitrary: fc.constant('application/json') }, { weight: 2, arbitrary: fc.constantFrom(...JSON_CONTENT_TYPES) }),
    key: validKey,
    path: pathArb,
    idem: idempotent ? fc.constantFrom<'none' | 'fresh'>('none', 'fresh') : fc.constant<'none'>('none'),
    reset,
  });
  const valid = base.map((b): RequestSpec => ({ ...b, valid: true, labels: ['valid'], schemaMutations: 0 }));

  type Mutator = (spec: RequestSpec) => RequestSpec;
  const families: fc.WeightedArbitrary<Mutator>[] = [
    { weight: 6, arbitrary: mutationPickArb.map((pick) => (spec: RequestSpec) => {
      const m = mutateValue(spec.value, op.body, pick);
      // A second mutation may undo or outrank the first: certainty only for a single one.
      const first = spec.schemaMutations === 0;
      return { ...spec, value: m.value, labels: [...spec.labels, m.label], certain: first ? m.certain : undefined, schemaMutations: spec.schemaMutations + 1 };
    }) },
    { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([choice, cut]) => (spec: RequestSpec) => {
      const r = rawBodies(toJsonText(spec.value, spec.ascii), choice, cut);
      return { ...spec, raw: r, labels: [...spec.labels, r.label] };
    }) },
    { weight: 1, arbitrary: fc.constantFrom(...OTHER_CONTENT_TYPES).map((ct) => (spec: RequestSpec) => ({ ...spec, contentType: ct, labels: [...spec.labels, `Content-Type ${JSON.stringify(ct)}`] })) },
    { weight: 1, arbitrary: fc.constantFrom<KeyChoice>(...NOT_AUTHENTICATED, ...INVALID_KEY, 'other', 'unsubscribed').map((key) => (spec: RequestSpec) => ({ ...spec, key, labels: [...spec.labels, `key ${key}`] })) },
  ];
  if (op.pathParams.length) {
    families.push({ weight: 1, arbitrary: fc.constantFrom(
      ['abc', true], ['1.5', true], ['true', true], ['0x1F', true], ['1e3', false], ['', false], ['%20', false], ['%00', false],
      ['9'.repeat(5000), false], ['-', false], ['%F0%9F%98%80', false], ['..', false], ['%2F', false], ['1%2F2', false], ['%E2%80%8B1', false],
    ).map(([text, certain]) => (spec: RequestSpec) => ({
      ...spec, path: { [op.pathParams[0].name]: text }, pathCertain422: certain, pathUncertain: !certain, labels: [...spec.labels, `path ${text.slice(0, 20)}`],
    })) });
  }
  if (idempotent) {
    families.push({ weight: 1, arbitrary: fc.constantFrom<RequestSpec['idem']>('reuse', { bad: '' }, { bad: 'a b' }, { bad: 'k'.repeat(256) }, { bad: '"x" y' }).map((idem) => (spec: RequestSpec) => ({
      ...spec, idem, labels: [...spec.labels, `Idempotency-Key ${typeof idem === 'string' ? idem : JSON.stringify(idem.bad.slice(0, 10))}`],
    })) });
  }
  const mutated = fc.tuple(base, fc.array(fc.oneof(...families), { minLength: 1, maxLength: 2 }))
    .map(([b, ms]) => ms.reduce((spec, m) => m(spec), { ...b, valid: false, labels: [], schemaMutations: 0 } as RequestSpec));
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: mutated });
}

function companyOf(key: KeyChoice, opId: string): Company | undefined {
  if (key === 'other') return other;
  if (key === 'unsubscribed') return unsubscribed;
  if (key === 'own' || key === 'padded' || key === 'dupOwnFirst') return opId === 'create_segment' ? segmentOwner : own;
  return undefined;
}

function keyHeaders(key: KeyChoice, company: Company | undefined): string[] {
  const k = company?.key ?? own.key;
  switch (key) {
    case 'missing': return [];
    case 'empty': return ['service-api-key', ''];
    case 'garbage': return ['service-api-key', 'not-a-key'];
    case 'badChecksum': return ['service-api-key', own.key.slice(0, -1) + (own.key.endsWith('A') ? 'B' : 'A')];
    case 'revoked': return ['service-api-key', revokedKey];
    case 'lowercase': return ['service-api-key', own.key.toLowerCase() === own.key ? own.key.toUpperCase() : own.key.toLowerCase()];
    case 'padded': return ['service-api-key', `  ${k}\t`];
    case 'dupOwnFirst': return ['service-api-key', k, 'service-api-key', 'not-a-key'];
    case 'dupGarbageFirst': return ['service-api-key', 'not-a-key', 'service-api-key', own.key];
    default: return ['service-api-key', k];
  }
}

/**
 * The statuses docs/decisions.md allows for this request in the current state, or undefined when only the
 * generic checks apply. Follows the order of docs/decisions.md#1-request-handling-order: parsing, authentication, subscription,
 * validation, Idempotency-Key, rate limit, the operation.
 */
function allowedStatuses(op: DocumentedOperation, spec: RequestSpec, bytes: Buffer, company: Company | undefined): Set<number> | undefined {
  if (spec.pathUncertain) return undefined;
  if (bytes.length > BODY_LIMIT) return new Set([413]);
  const json = isJsonType(spec.contentType);
  // What validation will see: undefined when only the generic checks apply.
  let validation: 422 | undefined;
  if (spec.raw) {
    if (spec.raw.bytes.length === 0) validation = 422; // missing, whatever the Content-Type
    else if (!json) {
      // Any other Content-Type: the text itself is the input (model_attributes_type), if it is UTF-8.
      if (!isUtf8(spec.raw.bytes)) return new Set([400]);
      validation = 422;
    } else if (spec.raw.json?.stage === 'parse') {
      // A text damaged after a part the parser refuses anyway (too deep, too many digits) may stop there.
      return new Set(spec.raw.json.status === 422 && parserLimitHit(spec.value) ? [400, 422] : [spec.raw.json.status]);
    }
    else if (spec.raw.json) validation = spec.raw.json.status as 422;
    else return undefined;
  } else if (json && parserLimitHit(spec.value)) return new Set([400]);
  if (NOT_AUTHENTICATED.includes(spec.key) || INVALID_KEY.includes(spec.key)) return new Set([401]);
  if (!company) return undefined;
  if (op.operationId === 'manage_segment_contacts' && !company.subscribed) return new Set([403]);
  if (validation || !json || spec.certain === 422 || spec.pathCertain422) return new Set([422]);
  if (!spec.valid) return undefined;
  if (typeof spec.idem === 'object') return new Set([400]);
  const ok = new Set<number>(spec.reset ? [] : [429]);
  const v = spec.value as Record<string, unknown>;
  switch (op.operationId) {
    case 'create_segment':
      ok.add(company.segments < 20 ? 200 : 400);
      break;
    case 'manage_segment_contacts':
      const id = intOf(decodeURIComponent(spec.path.segment_id));
      ok.add([...company.segmentIds].some((x) => BigInt(x) === id) ? 200 : 404);
      break;
    case 'trigger_automation': {
      const id = intOf(v.automation_id);
      const hit = [...company.automations].find(([a]) => BigInt(a) === id);
      ok.add(hit ? hit[1] : 404);
      break;
    }
    case 'connector_send': {
      const id = intOf(v.campaign_id);
      ok.add([...company.campaigns].some((c) => BigInt(c) === id) ? 200 : 404);
      break;
    }
  }
  return ok;
}

/** Checks a 200 against its request beyond the schema. Returns a problem or null. */
function successProblem(opId: string, spec: RequestSpec, body: any): string | null {
  const v = spec.value as Record<string, any>;
  if (spec.raw || !spec.valid) return null;
  switch (opId) {
    case 'create_segment': {
      const sent = String(v.name).replace(/\u0000/g, '\ufffd');
      return body.name === sent ? null : `name ${JSON.stringify(body.name)} is not the name sent`;
    }
    case 'manage_segment_contacts': {
      if (BigInt(body.segment_id) !== intOf(decodeURIComponent(spec.path.segment_id))) return 'segment_id differs from the path';
      if (body.mode !== v.mode) return 'mode differs from the request';
      if (body.contacts_found + body.contacts_not_found !== body.contacts_provided) return 'found + not_found != provided';
      if (body.contacts_processed > body.contacts_found) return 'processed > found';
      if (body.contacts_provided > v.contacts.length) return 'provided > items sent';
      return null;
    }
    case 'trigger_automation':
      return body.contacts <= Math.min(50, v.contacts.length) ? null : `contacts ${body.contacts} > min(50, ${v.contacts.length})`;
    case 'connector_send': {
      const m = /^Campaign send queued for (\d+) contacts \(batch [0-9a-f-]{36}\)$/.exec(body.message);
      return m && Number(m[1]) <= v.contacts.length ? null : `unexpected message ${JSON.stringify(body.message)}`;
    }
  }
  return null;
}

interface Stats { runs: number; valid: number; statuses: Map<number, number> }

/** Sends one request and checks the answer; throws an AssertionError describing the request. */
async function execute(op: DocumentedOperation, spec: RequestSpec, stats: Stats): Promise<void> {
  if (op.operationId === 'create_segment' && segmentOwner.segments >= 20 && rotations++ % 3 === 0) segmentOwner = await newCompany();
  const company = companyOf(spec.key, op.operationId);
  const ruleName = { create_segment: 'create_segment', manage_segment_contacts: 'segment_contacts', trigger_automation: 'trigger_automation', connector_send: 'connector_send' }[op.operationId];
  if (company && spec.reset) await s.service.deps.rateLimiter.reset(`${company.companyId}:${ruleName}`);

  const bytes = spec.raw ? spec.raw.bytes : Buffer.from(toJsonText(spec.value, spec.ascii), 'utf8');
  const headers = keyHeaders(spec.key, company);
  if (spec.contentType !== null) headers.push('content-type', spec.contentType);
  if (spec.idem === 'fresh') headers.push('idempotency-key', (lastIdemKey = `fuzz-${SEED}-${++idemCounter}`));
  else if (spec.idem === 'reuse') headers.push('idempotency-key', lastIdemKey);
  else if (typeof spec.idem === 'object') headers.push('idempotency-key', spec.idem.bad);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => spec.path[name]);
  const allowed = allowedStatuses(op, spec, bytes, company);

  const res = await request(s.url + path, { method: 'POST', headers, body: bytes, dispatcher: agent });
  const text = await res.body.text();
  const status = res.statusCode;
  stats.runs++;
  if (spec.valid) stats.valid++;
  stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
  if (status === 200 && op.operationId === 'create_segment' && company) {
    company.segments++;
    company.segmentIds.add((JSON.parse(text) as { segment_id: number }).segment_id);
  }

  const shown = bytes.length > 600 ? `${bytes.subarray(0, 600).toString('utf8')}… (${bytes.length} bytes)` : bytes.toString('utf8');
  const where = `${spec.valid ? 'valid' : 'mutated'} request [${spec.labels.join(' | ')}] POST ${path.slice(0, 120)} key=${spec.key} content-type=${JSON.stringify(spec.contentType)} idem=${JSON.stringify(spec.idem)}\nbody: ${shown}\nanswer ${status}: ${text.slice(0, 600)}`;
  const fail = (why: string) => assert.fail(`${why}\n${where}`);

  if (status >= 500) fail('5xx answer');
  if (!KNOWN_STATUSES.has(status)) fail(`status ${status} is none that docs/api.md or docs/decisions.md names`);
  let body: unknown;
  try { body = JSON.parse(text); } catch { fail('answer is not JSON'); }
  const ct = String(res.headers['content-type'] ?? '');
  if (!/^application\/json\b/.test(ct)) fail(`answer Content-Type ${ct}`);
  if (status >= 400) {
    const problem = errorShapeProblem(body);
    if (problem) fail(`4xx body not in a documented shape: ${problem}`);
  }
  if (spec.valid && status === 422) fail('valid request refused with 422');
  if (allowed && !allowed.has(status)) fail(`status ${status}, expected ${[...allowed].join(' or ')}`);
  const validate = op.responses.get(String(status));
  answered.set(op.operationId, (answered.get(op.operationId) ?? new Set()).add(status));
  if (validate && !validate(body)) fail(`answer does not match the documented ${status} schema: ${ajvProblem(validate)}`);
  if (status === 200) {
    if (!validate) fail('no 200 schema documented');
    const problem = successProblem(op.operationId, spec, body);
    if (problem) fail(problem);
  }
}

/** Runs the property for one operation and reports what the run covered. */
export async function fuzz(t: TestContext, operationId: string): Promise<void> {
  const op = doc.operations.get(operationId);
  assert.ok(op, `${operationId} is in the OpenAPI document`);
  const hints: Hints = {
    ids: {
      // The triggerable automation three times as often as the inactive and the non-api one.
      automation_id: [...own.automations].flatMap(([id, status]) => (status === 200 ? [id, id, id] : [id])),
      campaign_id: [...own.campaigns],
      segment_id: [...own.segmentIds],
    },
    phones,
  };
  const stats: Stats = { runs: 0, valid: 0, statuses: new Map() };
  t.diagnostic(`${operationId}: seed ${SEED}, ${RUNS} runs (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
  await fc.assert(fc.asyncProperty(requestArb(op, hints), (spec) => execute(op, spec, stats)), { seed: SEED, numRuns: RUNS, endOnFailure: process.env.FUZZ_SHRINK === '0' });
  const histogram = [...stats.statuses].sort(([a], [b]) => a - b).map(([k, n]) => `${k}:${n}`).join(' ');
  t.diagnostic(`${operationId}: ${stats.runs} requests, ${stats.valid} valid; statuses ${histogram}`);
  // The run must have exercised both sides: successes and validation refusals.
  if (RUNS >= 200) {
    assert.ok(stats.valid >= RUNS * 0.25, `only ${stats.valid} valid requests`);
    assert.ok((stats.statuses.get(200) ?? 0) >= RUNS * 0.05, `only ${stats.statuses.get(200) ?? 0} answers 200`);
    assert.ok((stats.statuses.get(422) ?? 0) >= RUNS * 0.1, `only ${stats.statuses.get(422) ?? 0} answers 422`);
  }
}

