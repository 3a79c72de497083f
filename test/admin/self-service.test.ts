/**
 * Operator routes of the self-service console: lists, campaign PATCH (template
 * checked, nothing stored on refusal), preview equal byte for byte to what the pipeline sends, test
 * send, campaign sends to a segment with an opted-out contact (plan first), schedule then cancel on a
 * FakeClock, and 404 for unknown ids. Through the real server and database.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
let n = 0;
/** A distinct valid German mobile number. */
const phone = () => `+49152${String(run).padStart(3, '0')}${String(++n).padStart(5, '0')}`;

async function raw(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(s.url + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

async function completed(batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  });
}

async function messages(batchId: string): Promise<any[]> {
  return (await s.admin<{ messages: any[] }>('GET', `/admin/batches/${batchId}/messages`)).messages;
}

const strip = (r: any) => {
  const { message_id: _m, batch_id: _b, company_id: _c, kind: _k, source_id: _s, ...rest } = r;
  return rest;
};

test('lists, get, PATCH campaign: a template that does not parse is refused and nothing changes', async () => {
  const { companyId } = await s.company();
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'A1', type: 'api', active: false, template: { body: 'Hi {{ first_name }}' } }, 201);
  const c = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'C1', template: { body: 'Sale {{ first_name }}' } }, 201);
  const autos = await s.admin('GET', `/admin/companies/${companyId}/automations`);
  assert.deepEqual(autos.map((x: any) => [x.id, x.name, x.active]), [[a.automation_id, 'A1', false]]);
  const camps = await s.admin('GET', `/admin/companies/${companyId}/campaigns`);
  assert.deepEqual(camps.map((x: any) => [x.id, x.name, x.template.body]), [[c.campaign_id, 'C1', 'Sale {{ first_name }}']]);
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).name, 'C1');

  const bad = await raw('PATCH', `/admin/campaigns/${c.campaign_id}`, { name: 'C2', template: { body: 'Sale {% if x %}' } });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.detail[0].type, 'template_error');
  assert.deepEqual(bad.body.detail[0].loc, ['body', 'template', 'body']);
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).name, 'C1', 'nothing written');

  const ok = await s.admin('PATCH', `/admin/campaigns/${c.campaign_id}`, { name: 'C2', template: { body: 'Sale {{ shoe_size }}' } });
  assert.equal(ok.name, 'C2');
  assert.deepEqual(ok.warnings, ['no contact of this company has the variable shoe_size: it renders empty']);
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).template.body, 'Sale {{ shoe_size }}');

  for (const p of [`/admin/campaigns/2147483000`, `/admin/automations/2147483000`]) assert.equal((await raw('GET', p)).status, 404);
  assert.equal((await raw('PATCH', '/admin/campaigns/2147483000', { name: 'x' })).status, 404);
  assert.equal((await raw('POST', '/admin/campaigns/2147483000/sends', { contacts: [phone()] })).status, 404);
  assert.equal((await raw('POST', `/admin/batches/${crypto.randomUUID()}/cancel`)).status, 404);
  assert.equal((await raw('GET', '/admin/companies/2147483000/campaigns')).status, 404);
});

test('preview equals, byte for byte, what the pipeline sends after a test send (varied templates and contacts)', async () => {
  const { companyId } = await s.company();
  const p1 = phone(), p2 = phone(), p3 = phone();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
    contacts: [
      { phone: p1, first_name: 'Ann', last_name: 'Lee', variables: { city: 'Köln', points: 1234.5, tags: ['a', 'b'] } },
      { phone: p2, first_name: '<b>&"Zoë"', variables: { city: '' } },
    ],
  });
  const templates = [
    { body: 'Hello {{ first_name | default: "friend" }} from {{ city | upcase }}!' },
    { header: { type: 'text', text: 'Hi {{ first_name }}' }, body: '{% if points > 1000 %}Gold {{ points | round }}{% else %}Basic{% endif %} · {{ variables.tags | join: "," }} · {{ phone }}',
      buttons: [{ text: 'Shop', url: 'https://example.com/shop' }], whatsapp: { name: 'promo', language: 'de', body_parameters: 2, header_parameters: 1 } },
    { header: { type: 'image', url: 'https://example.com/a.png' }, body: '{{ last_name }}{{ "x" | append: first_name }}\n line two {{ missing }}',
      buttons: [{ text: 'A', url: 'https://example.com/a' }, { text: 'B', url: 'https://example.com/b' }] },
  ];
  for (const [i, template] of templates.entries()) {
    const kind = i % 2 === 0 ? 'automations' : 'campaigns';
    const body = kind === 'automations' ? { name: `t${i}`, type: 'api', active: false, template } : { name: `t${i}`, template };
    const created = await s.admin('POST', `/admin/companies/${companyId}/${kind}`, body, 201);
    const id = created.automation_id ?? created.campaign_id;
    for (const p of [p1, p2, p3]) {
      const preview = await s.admin('POST', `/admin/${kind}/${id}/preview`, { phone: p });
      // p3 has no contact until the first test send creates one (by phone only).
      assert.equal(preview.contact_found, p !== p3 || i > 0);
      const sent = await s.admin('POST', `/admin/${kind}/${id}/test-send`, { phone: p }, 202);
      const batch = await completed(sent.batch_id);
      assert.equal(batch.company_id, companyId);
      assert.deepEqual(batch.counts, { total: 1, sent: 1, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
      const [m] = await messages(sent.batch_id);
      // Every text byte for byte; objects key by key (jsonb stores keys in its own order).
      assert.deepStrictEqual(strip(m.rendered), preview.rendered, `template ${i}, ${p}`);
      assert.equal(Buffer.compare(Buffer.from(m.rendered.body), Buffer.from(preview.rendered.body)), 0);
    }
  }
  // Sample data when no phone is given; a render error is 422 with its text.
  const c = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'sample', template: { body: 'Hi {{ first_name }} {{ variables.k }}' } }, 201);
  const sample = await s.admin('POST', `/admin/campaigns/${c.campaign_id}/preview`, { first_name: 'Sam', variables: { k: 7 } });
  assert.equal(sample.rendered.body, 'Hi Sam 7');
  assert.equal((await raw('POST', `/admin/campaigns/${c.campaign_id}/preview`, { phone: 'not a phone' })).status, 422);
  assert.equal((await raw('POST', `/admin/campaigns/${c.campaign_id}/test-send`, { phone: 'nope' })).status, 422);
});

test('campaign send to a segment: the plan counts the opted-out contact, which ends skipped opted_out', async () => {
  const { companyId, key } = await s.company();
  const [a, b, c] = [phone(), phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: a }, { phone: b, opted_out: true }, { phone: c }] });
  const seg = await s.api('/api/segments/create', { key, body: { name: 'vip' } });
  assert.equal(seg.status, 200, seg.text);
  const segmentId = seg.json.segment_id;
  const added = await s.api(`/api/segments/${segmentId}/contacts`, { key, body: { contacts: [a, b, c], mode: 'add' } });
  assert.equal(added.status, 200, added.text);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'seg', template: { body: 'Hi' } }, 201);

  const dry = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: segmentId, dry_run: true });
  assert.deepEqual({ ...dry.plan, send_at: undefined, opens_at: undefined }, { total: 3, send: 2, skipped_opted_out: 1, skipped_frequency_cap: 0, skipped_invalid: 0, duplicates_merged: 0, held_for_delivery_hours: 0, send_at: undefined, opens_at: undefined });
  const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: segmentId }, 202);
  const batch = await completed(sent.batch_id);
  assert.deepEqual(batch.counts, { total: 3, sent: 2, delivered: 0, read: 0, failed: 0, skipped: 1, pending: 0 });
  const ms = await messages(sent.batch_id);
  assert.deepEqual(ms.filter((m) => m.status === 'skipped').map((m) => [m.phone, m.reason]), [[b, 'opted_out']]);

  // Another company's segment is 404; exactly one of segment_id / contacts; a past schedule is 422.
  const other = await s.company();
  const otherSeg = await s.api('/api/segments/create', { key: other.key, body: { name: 'theirs' } });
  assert.equal((await raw('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: otherSeg.json.segment_id })).status, 404);
  assert.equal((await raw('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: segmentId, contacts: [a] })).status, 422);
  const past = await raw('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: [a], scheduled_for: '2026-03-01T10:00:00Z' });
  assert.equal(past.status, 422);
  assert.deepEqual(past.body.detail[0].loc, ['body', 'scheduled_for']);
});

test('a scheduled send is held until its time; cancel ends every message skipped / cancelled', async () => {
  const { companyId } = await s.company({ delivery_hours: { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'later', template: { body: 'Later' } }, 201);
  const phones = [phone(), phone(), 'garbage'];
  const at = new Date(clock.now() + 3_600_000).toISOString();
  const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: phones, scheduled_for: at }, 202);
  assert.equal(sent.plan.send, 2);
  assert.equal(sent.plan.skipped_invalid, 1);
  assert.equal(sent.plan.held_for_delivery_hours, 0);
  const held = await eventually(async () => {
    const ms = await messages(sent.batch_id);
    return ms.length === 3 ? ms : undefined;
  });
  assert.deepEqual(held.map((m) => [m.status, m.scheduled_for ?? null]), [['pending', at], ['pending', at], ['skipped', null]]);
  await s.service.workers?.sweepNow();
  assert.equal((await s.admin('GET', `/admin/batches/${sent.batch_id}`)).counts.pending, 2, 'not released before its time');

  const cancelled = await s.admin('POST', `/admin/batches/${sent.batch_id}/cancel`);
  assert.equal(cancelled.cancelled, 2);
  clock.advance(2 * 3_600_000);
  await s.service.workers?.sweepNow();
  const batch = await s.admin('GET', `/admin/batches/${sent.batch_id}`);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.counts, { total: 3, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 3, pending: 0 });
  assert.deepEqual((await messages(sent.batch_id)).map((m) => m.reason), ['cancelled', 'cancelled', 'invalid_phone']);
  // Again: nothing left to cancel.
  assert.equal((await s.admin('POST', `/admin/batches/${sent.batch_id}/cancel`)).cancelled, 0);
});

test('outside delivery hours the plan says held; cancel before fan-out marks the batch and counts its valid items', async () => {
  const { companyId } = await s.company({ delivery_hours: { start: '22:00', end: '23:00', timezone: 'UTC' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'night', template: { body: 'Night' } }, 201);
  const dry = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: [phone(), phone()], dry_run: true });
  assert.equal(dry.plan.held_for_delivery_hours, 2);
  assert.equal(dry.plan.opens_at, '2026-03-02T22:00:00.000Z'.replace('03-02', new Date(clock.now()).toISOString().slice(5, 10)));
  // A batch not yet fanned out (written directly as accepted, no job): cancel marks it, counting the
  // items with a valid number (the invalid one ends invalid_phone when the fan-out writes it).
  const db = s.service.deps.database.db;
  const batchId = crypto.randomUUID();
  const items = [{ phone: phone(), e164: '+4915200000001' }, { phone: 'nope', e164: null }, { phone: phone(), e164: '+4915200000002' }];
  await db.insertInto('batches').values({ batch_id: batchId, company_id: companyId, kind: 'campaign', source_id: camp.campaign_id, status: 'accepted', total: 3, items: JSON.stringify(items), template: JSON.stringify({ body: 'x' }) }).execute();
  const r = await s.admin('POST', `/admin/batches/${batchId}/cancel`);
  assert.deepEqual([r.cancelled, r.before_fan_out], [2, true]);
  const row = await db.selectFrom('batches').select(['cancelled_at', 'status']).where('batch_id', '=', batchId).executeTakeFirstOrThrow();
  assert.ok(row.cancelled_at, 'marked cancelled');
  assert.equal(row.status, 'accepted', 'not fanned out yet');
  assert.equal((await s.admin('POST', `/admin/batches/${batchId}/cancel`)).cancelled, 0, 'again: nothing more to stop');
});

test('cms campaign send --dry-run / --at and cms batch cancel', async () => {
  const { runCli } = await import('../cli/helpers.ts');
  const env = { CMS_URL: s.url, ADMIN_TOKEN };
  const { companyId } = await s.company();
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'cli', template: { body: 'Hi' } }, 201);
  const [a, b] = [phone(), phone()];
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: b, opted_out: true }] });
  const dry = await runCli(['campaign', 'send', String(camp.campaign_id), '--contacts', `${a},${b}`, '--dry-run', '--json'], { env });
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual([JSON.parse(dry.stdout).plan.send, JSON.parse(dry.stdout).plan.skipped_opted_out], [1, 1]);
  const at = new Date(clock.now() + 86_400_000).toISOString();
  const sent = await runCli(['campaign', 'send', String(camp.campaign_id), '--contacts', a, '--at', at, '--json'], { env });
  assert.equal(sent.code, 0, sent.stderr);
  const batchId = JSON.parse(sent.stdout).batch_id;
  await eventually(async () => (await messages(batchId)).length === 1);
  const cancelled = await runCli(['batch', 'cancel', batchId], { env });
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.match(cancelled.stdout, /^cancelled\t1$/m);
  assert.deepEqual((await messages(batchId)).map((m) => [m.status, m.reason]), [['skipped', 'cancelled']]);
  const both = await runCli(['campaign', 'send', String(camp.campaign_id)], { env });
  assert.equal(both.code, 2);
});

test('cancel races delivery safely: a message claimed under a live lease is left to its run (ends sent); the rest end cancelled', async () => {
  const { commitResults, completeBatchIfDone } = await import('../../src/db/messages.ts');
  const { sql } = await import('kysely');
  const db = s.service.deps.database.db;
  const { companyId } = await s.company();
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'race', template: { body: 'Race' } }, 201);
  const at = new Date(clock.now() + 3_600_000).toISOString();
  const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: [phone(), phone(), phone()], scheduled_for: at }, 202);
  const ms = await eventually(async () => {
    const m = await messages(sent.batch_id);
    return m.length === 3 ? m : undefined;
  });
  // A delivery run released and claimed the first message (as releaseHeld + claimMessages do) and is sending it.
  await sql`UPDATE messages SET held_until = NULL, lease_until = now() + interval '15 seconds' WHERE message_id = ${ms[0].message_id}::uuid`.execute(db);
  const cancelled = await s.admin('POST', `/admin/batches/${sent.batch_id}/cancel`);
  assert.equal(cancelled.cancelled, 2);
  assert.deepEqual((await messages(sent.batch_id)).map((m) => m.status), ['pending', 'skipped', 'skipped']);
  // The run commits its outcome (only WHERE status = 'pending'): the message ends sent, never both.
  const written = await commitResults(db, [{ message_id: ms[0].message_id, status: 'sent', error: null, attempts: 1, sent_at: clock.now() }]);
  assert.deepEqual([...written.written.values()], ['sent']);
  // A late result for a cancelled message changes nothing.
  assert.deepEqual([...(await commitResults(db, [{ message_id: ms[1].message_id, status: 'sent', error: null, attempts: 1, sent_at: clock.now() }])).written.values()], []);
  await completeBatchIfDone(db, sent.batch_id, clock.now()); // as the run does after its results (or already done)
  const batch = await s.admin('GET', `/admin/batches/${sent.batch_id}`);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.counts, { total: 3, sent: 1, delivered: 0, read: 0, failed: 0, skipped: 2, pending: 0 });
});
