/**
 * Templates checked when saved: an automation or campaign whose Liquid the
 * pipeline could not render is refused at create/update, `422` in the admin error shape
 * (`{"detail":[{type:"template_error", loc:["body","template",...], msg}]}`) with the line and column
 * in the message, and nothing is stored: syntax errors, unknown tags, unknown filters
 * (`{{ first_name | shout }}`), and a WhatsApp parameter count that differs from the mapping's
 * `body_parameters` / `header_parameters`. Variables that no contact of the company has are accepted
 * with a `warnings` entry each (first_name, last_name, phone are always known). Through the real server
 * (its pipeline renders what was accepted) and the `cms` CLI process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli } from '../cli/helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

/** A raw admin request: status and parsed body (no assertion). */
async function adminRaw(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(s.url + p, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

async function rows(companyId: number): Promise<number> {
  const db = s.service.deps.database.db;
  const a = await db.selectFrom('automations').select((eb) => eb.fn.countAll<string>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow();
  const c = await db.selectFrom('campaigns').select((eb) => eb.fn.countAll<string>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow();
  return Number(a.n) + Number(c.n);
}

const automation = (template: unknown) => ({ name: 'checked', type: 'api', active: true, template });

test('an unknown filter is 422 with line and column, for automations, campaigns and updates; nothing stored', async () => {
  const { companyId } = await s.company();
  const bad = { body: 'Hello {{ first_name | shout }}!' };
  for (const [method, p, body] of [
    ['POST', `/admin/companies/${companyId}/automations`, automation(bad)],
    ['POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: bad }],
  ] as const) {
    const r = await adminRaw(method, p, body);
    assert.equal(r.status, 422, p);
    assert.equal(r.body.detail.length, 1);
    assert.equal(r.body.detail[0].type, 'template_error');
    assert.deepEqual(r.body.detail[0].loc, ['body', 'template', 'body']);
    assert.match(r.body.detail[0].msg, /undefined filter: shout \(line 1, column 7\)/);
  }
  assert.equal(await rows(companyId), 0);
  const ok = await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hello {{ first_name | upcase }}' }), 201);
  const patched = await adminRaw('PATCH', `/admin/automations/${ok.automation_id}`, { template: bad });
  assert.equal(patched.status, 422);
  assert.match(patched.body.detail[0].msg, /shout/);
  const stored = await s.service.deps.database.db.selectFrom('automations').select('template').where('automation_id', '=', ok.automation_id).executeTakeFirstOrThrow();
  assert.equal((stored.template as { body: string }).body, 'Hello {{ first_name | upcase }}', 'the update changed nothing');
});

test('syntax errors and unknown tags name their line and column; a text header is checked too', async () => {
  const { companyId } = await s.company();
  const cases: [unknown, string[], RegExp][] = [
    [{ body: 'Hello\n  {{ first_name' }, ['body'], /not closed \(line 2, column 3\)/],
    [{ body: 'a\nb\n{% frobnicate %}' }, ['body'], /tag "frobnicate" not found \(line 3, column 1\)/],
    [{ body: '{% if first_name %}hi' }, ['body'], /not closed \(line 1, column 1\)/],
    [{ header: { type: 'text', text: 'Hi {{ first_name | nope }}' }, body: 'ok' }, ['header', 'text'], /undefined filter: nope \(line 1, column 4\)/],
    [{ body: '{% include "secrets.txt" %}' }, ['body'], /./],
  ];
  for (const [template, loc, msg] of cases) {
    const r = await adminRaw('POST', `/admin/companies/${companyId}/automations`, automation(template));
    if (r.status === 201) {
      // `include` parses (the file is looked up at render time); it must then fail the message, not the batch.
      assert.match(JSON.stringify(template), /include/);
      continue;
    }
    assert.equal(r.status, 422, JSON.stringify(template));
    assert.deepEqual(r.body.detail[0].loc, ['body', 'template', ...loc]);
    assert.match(r.body.detail[0].msg, msg);
  }
});

test('WhatsApp mapping: the number of top-level outputs must match body_parameters / header_parameters', async () => {
  const { companyId } = await s.company();
  const wa = (body: string, extra: Record<string, unknown> = {}) => automation({ body, whatsapp: { name: 'order_update', language: 'en', body_parameters: 2, ...extra } });
  const few = await adminRaw('POST', `/admin/companies/${companyId}/automations`, wa('Hi {{ first_name }}'));
  assert.equal(few.status, 422);
  assert.match(few.body.detail[0].msg, /order_update takes 2 parameters here, but the text has 1 top-level \{\{ \}\} output/);
  await s.admin('POST', `/admin/companies/${companyId}/automations`, wa('Hi {{ first_name }}, order {{ phone }}'), 201);
  const header = await adminRaw('POST', `/admin/companies/${companyId}/automations`, {
    ...wa('Hi {{ first_name }}, order {{ phone }}', { header_parameters: 1 }),
    template: { header: { type: 'text', text: 'Static' }, body: 'Hi {{ first_name }}, order {{ phone }}', whatsapp: { name: 'h', language: 'en', header_parameters: 1 } },
  });
  assert.equal(header.status, 422);
  assert.deepEqual(header.body.detail[0].loc, ['body', 'template', 'header', 'text']);
  // Without counts in the mapping, nothing is compared.
  await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hi {{ first_name }}', whatsapp: { name: 'x', language: 'en' } }), 201);
});

test('variables no contact has are warned about (201 with warnings); known ones and the contact fields are not', async () => {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+14155550142', first_name: 'Ada', variables: { city: 'Paris' } }] });
  const created = await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hi {{ first_name }} {{ last_name }} ({{ phone }}) from {{ city }}: {{ variables.plan }} {{ coupon | upcase }}' }), 201);
  assert.deepEqual(created.warnings, [
    'no contact of this company has the variable coupon: it renders empty',
    'no contact of this company has the variable plan: it renders empty',
  ]);
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: { body: 'Hello {{ city }}' } }, 201);
  assert.deepEqual(campaign.warnings, []);
  const patched = await s.admin('PATCH', `/admin/automations/${created.automation_id}`, { template: { body: 'Now {{ tier }}' } });
  assert.equal(patched.warnings.length, 1);
  assert.deepEqual((await s.admin('PATCH', `/admin/automations/${created.automation_id}`, { active: true })).warnings, []);
  // What was accepted renders: the pipeline sends it (outbox) with the built-in filter applied.
  const ok = await s.admin('POST', `/admin/companies/${companyId}/automations`, automation({ body: 'Hi {{ first_name | upcase }} from {{ city }}' }), 201);
  const sent = await s.api('/api/automations/send', { key, body: { automation_id: ok.automation_id, contacts: [{ phone: '+14155550142' }] } });
  assert.equal(sent.status, 200, sent.text);
  const batch = await eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${sent.json.batch_id}`);
    return b.status === 'completed' && b;
  }, 30_000);
  assert.equal(batch.counts.sent, 1);
  const messages = await s.admin('GET', `/admin/batches/${sent.json.batch_id}/messages`);
  assert.match(JSON.stringify(messages), /Hi ADA from Paris/);
});

test('CLI: a refused template prints the line and column and exits non-zero; warnings go to stderr', async () => {
  const { companyId } = await s.company();
  const env = { CMS_URL: s.url, ADMIN_TOKEN };
  const bad = await runCli(['automation', 'create', '--company', String(companyId), '--name', 'n', '--type', 'api', '--body', '{{ first_name | shout }}'], { env });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /HTTP 422/);
  assert.match(bad.stderr, /undefined filter: shout \(line 1, column 1\)/);
  const warned = await runCli(['campaign', 'create', '--company', String(companyId), '--name', 'n', '--body', 'Hi {{ coupon }}'], { env });
  assert.equal(warned.code, 0, warned.stderr);
  assert.match(warned.stderr, /warning: no contact of this company has the variable coupon/);
  assert.match(warned.stdout, /Campaign created/);
  assert.equal(await rows(companyId), 1);
});
