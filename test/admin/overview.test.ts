/**
 * Operator API `GET /admin/companies/{company_id}/overview`: the same numbers as the
 * console's Overview page, as JSON, for data written at known times with the service's clock fixed;
 * another company's data never counted; 401 / 404 / 422 with their documented bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { addContacts, insertBatchAt, seedCompany } from '../console/overview-data.ts';

const zero = { pending: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, total: 0 };

describe('operator API: company overview', () => {
  let s: TestServer;
  const clock = new FakeClock(Date.parse('2026-03-10T10:00:00Z'));
  before(async () => {
    s = await startTestServer({ clock, role: 'api' });
  });
  after(async () => {
    await s.close();
  });

  test('200: 30 Berlin days zero-filled, totals, top reasons with labels, opt-out rate; another company not counted', async () => {
    const hours = { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' };
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'Overview Co', delivery_hours: hours });
    const { company_id: other } = await s.admin('POST', '/admin/companies', { name: 'Other Co', delivery_hours: hours });
    await seedCompany(s, id);
    await seedCompany(s, other);
    await insertBatchAt(s, other, '2026-03-10T08:00:00Z', Array.from({ length: 9 }, () => ({ status: 'failed' as const, error: 'connection error: ECONNREFUSED' })));
    await addContacts(s, other, ['2026-03-06T09:00:00Z']);

    const o = await s.admin('GET', `/admin/companies/${id}/overview`);
    assert.equal(o.timezone, 'Europe/Berlin');
    assert.equal(o.from, '2026-02-09');
    assert.equal(o.to, '2026-03-10');
    assert.equal(o.days.length, 30);
    assert.deepEqual(o.days.map((d: { date: string }) => d.date).slice(0, 3), ['2026-02-09', '2026-02-10', '2026-02-11']);
    const byDate = new Map(o.days.map((d: { date: string }) => [d.date, d]));
    assert.deepEqual(byDate.get('2026-03-10'), { date: '2026-03-10', ...zero, read: 1, delivered: 1, sent: 1, skipped: 1, failed: 2, total: 6 });
    assert.deepEqual(byDate.get('2026-03-01'), { date: '2026-03-01', ...zero, pending: 1, skipped: 2, failed: 1, total: 4 });
    assert.deepEqual(byDate.get('2026-02-09'), { date: '2026-02-09', ...zero, read: 1, total: 1 });
    assert.deepEqual(byDate.get('2026-03-09'), { date: '2026-03-09', ...zero });
    assert.deepEqual(o.totals, { pending: 1, sent: 1, delivered: 1, read: 2, failed: 3, skipped: 3, total: 11 });
    assert.deepEqual(o.failure_reasons, [
      { status: 'failed', code: '131026', example: 'Message undeliverable (HTTP 400)', label: 'Undeliverable: the number may not use WhatsApp, or has an old app version', count: 2 },
      { status: 'skipped', code: 'opted_out', example: null, label: 'The contact opted out of campaigns', count: 2 },
      { status: 'failed', code: '503', example: 'HTTP 503', label: 'The receiver was unavailable (HTTP 503)', count: 1 },
      { status: 'skipped', code: 'invalid_phone', example: null, label: 'Not a valid phone number', count: 1 },
    ]);
    assert.deepEqual(o.opt_out, { contacts: 5, opted_out: 2, rate: 0.4, opted_out_in_period: 1 });

    const b = await s.admin('GET', `/admin/companies/${other}/overview`);
    assert.equal(b.totals.total, 20);
    assert.deepEqual(b.failure_reasons[0], { status: 'failed', code: 'connection error: ECONNREFUSED', example: 'connection error: ECONNREFUSED', label: 'Could not connect to the provider', count: 9 });
    assert.deepEqual(b.opt_out, { contacts: 6, opted_out: 3, rate: 0.5, opted_out_in_period: 2 });
  });

  test('a company without delivery hours: UTC days; no data: zeros and no reasons', async () => {
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'UTC Co' });
    const empty = await s.admin('GET', `/admin/companies/${id}/overview`);
    assert.equal(empty.timezone, 'UTC');
    assert.deepEqual(empty.totals, zero);
    assert.deepEqual(empty.failure_reasons, []);
    assert.deepEqual(empty.opt_out, { contacts: 0, opted_out: 0, rate: 0, opted_out_in_period: 0 });
    assert.ok(empty.days.every((d: Record<string, unknown>) => d.total === 0));

    await seedCompany(s, id);
    const o = await s.admin('GET', `/admin/companies/${id}/overview`);
    const byDate = new Map(o.days.map((d: { date: string }) => [d.date, d]));
    assert.deepEqual(byDate.get('2026-03-09'), { date: '2026-03-09', ...zero, sent: 1, skipped: 1, total: 2 });
    assert.deepEqual(byDate.get('2026-03-10'), { date: '2026-03-10', ...zero, read: 1, delivered: 1, pending: 1, failed: 2, total: 5 });
    assert.equal(o.totals.total, 11);
  });

  test('the counts follow every status change of a message (kept by the triggers of migration 015)', async () => {
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'Changing Co' });
    const batchId = await insertBatchAt(s, id, '2026-03-08T12:00:00Z', [{ status: 'pending' }, { status: 'pending' }, { status: 'pending' }, { status: 'pending' }]);
    const db = s.service.deps.database.db;
    const totals = async () => (await s.admin('GET', `/admin/companies/${id}/overview`)).totals;
    assert.deepEqual(await totals(), { ...zero, pending: 4, total: 4 });
    // A claim (lease only) changes nothing; results, then receipts, move the counts.
    await db.updateTable('messages').set({ lease_until: new Date('2026-03-08T12:01:00Z') }).where('batch_id', '=', batchId).execute();
    assert.deepEqual(await totals(), { ...zero, pending: 4, total: 4 });
    await db.updateTable('messages').set({ status: 'sent', lease_until: null }).where('batch_id', '=', batchId).where('seq', '<', 3).execute();
    await db.updateTable('messages').set({ status: 'failed', error: 'HTTP 410', error_code: '410' }).where('batch_id', '=', batchId).where('seq', '=', 3).execute();
    assert.deepEqual(await totals(), { ...zero, sent: 3, failed: 1, total: 4 });
    await db.updateTable('messages').set({ status: 'delivered' }).where('batch_id', '=', batchId).where('seq', '<', 2).execute();
    await db.updateTable('messages').set({ status: 'read' }).where('batch_id', '=', batchId).where('seq', '=', 0).execute();
    await db.updateTable('messages').set({ status: 'failed', error: 'Re-engagement message (HTTP 400)', error_code: '131047' }).where('batch_id', '=', batchId).where('seq', '=', 2).execute();
    const o = await s.admin('GET', `/admin/companies/${id}/overview`);
    assert.deepEqual(o.totals, { ...zero, read: 1, delivered: 1, failed: 2, total: 4 });
    assert.deepEqual(o.days.find((d: { date: string }) => d.date === '2026-03-08'), { date: '2026-03-08', ...zero, read: 1, delivered: 1, failed: 2, total: 4 });
    assert.deepEqual(o.failure_reasons.map((r: { code: string; count: number; label: string }) => [r.code, r.count, r.label]), [
      ['131047', 1, 'More than 24 hours since the contact last wrote (a template is needed)'],
      ['410', 1, 'The receiver URL is gone (HTTP 410)'],
    ]);
  });

  test('an erased contact (GDPR) no longer counts in the opt-out rate', async () => {
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'Erasing Co' });
    await addContacts(s, id, [null, '2026-03-05T09:00:00Z', '2026-03-06T09:00:00Z']);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/overview`)).opt_out, { contacts: 3, opted_out: 2, rate: 2 / 3, opted_out_in_period: 2 });
    const db = s.service.deps.database.db;
    const opted = await db.selectFrom('contacts').select('phone').where('company_id', '=', id).where('opted_out', '=', true).orderBy('contact_id').executeTakeFirstOrThrow();
    await s.admin('DELETE', `/admin/companies/${id}/contacts/${encodeURIComponent(opted.phone)}`);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/overview`)).opt_out, { contacts: 2, opted_out: 1, rate: 0.5, opted_out_in_period: 1 });
  });

  test('half-hour and 45-minute time zones: a message a minute before local midnight counts on the day before', async () => {
    for (const [timezone, before, after] of [
      ['Asia/Kolkata', '2026-03-09T18:29:00Z', '2026-03-09T18:30:00Z'], // UTC+5:30
      ['Asia/Kathmandu', '2026-03-09T18:14:00Z', '2026-03-09T18:15:00Z'], // UTC+5:45
    ]) {
      const { company_id: id } = await s.admin('POST', '/admin/companies', { name: timezone, delivery_hours: { start: '08:00', end: '20:00', timezone } });
      await insertBatchAt(s, id, before, [{ status: 'read' }]);
      await insertBatchAt(s, id, after, [{ status: 'sent' }, { status: 'sent' }]);
      const o = await s.admin('GET', `/admin/companies/${id}/overview`);
      const byDate = new Map(o.days.map((d: { date: string }) => [d.date, d]));
      assert.deepEqual(byDate.get('2026-03-09'), { date: '2026-03-09', ...zero, read: 1, total: 1 }, timezone);
      assert.deepEqual(byDate.get('2026-03-10'), { date: '2026-03-10', ...zero, sent: 2, total: 2 }, timezone);
    }
  });

  test('the top reasons are capped at 8, most frequent first', async () => {
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'Many reasons' });
    const codes = ['400', '401', '403', '404', '409', '410', '413', '422', '500', '502'];
    for (const [i, code] of codes.entries()) {
      await insertBatchAt(s, id, '2026-03-05T12:00:00Z', Array.from({ length: i + 1 }, () => ({ status: 'failed' as const, error: `HTTP ${code}`, error_code: code })));
    }
    const o = await s.admin('GET', `/admin/companies/${id}/overview`);
    assert.deepEqual(o.failure_reasons.map((r: { code: string; count: number }) => `${r.code}:${r.count}`), ['502:10', '500:9', '422:8', '413:7', '410:6', '409:5', '404:4', '403:3']);
  });

  test('401 without the token, 404 for an unknown company, 422 for a non-integer id', async () => {
    const { company_id: id } = await s.admin('POST', '/admin/companies', { name: 'Errors Co' });
    const noAuth = await fetch(`${s.url}/admin/companies/${id}/overview`);
    assert.equal(noAuth.status, 401);
    assert.deepEqual(await noAuth.json(), { detail: 'Not authenticated' });
    const unknown = await fetch(`${s.url}/admin/companies/2147483000/overview`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { detail: 'Company not found' });
    const bad = await fetch(`${s.url}/admin/companies/abc/overview`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(bad.status, 422);
    const body = await bad.json() as { detail: { loc: unknown[] }[] };
    assert.deepEqual(body.detail[0].loc, ['path', 'company_id']);
  });
});

describe('operator API: company overview of real sends', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(); // API and workers, the real clock: batches are stamped by the database
  });
  after(async () => {
    await s.close();
  });

  test('a campaign send and an automation trigger through the pipeline are counted today, by their outcome', async () => {
    const { companyId, key } = await s.company({ name: 'Pipeline Co' });
    const tag = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
    const phones = [1, 2, 3].map((i) => `+49151${tag}0000${i}`);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((phone, i) => ({ phone, opted_out: i === 2 })) });
    const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Counted', template: { body: 'Hello' } }, 201);
    const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Counted', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    const send = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: phones });
    const trigger = await s.api('/api/automations/send', { key, body: { automation_id: automation.automation_id, contacts: [{ phone: phones[0] }, { phone: '12' }] } });
    assert.equal(trigger.status, 200, trigger.text);
    for (const batchId of [send.batch_id, trigger.json.batch_id]) {
      await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed');
    }
    const o = await s.admin('GET', `/admin/companies/${companyId}/overview`);
    assert.deepEqual(o.totals, { ...zero, sent: 3, skipped: 2, total: 5 }, JSON.stringify(o.failure_reasons));
    assert.deepEqual(o.days.at(-1), { date: o.to, ...zero, sent: 3, skipped: 2, total: 5 });
    assert.deepEqual(o.failure_reasons.map((r: { code: string; count: number }) => `${r.code}:${r.count}`).sort(), ['invalid_phone:1', 'opted_out:1']);
  });
});
