/**
 * The operator API as `/openapi.json` documents it, for the routes of
 * src/http/admin/{api-keys,companies,automations,campaigns,sources,batches,audit}.ts:
 *
 * - every operation has a unique `operationId`, tags, a summary, and a documented answer (description,
 *   body schema, example) for every status it can answer; no `200 "Default Response"` without a schema;
 * - the shapes are named components (`$ref` to `Company`, `ApiKey`, `AdminValidationError` ..., never
 *   `def-N`);
 * - every example (request and answer) validates against its own schema (Ajv, JSON Schema 2020-12);
 * - real answers of the running server, happy and error ones, validate against the documented schema
 *   of their status, and carry the documented headers (`x-request-id`, `WWW-Authenticate` on 401);
 * - every 422 is the admin list shape, also the ones a domain rule raises (unsupported country, private
 *   webhook URL, invalid phone, past schedule);
 * - an empty body with `Content-Type: application/json` answers as without the header;
 * - every status that a sample of bad requests gets (401, 415, 422, 404), on every /admin operation of
 *   the document, is documented on that operation with a body that validates; a body that may be
 *   left out is `required: false`; `Message.rendered` has its object schema.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** The operations of this file's scope and every status each can answer. */
const OPERATIONS: [method: string, path: string, statuses: number[]][] = [
  ['post', '/admin/companies/{company_id}/api-keys', [201, 401, 404, 422]],
  ['get', '/admin/companies/{company_id}/api-keys', [200, 401, 404, 422]],
  ['delete', '/admin/api-keys/{key_id}', [204, 401, 404, 422]],
  ['post', '/admin/companies', [201, 401, 422]],
  ['get', '/admin/companies', [200, 401]],
  ['get', '/admin/companies/{company_id}', [200, 401, 404, 422]],
  ['patch', '/admin/companies/{company_id}', [200, 401, 404, 422]],
  ['delete', '/admin/companies/{company_id}/rate-limits', [204, 401, 404, 422]],
  ['put', '/admin/companies/{company_id}/connector', [200, 401, 404, 422]],
  ['put', '/admin/companies/{company_id}/channel', [200, 401, 404, 409, 422]],
  ['post', '/admin/companies/{company_id}/automations', [201, 401, 404, 422]],
  ['patch', '/admin/automations/{automation_id}', [200, 401, 404, 422]],
  ['post', '/admin/companies/{company_id}/campaigns', [201, 401, 404, 422]],
  ['get', '/admin/batches/{batch_id}', [200, 401, 404, 422]],
  ['get', '/admin/batches/{batch_id}/messages', [200, 401, 404, 422]],
  ['get', '/admin/audit', [200, 401, 422]],
  ['get', '/admin/companies/{company_id}/automations', [200, 401, 404, 422]],
  ['get', '/admin/companies/{company_id}/campaigns', [200, 401, 404, 422]],
  ['get', '/admin/automations/{automation_id}', [200, 401, 404, 422]],
  ['get', '/admin/campaigns/{campaign_id}', [200, 401, 404, 422]],
  ['post', '/admin/automations/{automation_id}/preview', [200, 401, 404, 422]],
  ['post', '/admin/campaigns/{campaign_id}/preview', [200, 401, 404, 422]],
  ['post', '/admin/automations/{automation_id}/test-send', [202, 401, 404, 422]],
  ['post', '/admin/campaigns/{campaign_id}/test-send', [202, 401, 404, 422]],
  ['patch', '/admin/campaigns/{campaign_id}', [200, 401, 404, 422]],
  ['post', '/admin/campaigns/{campaign_id}/sends', [200, 202, 401, 404, 422]],
  ['post', '/admin/batches/{batch_id}/cancel', [200, 401, 404, 422]],
];

/** Components these routes define (src/http/admin/components.ts and the route files). */
const COMPONENTS = [
  'AdminValidationError', 'AdminValidationErrorItem', 'ApiKey', 'CreatedApiKey', 'Company', 'DeliveryHours', 'Connector',
  'ConnectorAnswer', 'ChannelView', 'ChannelAnswer', 'Template', 'Automation', 'Campaign', 'Batch', 'BatchCounts', 'Message',
  'AuditEntry', 'Source', 'CampaignUpdate', 'SendPlan', 'RenderedMessage', 'Preview', 'CancelAnswer',
];

const DOC_ID = 'https://cms.invalid/openapi.json';
const pointer = (...parts: (string | number)[]) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

let s: TestServer;
let doc: any;
let ajv: Ajv2020;

before(async () => {
  s = await startTestServer();
  doc = await (await fetch(`${s.url}/openapi.json`)).json();
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
});
after(() => s.close());

/** Validates `value` against the schema at `parts` of the document; returns Ajv's errors (empty when valid). */
function problems(value: unknown, ...parts: (string | number)[]): string[] {
  const validate = ajv.getSchema(`${DOC_ID}#/${pointer(...parts)}`);
  assert.ok(validate, `no schema at ${parts.join(' ')}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The examples of a media type object (`example` or every `examples[*].value`). */
function examplesOf(media: any): unknown[] {
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((e: any) => e.value);
}

/** Every `$ref` under `node`. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) if (k === '$ref' && typeof v === 'string') out.push(v); else refs(v, out);
  }
  return out;
}

describe('the document', () => {
  test('every operation: unique operationId, tags, summary, every status it can answer with a description', () => {
    const count = new Map<string, number>();
    for (const p of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(p)) if (op?.operationId) count.set(op.operationId, (count.get(op.operationId) ?? 0) + 1);
    }
    for (const [method, path, statuses] of OPERATIONS) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is documented`);
      assert.match(op.operationId ?? '', /^[a-z][a-z_]+$/, `${method} ${path} operationId`);
      assert.equal(count.get(op.operationId), 1, `operationId ${op.operationId} is unique in the document`);
      assert.ok(op.tags?.length && op.summary, `${method} ${path} tags and summary`);
      assert.deepEqual(op.security, [{ AdminBearer: [] }], `${method} ${path} security`);
      for (const status of statuses) {
        const answer = op.responses[String(status)];
        assert.ok(answer, `${method} ${path} documents ${status}`);
        assert.notEqual(answer.description, 'Default Response', `${method} ${path} ${status} description`);
        if (status === 204) assert.equal(answer.content, undefined, `${method} ${path} 204 has no body`);
        else assert.ok(answer.content?.['application/json']?.schema, `${method} ${path} ${status} has a body schema`);
      }
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        assert.ok(!(answer.description === 'Default Response' && !answer.content), `${method} ${path} ${status}: no schema-less default answer`);
      }
    }
  });

  test('shapes are named components, errors are Detail / AdminValidationError', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of COMPONENTS) assert.ok(names.includes(name), `component ${name}`);
    for (const [method, path] of OPERATIONS) {
      const op = doc.paths[path][method];
      for (const r of refs(op)) assert.doesNotMatch(r, /def-\d+$/, `${method} ${path}: ${r}`);
      for (const status of ['401', '404', '409']) {
        const schema = op.responses[status]?.content?.['application/json']?.schema;
        if (schema) assert.equal(schema.$ref, '#/components/schemas/Detail', `${method} ${path} ${status}`);
      }
      assert.equal(op.responses['422']?.content['application/json'].schema.$ref ?? '#/components/schemas/AdminValidationError', '#/components/schemas/AdminValidationError', `${method} ${path} 422`);
      assert.ok(op.responses['401'].headers?.['WWW-Authenticate'], `${method} ${path} 401 WWW-Authenticate`);
    }
  });

  test('every request and answer has an example, and each example validates against its schema', () => {
    for (const [method, path] of OPERATIONS) {
      const op = doc.paths[path][method];
      const body = op.requestBody?.content?.['application/json'];
      if (body) {
        const examples = examplesOf(body);
        assert.ok(examples.length > 0, `${method} ${path} request example`);
        for (const e of examples) assert.deepEqual(problems(e, 'paths', path, method, 'requestBody', 'content', 'application/json', 'schema'), [], `${method} ${path} request example`);
      }
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        const media = answer.content?.['application/json'];
        if (!media) continue;
        const examples = examplesOf(media);
        assert.ok(examples.length > 0, `${method} ${path} ${status} example`);
        for (const e of examples) assert.deepEqual(problems(e, 'paths', path, method, 'responses', status, 'content', 'application/json', 'schema'), [], `${method} ${path} ${status} example`);
      }
    }
  });
});

describe('optional bodies and typed answers', () => {
  test('the api-key body may be left out (and the CLI sends {} or {label}); a required body is required', () => {
    assert.equal(doc.paths['/admin/companies/{company_id}/api-keys'].post.requestBody.required, false);
    assert.equal(doc.paths['/admin/companies'].post.requestBody.required, true);
  });

  test('Message.rendered is the provider message object or null, not an untyped value', () => {
    const rendered = doc.components.schemas.Message.properties.rendered;
    assert.deepEqual(rendered.anyOf.map((s: any) => s.$ref ?? s.type), ['#/components/schemas/MessageRendered', 'null']);
    const shape = doc.components.schemas.MessageRendered;
    assert.equal(shape.type, 'object');
    for (const field of ['message_id', 'batch_id', 'company_id', 'kind', 'source_id', 'to', 'header', 'body', 'buttons']) assert.ok(shape.required.includes(field), field);
  });
});

describe('real answers match the document', () => {
  /** Sends a request and checks its answer against the operation's documented answer for its status. */
  async function call(method: string, template: string, path: string, body?: unknown, opts: { token?: string | null } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? ADMIN_TOKEN}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(s.url + path, { method: method.toUpperCase(), headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    const answer = doc.paths[template]?.[method]?.responses?.[String(res.status)];
    assert.ok(answer, `${method} ${path}: status ${res.status} is documented (${text})`);
    for (const name of Object.keys(answer.headers ?? {})) {
      if (name === 'Retry-After' || name === 'Location') continue; // only on some answers of that status
      assert.ok(res.headers.has(name), `${method} ${path} ${res.status}: header ${name}`);
    }
    if (res.status === 204) assert.equal(text, '');
    else assert.deepEqual(problems(json, 'paths', template, method, 'responses', res.status, 'content', 'application/json', 'schema'), [], `${method} ${path} ${res.status}: ${text}`);
    return { status: res.status, body: json };
  }

  test('companies, keys, connector, channel: happy and error answers', async () => {
    const c = await call('post', '/admin/companies', '/admin/companies', { name: 'Doc Co', default_country: 'GB', delivery_hours: { start: '08:00', end: '21:00', timezone: 'Europe/London' } });
    assert.equal(c.status, 201);
    const id = c.body.company_id;
    assert.equal((await call('get', '/admin/companies', '/admin/companies')).status, 200);
    assert.equal((await call('get', '/admin/companies/{company_id}', `/admin/companies/${id}`)).status, 200);
    assert.equal((await call('get', '/admin/companies', '/admin/companies', undefined, { token: null })).status, 401);
    assert.equal((await call('get', '/admin/companies/{company_id}', `/admin/companies/${id}`, undefined, { token: 'wrong' })).status, 401);
    assert.equal((await call('get', '/admin/companies/{company_id}', '/admin/companies/2147483000')).status, 404);
    assert.equal((await call('get', '/admin/companies/{company_id}', '/admin/companies/abc')).status, 422);
    assert.equal((await call('post', '/admin/companies', '/admin/companies', {})).status, 422);
    // Rules of the handler answer the same list shape, at the field.
    const country = await call('patch', '/admin/companies/{company_id}', `/admin/companies/${id}`, { default_country: 'XX' });
    assert.equal(country.status, 422);
    assert.deepEqual(country.body.detail.map((d: any) => [d.type, d.loc]), [['value_error', ['body', 'default_country']]]);
    const tz = await call('patch', '/admin/companies/{company_id}', `/admin/companies/${id}`, { delivery_hours: { start: '09:00', end: '17:00', timezone: 'Mars/Olympus' } });
    assert.deepEqual(tz.body.detail[0].loc, ['body', 'delivery_hours', 'timezone']);
    assert.equal((await call('patch', '/admin/companies/{company_id}', `/admin/companies/${id}`, { subscription_active: true })).body.subscription_active, true);

    const key = await call('post', '/admin/companies/{company_id}/api-keys', `/admin/companies/${id}/api-keys`, { label: 'doc' });
    assert.equal(key.status, 201);
    assert.equal((await call('post', '/admin/companies/{company_id}/api-keys', `/admin/companies/${id}/api-keys`)).status, 201);
    assert.equal((await call('post', '/admin/companies/{company_id}/api-keys', `/admin/companies/${id}/api-keys`, { label: 'x'.repeat(256) })).status, 422);
    assert.equal((await call('post', '/admin/companies/{company_id}/api-keys', '/admin/companies/2147483000/api-keys', {})).status, 404);
    const keys = await call('get', '/admin/companies/{company_id}/api-keys', `/admin/companies/${id}/api-keys`);
    assert.equal(keys.body.keys.length, 2);
    assert.equal((await call('get', '/admin/companies/{company_id}/api-keys', '/admin/companies/2147483000/api-keys')).status, 404);
    assert.equal((await call('delete', '/admin/api-keys/{key_id}', `/admin/api-keys/${key.body.key_id}`)).status, 204);
    assert.equal((await call('delete', '/admin/api-keys/{key_id}', '/admin/api-keys/2147483000')).status, 404);
    assert.equal((await call('delete', '/admin/api-keys/{key_id}', '/admin/api-keys/0')).status, 422);

    assert.equal((await call('put', '/admin/companies/{company_id}/connector', `/admin/companies/${id}/connector`, { connected: true, provider: 'pushy' })).status, 200);
    assert.equal((await call('put', '/admin/companies/{company_id}/connector', `/admin/companies/${id}/connector`, {})).status, 422);
    const channel = await call('put', '/admin/companies/{company_id}/channel', `/admin/companies/${id}/channel`, { provider: 'webhook', url: 'http://127.0.0.1:9/in' });
    assert.match(channel.body.secret, /^whsec_/, 'a generated secret is answered once');
    const privateUrl = await call('put', '/admin/companies/{company_id}/channel', `/admin/companies/${id}/channel`, { provider: 'webhook', url: 'http://10.0.0.7/hook' });
    assert.equal(privateUrl.status, 422);
    assert.deepEqual(privateUrl.body.detail[0].loc, ['body', 'url']);
    assert.equal((await call('put', '/admin/companies/{company_id}/channel', `/admin/companies/${id}/channel`, { provider: 'whatsapp' })).status, 422);
    assert.equal((await call('put', '/admin/companies/{company_id}/channel', `/admin/companies/${id}/channel`, { provider: 'outbox' })).body.channel.provider, 'outbox');
    assert.equal((await call('delete', '/admin/companies/{company_id}/rate-limits', `/admin/companies/${id}/rate-limits`)).status, 204);
    assert.equal((await call('get', '/admin/audit', `/admin/audit?company_id=${id}&limit=5`)).body.entries.length, 5);
    assert.equal((await call('get', '/admin/audit', '/admin/audit?limit=5000')).status, 422);
  });

  test('automations, campaigns, previews, sends, batches: happy and error answers', async () => {
    const company = await s.company();
    const id = company.companyId;
    const auto = await call('post', '/admin/companies/{company_id}/automations', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Hi {{ first_name }} {{ variables.order_id }}' } });
    assert.equal(auto.status, 201);
    assert.equal(auto.body.warnings.length, 1, 'no contact has order_id');
    const bad = await call('post', '/admin/companies/{company_id}/automations', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Hi {{ first_name | shout }}' } });
    assert.equal(bad.body.detail[0].type, 'template_error');
    assert.equal((await call('post', '/admin/companies/{company_id}/automations', '/admin/companies/2147483000/automations', { name: 'A', type: 'api', active: true, template: { body: 'x' } })).status, 404);
    assert.equal((await call('patch', '/admin/automations/{automation_id}', `/admin/automations/${auto.body.automation_id}`, { active: false })).body.active, false);
    assert.equal((await call('patch', '/admin/automations/{automation_id}', '/admin/automations/2147483000', { active: false })).status, 404);
    assert.equal((await call('get', '/admin/companies/{company_id}/automations', `/admin/companies/${id}/automations`)).body.length, 1);
    assert.equal((await call('get', '/admin/automations/{automation_id}', `/admin/automations/${auto.body.automation_id}`)).status, 200);
    assert.equal((await call('post', '/admin/automations/{automation_id}/preview', `/admin/automations/${auto.body.automation_id}/preview`, { first_name: 'Sam' })).status, 200);

    const camp = await call('post', '/admin/companies/{company_id}/campaigns', `/admin/companies/${id}/campaigns`, { name: 'C', template: { header: { type: 'text', text: 'Hello' }, body: 'Sale {{ first_name }}', buttons: [{ type: 'url', text: 'Shop', url: 'https://shop.example/' }] } });
    assert.equal(camp.status, 201);
    const cid = camp.body.campaign_id;
    assert.equal((await call('get', '/admin/companies/{company_id}/campaigns', `/admin/companies/${id}/campaigns`)).status, 200);
    assert.equal((await call('get', '/admin/companies/{company_id}/campaigns', '/admin/companies/2147483000/campaigns')).status, 404);
    assert.equal((await call('get', '/admin/campaigns/{campaign_id}', '/admin/campaigns/2147483000')).status, 404);
    assert.equal((await call('patch', '/admin/campaigns/{campaign_id}', `/admin/campaigns/${cid}`, { name: 'C2' })).body.campaign_id, cid);
    assert.equal((await call('patch', '/admin/campaigns/{campaign_id}', `/admin/campaigns/${cid}`, { template: { body: '{% if x %}' } })).status, 422);
    assert.equal((await call('post', '/admin/campaigns/{campaign_id}/preview', `/admin/campaigns/${cid}/preview`, { first_name: 'Ann' })).body.rendered.body, 'Sale Ann');
    const phone = await call('post', '/admin/campaigns/{campaign_id}/preview', `/admin/campaigns/${cid}/preview`, { phone: 'not a phone' });
    assert.deepEqual(phone.body.detail.map((d: any) => d.loc), [['body', 'phone']]);
    const number = `+49151${String(Date.now()).slice(-8)}`; // +4915 followed by 3 or 4 is not a valid mobile number
    const tested = await call('post', '/admin/campaigns/{campaign_id}/test-send', `/admin/campaigns/${cid}/test-send`, { phone: number });
    assert.equal(tested.status, 202);
    assert.equal((await call('post', '/admin/automations/{automation_id}/test-send', `/admin/automations/${auto.body.automation_id}/test-send`, { phone: 'nope' })).status, 422);
    assert.equal((await call('get', '/admin/batches/{batch_id}', `/admin/batches/${tested.body.batch_id}`)).status, 200);
    assert.equal((await call('get', '/admin/batches/{batch_id}/messages', `/admin/batches/${tested.body.batch_id}/messages`)).status, 200);
    assert.equal((await call('get', '/admin/batches/{batch_id}', '/admin/batches/not-a-uuid')).status, 404);
    assert.equal((await call('get', '/admin/batches/{batch_id}/messages', `/admin/batches/${'x'.repeat(65)}/messages`)).status, 422);

    const dry = await call('post', '/admin/campaigns/{campaign_id}/sends', `/admin/campaigns/${cid}/sends`, { contacts: [number, 'nope'], dry_run: true });
    assert.equal(dry.status, 200);
    assert.equal(dry.body.plan.skipped_invalid, 1);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const sent = await call('post', '/admin/campaigns/{campaign_id}/sends', `/admin/campaigns/${cid}/sends`, { contacts: [number], scheduled_for: later });
    assert.equal(sent.status, 202);
    assert.equal((await call('post', '/admin/campaigns/{campaign_id}/sends', `/admin/campaigns/${cid}/sends`, { contacts: [number], scheduled_for: '2020-01-01T00:00:00Z' })).status, 422);
    assert.equal((await call('post', '/admin/campaigns/{campaign_id}/sends', `/admin/campaigns/${cid}/sends`, {})).status, 422);
    assert.equal((await call('post', '/admin/campaigns/{campaign_id}/sends', `/admin/campaigns/${cid}/sends`, { segment_id: 2147483000 })).status, 404);
    assert.equal((await call('post', '/admin/batches/{batch_id}/cancel', `/admin/batches/${sent.body.batch_id}/cancel`)).status, 200);
    assert.equal((await call('post', '/admin/batches/{batch_id}/cancel', '/admin/batches/0b6f3c1e-6f0a-4a55-9d1e-2f8f3a7c9b10/cancel')).status, 404);
  });
});

describe('an empty JSON body is no body', () => {
  /** The same request with and without `Content-Type: application/json` (no body either way). */
  async function both(method: string, path: string): Promise<[number, string, number, string]> {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const withHeader = await fetch(s.url + path, { method, headers: { ...auth, 'content-type': 'application/json' }, body: '' });
    const without = await fetch(s.url + path, { method, headers: auth });
    return [withHeader.status, await withHeader.text(), without.status, await without.text()];
  }

  test('DELETE, GET and a POST with an optional body answer as without the header; a required body is 422 either way', async () => {
    const { companyId } = await s.company();
    const key = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'gone' }, 201);
    const [status] = await both('DELETE', `/admin/api-keys/${key.key_id}`);
    assert.equal(status, 204, 'revoked, not 422');
    const [a, aText, b, bText] = await both('DELETE', '/admin/api-keys/2147483000');
    assert.deepEqual([a, JSON.parse(aText)], [404, { detail: 'API key not found' }]);
    assert.deepEqual([b, JSON.parse(bText)], [404, { detail: 'API key not found' }]);
    const [g1, , g2] = await both('DELETE', `/admin/companies/${companyId}/rate-limits`);
    assert.deepEqual([g1, g2], [204, 204]);
    const [p1, , p2] = await both('POST', `/admin/companies/${companyId}/api-keys`);
    assert.deepEqual([p1, p2], [201, 201]);
    const [r1, r1Text, r2, r2Text] = await both('POST', '/admin/companies');
    assert.deepEqual([r1, r2], [422, 422]);
    assert.deepEqual(JSON.parse(r1Text), JSON.parse(r2Text));
    // Malformed JSON is still refused in the admin shape.
    const broken = await fetch(`${s.url}/admin/companies`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{"name":' });
    assert.deepEqual([broken.status, await broken.json()], [422, { detail: [{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' }] }]);
  });
});

describe('every status a bad request gets is documented on its operation (the whole document)', () => {
  /** Every /admin operation of the document (routes added later are covered without a list). */
  const operations = () => Object.entries<any>(doc.paths).filter(([path]) => path.startsWith('/admin/'))
    .flatMap(([path, item]) => ['get', 'put', 'post', 'patch', 'delete'].filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })));
  const UNKNOWN_ID = 2147483000;

  /** The path with each parameter an unknown id (integers) or its example, `override` replacing one. */
  function fill(path: string, op: any, override?: [string, string]): string {
    for (const p of (op.parameters ?? []).filter((x: any) => x.in === 'path')) {
      const value = override !== undefined && override[0] === p.name ? override[1] : p.schema?.type === 'integer' ? String(UNKNOWN_ID) : encodeURIComponent(String(p.schema?.examples?.[0] ?? p.example ?? 'x'));
      path = path.replace(`{${p.name}}`, value);
    }
    return path;
  }

  /** The example of the operation's first request media type, as text, with its Content-Type. */
  function example(op: any): { type: string; text: string } | undefined {
    const [type, media] = Object.entries<any>(op.requestBody?.content ?? {})[0] ?? [];
    if (!media) return undefined;
    const value = examplesOf(media)[0] ?? media.schema?.examples?.[0];
    return { type, text: typeof value === 'string' && type !== 'application/json' ? value : JSON.stringify(value) };
  }

  /** Sends one request; fails unless its status is documented with a body that validates (and x-request-id). */
  async function documented(method: string, template: string, path: string, init: { headers?: Record<string, string>; body?: string }, what: string): Promise<number> {
    const res = await fetch(s.url + path, { method: method.toUpperCase(), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...init.headers }, body: init.body });
    const text = await res.text();
    const answer = doc.paths[template][method].responses[String(res.status)];
    assert.ok(answer, `${method.toUpperCase()} ${path} (${what}) answered ${res.status}, not documented on the operation: ${text.slice(0, 200)}`);
    assert.ok(res.headers.get('x-request-id'), `${method} ${path} ${what}: x-request-id`);
    if (answer.content?.['application/json']) {
      assert.deepEqual(problems(JSON.parse(text), 'paths', template, method, 'responses', res.status, 'content', 'application/json', 'schema'), [], `${method} ${path} ${what} ${res.status}: ${text}`);
    }
    return res.status;
  }

  test('401 (no or another token), 415 (a form, text), 422 (a wrong-typed body or path id), 404 (unknown ids)', async () => {
    const seen = new Map<number, number>();
    const count = (status: number) => seen.set(status, (seen.get(status) ?? 0) + 1);
    for (const { method, path, op } of operations()) {
      const body = example(op);
      const url = fill(path, op);
      assert.equal(await documented(method, path, url, { headers: { authorization: '' } }, 'no token'), 401);
      assert.equal(await documented(method, path, url, { headers: { authorization: 'Bearer nope' } }, 'another token'), 401);
      if (op.requestBody) {
        for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/xml'].filter((t) => !(t in op.requestBody.content) && !(t === 'text/plain' && 'text/csv' in op.requestBody.content))) {
          const status = await documented(method, path, url, { headers: { 'content-type': type }, body: 'name=x' }, type);
          assert.ok(status === 415 || status === 422, `${method} ${path} ${type}: ${status}`);
          count(status);
        }
        count(await documented(method, path, url, { headers: { 'content-type': 'application/json' }, body: '[]' }, 'a JSON array'));
      }
      for (const p of (op.parameters ?? []).filter((x: any) => x.in === 'path' && x.schema?.type === 'integer')) {
        count(await documented(method, path, fill(path, op, [p.name, 'abc']), body ? { headers: { 'content-type': body.type }, body: body.text } : {}, `${p.name}=abc`));
      }
      if ((op.parameters ?? []).some((x: any) => x.in === 'path')) {
        // Unknown ids with the documented example body: refused as the operation documents (404 mostly).
        count(await documented(method, path, url, body ? { headers: { 'content-type': body.type }, body: body.text } : {}, 'unknown ids'));
      }
    }
    for (const status of [404, 415, 422]) assert.ok((seen.get(status) ?? 0) > 0, `some bad request got ${status}: ${JSON.stringify([...seen])}`);
  });
});
