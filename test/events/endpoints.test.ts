/**
 * Event endpoints over the operator API (docs/events.md): create (secret once, whsec_ of
 * 24+ bytes, default all nine types), list without secrets, read, change, delete, rotate and reveal
 * the secret, audit log; bad input answered with its documented status and changing nothing
 * (non-http(s) URL, private address, unknown type, 21st endpoint, also under concurrency);
 * company-scoped views (`?company_id=`) hide other companies' endpoints and events.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const ALL = ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.skipped',
  'batch.completed', 'contact.opted_out', 'contact.opted_in', 'message.received',
  'whatsapp.template.updated', 'channel.paused', 'channel.resumed'];

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(s.url + path, {
    method,
    headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

test('create, list, read, change, rotate, reveal, delete; secrets never listed; every change audited', async () => {
  const { companyId } = await s.company();
  const created = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/hooks', description: 'CRM' }, 201);
  assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.ok(Buffer.from(created.secret.slice(6), 'base64').length >= 24);
  assert.deepEqual(created.events, ALL);
  assert.equal(created.enabled, true);
  assert.equal(created.description, 'CRM');
  assert.equal(created.url, 'http://127.0.0.1:9/hooks');

  const list = await s.admin('GET', `/admin/companies/${companyId}/event-endpoints`);
  assert.equal(list.endpoints.length, 1);
  assert.equal(list.endpoints[0].endpoint_id, created.endpoint_id);
  assert.ok(!('secret' in list.endpoints[0]));
  assert.ok(!JSON.stringify(list).includes(created.secret.slice(6, 20)));

  const changed = await s.admin('PATCH', `/admin/event-endpoints/${created.endpoint_id}`, { events: ['message.read', 'message.sent'], enabled: false, description: null });
  assert.deepEqual(changed.events, ['message.sent', 'message.read']);
  assert.equal(changed.enabled, false);
  assert.equal(changed.description, null);

  const revealed = await s.admin('GET', `/admin/event-endpoints/${created.endpoint_id}/secret`);
  assert.equal(revealed.secret, created.secret);
  const rotated = await s.admin('POST', `/admin/event-endpoints/${created.endpoint_id}/secret/rotate`);
  assert.notEqual(rotated.secret, created.secret);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${created.endpoint_id}/secret`)).secret, rotated.secret);

  const one = await s.admin('GET', `/admin/event-endpoints/${created.endpoint_id}`);
  assert.equal(one.enabled, false);
  assert.ok(!('secret' in one));

  await s.admin('DELETE', `/admin/event-endpoints/${created.endpoint_id}`, undefined, 204);
  assert.equal((await call('GET', `/admin/event-endpoints/${created.endpoint_id}`)).status, 404);
  assert.equal((await call('DELETE', `/admin/event-endpoints/${created.endpoint_id}`)).status, 404);

  const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
  const actions = audit.entries.map((e: any) => e.action);
  for (const a of ['event_endpoint.create', 'event_endpoint.update', 'event_endpoint.reveal_secret', 'event_endpoint.rotate_secret', 'event_endpoint.delete']) {
    assert.ok(actions.includes(a), `${a} audited`);
  }
  assert.ok(!JSON.stringify(audit).includes(created.secret.slice(6, 20)), 'no secret in the audit log');
  assert.ok(!JSON.stringify(audit).includes(rotated.secret.slice(6, 20)), 'no secret in the audit log');
});

test('bad input: documented 4xx, nothing created', async () => {
  const { companyId } = await s.company();
  const path = `/admin/companies/${companyId}/event-endpoints`;
  const cases: [unknown, number, RegExp][] = [
    [{ url: 'ftp://127.0.0.1/x' }, 422, /http or https/],
    [{ url: 'javascript:alert(1)' }, 422, /http or https/],
    [{ url: 'not a url' }, 422, /not a URL/],
    [{ url: 'http://10.0.0.1/hooks' }, 422, /private or reserved/],
    [{ url: 'http://169.254.169.254/latest' }, 422, /private or reserved/],
    [{ url: 'http://[::1]:8080/' }, 422, /private or reserved/],
    [{ url: 'http://127.0.0.1:9/x', events: ['message.sent', 'message.exploded'] }, 422, /unknown event type message.exploded;/],
    [{ url: 'http://127.0.0.1:9/x', events: [] }, 422, /detail/],
    [{}, 422, /Field required/],
    [{ url: 42 }, 422, /detail/],
  ];
  for (const [body, status, re] of cases) {
    const r = await call('POST', path, body);
    assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.text}`);
    assert.match(r.text, re);
  }
  assert.equal((await call('POST', '/admin/companies/999999999/event-endpoints', { url: 'http://127.0.0.1:9/x' })).status, 404);
  assert.equal((await call('GET', '/admin/companies/999999999/event-endpoints')).status, 404);
  assert.equal((await s.admin('GET', `${path}`)).endpoints.length, 0);

  // PATCH with the same checks.
  const ep = await s.admin('POST', path, { url: 'http://127.0.0.1:9/x' }, 201);
  assert.equal((await call('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { url: 'http://192.168.1.1/' })).status, 422);
  assert.equal((await call('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { events: ['nope'] })).status, 422);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).url, 'http://127.0.0.1:9/x');
  assert.equal((await call('POST', `/admin/event-endpoints/${ep.endpoint_id}/replay`, { since: 'yesterday' })).status, 422);
  assert.equal((await call('POST', '/admin/events/evt_nope/resend')).status, 404);
  assert.equal((await call('POST', `/admin/events/evt_${'0'.repeat(32)}/resend`)).status, 404);
  assert.equal((await call('GET', '/admin/event-endpoints/0/attempts')).status, 422);
});

test('at most 20 endpoints per company, also when 30 are created at once: the others answer 409', async () => {
  const { companyId } = await s.company();
  const path = `/admin/companies/${companyId}/event-endpoints`;
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call('POST', path, { url: `http://127.0.0.1:9/e${i}` })));
  assert.equal(answers.filter((a) => a.status === 201).length, 20);
  const refused = answers.filter((a) => a.status !== 201);
  assert.equal(refused.length, 10);
  for (const r of refused) {
    assert.equal(r.status, 409);
    assert.deepEqual(r.json, { detail: 'a company can have at most 20 event endpoints' });
  }
  assert.equal((await s.admin('GET', path)).endpoints.length, 20);
  assert.equal((await call('POST', path, { url: 'http://127.0.0.1:9/21st' })).status, 409);
});

test('company-scoped views: another company\'s endpoint and events answer 404', async () => {
  const a = await s.company();
  const b = await s.company();
  const ep = await s.admin('POST', `/admin/companies/${a.companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/a' }, 201);
  assert.equal((await s.admin('GET', `/admin/companies/${b.companyId}/event-endpoints`)).endpoints.length, 0);
  for (const [method, path, body] of [
    ['GET', `/admin/event-endpoints/${ep.endpoint_id}`],
    ['GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts`],
    ['GET', `/admin/event-endpoints/${ep.endpoint_id}/secret`],
    ['POST', `/admin/event-endpoints/${ep.endpoint_id}/secret/rotate`],
    ['PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { enabled: false }],
    ['POST', `/admin/event-endpoints/${ep.endpoint_id}/replay`, { since: '2020-01-01T00:00:00Z' }],
    ['DELETE', `/admin/event-endpoints/${ep.endpoint_id}`],
  ] as [string, string, unknown?][]) {
    const r = await call(method, `${path}?company_id=${b.companyId}`, body);
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.deepEqual(r.json, { detail: 'Event endpoint not found' });
  }
  const still = await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}?company_id=${a.companyId}`);
  assert.equal(still.enabled, true);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/secret?company_id=${a.companyId}`)).secret, ep.secret);
});

test('the routes are documented in the OpenAPI document with operationIds', async () => {
  const doc = await (await fetch(s.url + '/openapi.json')).json() as any;
  const ops = new Set<string>();
  for (const item of Object.values(doc.paths) as any[]) for (const op of Object.values(item) as any[]) if (op?.operationId) ops.add(op.operationId);
  for (const id of ['create_event_endpoint', 'list_event_endpoints', 'update_event_endpoint', 'delete_event_endpoint', 'list_event_attempts', 'replay_events', 'resend_event']) {
    assert.ok(ops.has(id), id);
  }
});
