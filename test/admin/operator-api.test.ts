/**
 * The operator API (docs/operator-api.md) over HTTP: bearer token, companies, keys (shown once, revocable),
 * contact import counts, automations and campaigns with template checks, connector and channel (secrets
 * never echoed), batch routes, and the OpenAPI document that lists them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

describe('authentication', () => {
  test('no token: 401 with WWW-Authenticate: Bearer; wrong token: 401', async () => {
    const none = await fetch(s.url + '/admin/companies', { method: 'POST' });
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    const wrong = await fetch(s.url + '/admin/companies', { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), { detail: 'Invalid admin token' });
    const ok = await fetch(s.url + '/admin/companies', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(ok.status, 200);
  });
});

describe('companies', () => {
  test('create with defaults, then patch', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'Acme' }, 201);
    assert.equal(c.name, 'Acme');
    assert.equal(c.subscription_active, false);
    assert.equal(c.default_country, 'DE');
    assert.equal(c.delivery_hours, null);
    const hours = { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' };
    const p = await s.admin('PATCH', `/admin/companies/${c.company_id}`, { subscription_active: true, default_country: 'US', delivery_hours: hours });
    assert.equal(p.subscription_active, true);
    assert.equal(p.default_country, 'US');
    assert.deepEqual(p.delivery_hours, hours);
  });
  test('invalid input: 422 in the FastAPI shape; unknown company: 404', async () => {
    const bad = await fetch(s.url + '/admin/companies', {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}',
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(await bad.json(), { detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required' }] });
    await s.admin('PATCH', '/admin/companies/2147483000', { name: 'x' }, 404);
    await s.admin('PATCH', '/admin/companies/1', { delivery_hours: { start: '9', end: '21:00', timezone: 'Europe/Berlin' } }, 422);
    await s.admin('PATCH', '/admin/companies/1', { delivery_hours: { start: '09:00', end: '21:00', timezone: 'Mars/Olympus' } }, 422);
    await s.admin('PATCH', '/admin/companies/1', { default_country: 'XX' }, 422);
  });
});

describe('api keys', () => {
  test('shown once at creation with a recognisable prefix; the list never shows it; revoke is 204 then 404', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'K' }, 201);
    const k = await s.admin('POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'ci' }, 201);
    assert.match(k.api_key, /^cms_live_[0-9A-Za-z]{38}$/);
    assert.equal(k.label, 'ci');
    const list = await s.admin('GET', `/admin/companies/${c.company_id}/api-keys`);
    assert.equal(list.keys.length, 1);
    assert.ok(!JSON.stringify(list).includes(k.api_key));
    await s.admin('DELETE', `/admin/api-keys/${k.key_id}`, undefined, 204);
    await s.admin('POST', '/admin/companies/2147483000/api-keys', {}, 404);
    await s.admin('DELETE', '/admin/api-keys/2147483000', undefined, 404);
  });
});

describe('contacts import', () => {
  test('created, updated, invalid; names and variables kept and merged', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'C' }, 201);
    const first = await s.admin('PUT', `/admin/companies/${c.company_id}/contacts`, {
      contacts: [
        { phone: '+4915112345678', first_name: 'Ada', variables: { tier: 'gold' } },
        { phone: '015112345679' },
        { phone: 'garbage' },
        { phone: '+49 151 12345678', variables: { city: 'Berlin' } },
      ],
    });
    assert.deepEqual(first, { created: 2, updated: 0, invalid: 1 });
    const second = await s.admin('PUT', `/admin/companies/${c.company_id}/contacts`, {
      contacts: [{ phone: '+4915112345678', last_name: 'Lovelace', variables: { tier: 'platinum' }, opted_out: true }],
    });
    assert.deepEqual(second, { created: 0, updated: 1, invalid: 0 });
    const row = await s.service.deps.database.db.selectFrom('contacts').selectAll()
      .where('company_id', '=', c.company_id).where('phone', '=', '+4915112345678').executeTakeFirstOrThrow();
    assert.equal(row.first_name, 'Ada');
    assert.equal(row.last_name, 'Lovelace');
    assert.deepEqual(row.variables, { tier: 'platinum', city: 'Berlin' });
    assert.equal(row.opted_out, true);
  });
});

describe('automations, campaigns, connector, channel', () => {
  test('templates are checked; automations can be patched', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'T' }, 201);
    const a = await s.admin('POST', `/admin/companies/${c.company_id}/automations`, {
      name: 'welcome', type: 'api', active: true,
      template: { header: { type: 'image', url: 'https://cdn.example/a.png' }, body: 'Hi {{ first_name }}', buttons: [{ type: 'url', text: 'Go', url: 'https://x.example' }] },
    }, 201);
    assert.equal(a.type, 'api');
    await s.admin('POST', `/admin/companies/${c.company_id}/automations`, { name: 'bad', type: 'api', active: true, template: { body: 'Hi {{ first_name' } }, 422);
    const p = await s.admin('PATCH', `/admin/automations/${a.automation_id}`, { active: false });
    assert.equal(p.active, false);
    await s.admin('PATCH', '/admin/automations/2147483000', { active: false }, 404);
    const camp = await s.admin('POST', `/admin/companies/${c.company_id}/campaigns`, { name: 'x', template: { body: 'Hello' } }, 201);
    assert.ok(camp.campaign_id > 0);
  });
  test('connector and channel; secrets are never echoed and are stored sealed', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'Ch' }, 201);
    const conn = await s.admin('PUT', `/admin/companies/${c.company_id}/connector`, { connected: true, provider: 'pushy' });
    assert.deepEqual(conn.connector, { connected: true, provider: 'pushy' });
    const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    const ch = await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'webhook', url: 'http://127.0.0.1:9/in', secret });
    assert.deepEqual(ch.channel, { provider: 'webhook', url: 'http://127.0.0.1:9/in' });
    assert.ok(!JSON.stringify(ch).includes(secret));
    // Private-network targets outside PROVIDER_ALLOWED_HOSTS are refused (no SSRF through providers).
    for (const url of ['http://10.0.0.7/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:80/x', 'http://user:pw@127.0.0.1/x']) {
      await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'webhook', url, secret }, 422);
    }
    await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'whatsapp', phone_number_id: '1', access_token: 't', api_base_url: 'http://192.168.0.1/v1' }, 422);
    const wa = await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'whatsapp', phone_number_id: String(100000000 + Math.floor(Math.random() * 899999999)), access_token: 'EAAG-secret-token', api_base_url: 'http://127.0.0.1:9/v21.0' });
    assert.ok(!JSON.stringify(wa).includes('EAAG-secret-token'));
    const row = await s.service.deps.database.db.selectFrom('companies').select('channel').where('company_id', '=', c.company_id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row.channel).includes('EAAG-secret-token'), 'stored sealed');
    await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'carrier-pigeon' }, 422);
  });
  test('operator actions are in the audit log, newest first, without secrets', async () => {
    const c = await s.admin('POST', '/admin/companies', { name: 'Audited' }, 201);
    const k = await s.admin('POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'l' }, 201);
    await s.admin('DELETE', `/admin/api-keys/${k.key_id}`, undefined, 204);
    await s.admin('PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'webhook', url: 'http://127.0.0.1:9/h', secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0' });
    const log = await s.admin('GET', `/admin/audit?company_id=${c.company_id}`);
    assert.deepEqual(log.entries.map((e: { action: string }) => e.action), ['channel.set', 'key.revoke', 'key.create', 'company.create']);
    assert.equal(log.entries[1].target, `key:${k.key_id}`);
    assert.ok(log.entries.every((e: { actor: string; at: string }) => e.actor === 'admin' && !Number.isNaN(Date.parse(e.at))));
    assert.ok(!JSON.stringify(log).includes('whsec_') && !JSON.stringify(log).includes(k.api_key));
  });
  test('unknown batch: 404', async () => {
    await s.admin('GET', '/admin/batches/00000000-0000-4000-8000-000000000000', undefined, 404);
    await s.admin('GET', '/admin/batches/not-a-uuid/messages', undefined, 404);
  });
});

describe('docs and health', () => {
  test('/openapi.json is OpenAPI 3.1 and lists the public and operator routes; /docs serves; /healthz, /readyz', async () => {
    const doc = await (await fetch(s.url + '/openapi.json')).json();
    assert.equal(doc.openapi, '3.1.0');
    for (const p of ['/api/segments/create', '/api/segments/{segment_id}/contacts', '/api/automations/send', '/api/connector/send', '/admin/companies', '/admin/batches/{batch_id}']) {
      assert.ok(doc.paths[p], p);
    }
    const createSegment = doc.paths['/api/segments/create'].post.requestBody.content['application/json'].schema;
    const resolved = createSegment.$ref ? doc.components.schemas[createSegment.$ref.split('/').pop()] : createSegment;
    assert.equal(resolved.properties.name.maxLength, 255);
    const docs = await fetch(s.url + '/docs/');
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
    assert.deepEqual(await (await fetch(s.url + '/healthz')).json(), { status: 'ok' });
    assert.equal((await fetch(s.url + '/readyz')).status, 200);
  });
});
