/**
 * `__proto__`, `constructor` and `prototype` in request bodies: they are plain data.
 * They never supply a missing field through a prototype, they are stored and rendered as the values
 * sent, inherited members never leak into templates, and Object.prototype of the server process (the
 * test runs the server in-process) stays untouched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase, type FreshDatabase } from '../fuzz/fresh-database.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
let fresh: FreshDatabase | undefined;
before(async () => {
  // On PostgreSQL, a database of its own: the queue of the shared one may hold other files' backlog.
  if (process.env.TEST_DATABASE_URL) fresh = await freshDatabase(process.env.TEST_DATABASE_URL, 'proto');
  s = await startTestServer(fresh ? { env: { DATABASE_URL: fresh.url } } : {});
});
after(async () => {
  await s?.close();
  await fresh?.drop();
});

/** Sends a raw JSON text (so that `__proto__` is a real key of the text, not a JS prototype). */
const raw = (p: string, key: string, text: string) => s.api(p, { key, raw: text });

function assertPrototypeClean(): void {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore);
  const probe: Record<string, unknown> = {};
  for (const k of ['polluted', 'isAdmin', 'name', 'mode', 'use_hashed_phone', 'automation_id', 'p']) assert.equal(probe[k], undefined, k);
}

test('a field given only through __proto__ or constructor.prototype is missing (422), not inherited', async () => {
  const c = await s.company();
  const seg = (await s.api('/api/segments/create', { key: c.key, body: { name: 's' } })).json.segment_id;
  const cases: [string, string, string][] = [
    ['/api/segments/create', '{"__proto__":{"name":"from proto"}}', 'name'],
    ['/api/segments/create', '{"constructor":{"prototype":{"name":"x"}}}', 'name'],
    [`/api/segments/${seg}/contacts`, '{"contacts":["+4915112345678"],"__proto__":{"mode":"add"}}', 'mode'],
    ['/api/automations/send', '{"__proto__":{"automation_id":1},"contacts":[{"phone":"1"}]}', 'automation_id'],
    ['/api/automations/send', '{"automation_id":1,"contacts":[{"__proto__":{"phone":"+4915112345678"}}]}', 'phone'],
    ['/api/connector/send', '{"campaign_id":1,"contacts":[{"constructor":{"prototype":{"phone":"1"}}}]}', 'phone'],
  ];
  for (const [p, text, field] of cases) {
    await s.service.deps.rateLimiter.reset(`${c.companyId}:segment_contacts`);
    const r = await raw(p, c.key, text);
    assert.equal(r.status, 422, `${p} ${text}: ${r.text}`);
    assert.ok(r.json.detail.some((d: { type: string; loc: unknown[] }) => d.type === 'missing' && d.loc.at(-1) === field), r.text);
  }
  // An extra __proto__ beside a real field changes nothing: the real field is used.
  await s.service.deps.rateLimiter.reset(`${c.companyId}:segment_contacts`);
  const r = await raw(`/api/segments/${seg}/contacts`, c.key, '{"contacts":[],"mode":"delete","__proto__":{"mode":"add"},"use_hashed_phone":false}');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.mode, 'delete');
  assertPrototypeClean();
});

test('hostile keys in variables are stored and rendered as data; inherited members render empty', async () => {
  const c = await s.company();
  const template = { body: '[{{ constructor }}|{{ __proto__ }}|{{ prototype }}|{{ toString }}|{{ hasOwnProperty }}|{{ variables.constructor }}|{{ first_name.constructor }}]' };
  const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'p', type: 'api', active: true, template });
  const text = `{"automation_id":${auto.automation_id},"contacts":[` +
    '{"phone":"+4915112345601","first_name":"Ada","variables":{"__proto__":{"polluted":"yes"},"constructor":"C","prototype":"P","toString":"T","hasOwnProperty":"H"}},' +
    '{"phone":"+4915112345602","first_name":"Bo","variables":{"constructor":{"prototype":{"polluted":"yes"}},"x":{"__proto__":{"isAdmin":true}}}},' +
    '{"phone":"+4915112345603","first_name":"Cy"}' +
    '],"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
  const sent = await raw('/api/automations/send', c.key, text);
  assert.equal(sent.status, 200, sent.text);
  assertPrototypeClean();

  await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed');
  // Stored (contacts are written when the batch is processed) as data: own keys with the values sent.
  const db = s.service.deps.database.db;
  const contacts = await db.selectFrom('contacts').select(['phone', 'variables']).where('company_id', '=', c.companyId).orderBy('phone').execute();
  const vars = contacts.map((x) => (typeof x.variables === 'string' ? JSON.parse(x.variables) : x.variables) as Record<string, unknown>);
  assert.deepEqual(Object.getOwnPropertyDescriptor(vars[0], '__proto__')?.value, { polluted: 'yes' });
  assert.equal(Object.getOwnPropertyDescriptor(vars[0], 'constructor')?.value, 'C');
  assert.equal(Object.getOwnPropertyDescriptor(vars[0], 'toString')?.value, 'T');
  assert.deepEqual(Object.getOwnPropertyDescriptor(vars[1], 'constructor')?.value, { prototype: { polluted: 'yes' } });
  assert.deepEqual(Object.getOwnPropertyDescriptor(vars[1].x as object, '__proto__')?.value, { isAdmin: true });
  assert.deepEqual(Object.keys(vars[2]), []);

  // Rendered: the values sent where they exist; nothing inherited (no "function Object() ...") elsewhere.
  const { messages } = await s.admin('GET', `/admin/batches/${sent.json.batch_id}/messages`);
  const body = (phone: string) => messages.find((m: { phone: string }) => m.phone === phone).rendered.body as string;
  // (An object sent as a value renders as Liquid renders any object: "[object Object]".)
  assert.equal(body('+4915112345601'), '[C|[object Object]|P|T|H|C|]');
  assert.equal(body('+4915112345602'), '[[object Object]|||||[object Object]|]');
  assert.equal(body('+4915112345603'), '[||||||]');
  for (const m of messages) assert.doesNotMatch(m.rendered.body, /function|native code/, m.rendered.body);
  assertPrototypeClean();
});

test('operator API bodies with __proto__ do not change what is stored or the process', async () => {
  const res = await fetch(s.url + '/admin/companies', {
    method: 'POST',
    headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'application/json' },
    body: '{"name":"P","__proto__":{"subscription_active":true,"default_country":"US"}}',
  });
  assert.ok(res.status < 500, String(res.status));
  if (res.status === 201) {
    const company = await res.json();
    assert.equal(company.subscription_active, false);
    assert.equal(company.default_country, 'DE');
  }
  assertPrototypeClean();
});
