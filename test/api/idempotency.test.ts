/**
 * Idempotency-Key on 4.3 and 4.4: a replay returns the first answer and creates
 * nothing; a different body is 422; a key in flight is 409; keys are scoped per company.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

async function setup() {
  const c = await s.company();
  const a = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi' } });
  return { ...c, automationId: a.automation_id as number };
}
const batches = async (companyId: number) =>
  (await s.service.deps.database.db.selectFrom('batches').select('batch_id').where('company_id', '=', companyId).execute()).length;

test('same key, same body: the first answer again, one batch', async () => {
  const c = await setup();
  const body = { automation_id: c.automationId, contacts: [{ phone: '+4915112345678' }] };
  const headers = { 'idempotency-key': 'order-1001' };
  const first = await s.api('/api/automations/send', { key: c.key, body, headers });
  const second = await s.api('/api/automations/send', { key: c.key, body, headers });
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  assert.equal(second.text, first.text);
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  assert.equal(await batches(c.companyId), 1);
});

test('same key, different body: 422; other company may use the same key', async () => {
  const c = await setup();
  const other = await setup();
  const headers = { 'idempotency-key': 'shared-key' };
  const ok = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: [{ phone: '+4915112345678' }] }, headers });
  assert.equal(ok.status, 200);
  const changed = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: [{ phone: '+4915112345679' }] }, headers });
  assert.equal(changed.status, 422);
  assert.equal(changed.text, '{"detail":"Idempotency-Key reused with a different request"}');
  const theirs = await s.api('/api/automations/send', { key: other.key, body: { automation_id: other.automationId, contacts: [{ phone: '+4915112345678' }] }, headers });
  assert.equal(theirs.status, 200);
  assert.notEqual(theirs.json.batch_id, ok.json.batch_id);
});

test('a key still in flight: 409; a refusal (404) is replayed too; bad header: 400', async () => {
  const c = await setup();
  const body = { automation_id: c.automationId, contacts: [{ phone: '+4915112345678' }] };
  // Simulate a first request that holds the key (its lease has not ended).
  const raw = Buffer.from(JSON.stringify(body));
  const { claimKey, requestHash } = await import('../../src/domain/idempotency.ts');
  assert.equal((await claimKey(s.service.deps.database.db, c.companyId, 'busy', requestHash('trigger_automation', raw), Date.now())).kind, 'claimed');
  const busy = await s.api('/api/automations/send', { key: c.key, raw, headers: { 'idempotency-key': 'busy' } });
  assert.equal(busy.status, 409);
  const missing = { automation_id: 2147483000, contacts: [{ phone: '+4915112345678' }] };
  const a = await s.api('/api/automations/send', { key: c.key, body: missing, headers: { 'idempotency-key': 'nf' } });
  const b = await s.api('/api/automations/send', { key: c.key, body: missing, headers: { 'idempotency-key': 'nf' } });
  assert.equal(a.status, 404);
  assert.equal(b.text, a.text);
  assert.equal(b.headers.get('idempotent-replayed'), 'true');
  const bad = await s.api('/api/automations/send', { key: c.key, body, headers: { 'idempotency-key': 'x'.repeat(256) } });
  assert.equal(bad.status, 400);
});

test('after 24 hours the key is free again', async () => {
  const c = await setup();
  const body = { automation_id: c.automationId, contacts: [{ phone: '+4915112345678' }] };
  const headers = { 'idempotency-key': 'old' };
  assert.equal((await s.api('/api/automations/send', { key: c.key, body, headers })).status, 200);
  await sql`UPDATE idempotency_keys SET created_at = created_at - interval '25 hours' WHERE company_id = ${c.companyId}`.execute(s.service.deps.database.db);
  const again = await s.api('/api/automations/send', { key: c.key, body, headers });
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('idempotent-replayed'), null);
  assert.equal(await batches(c.companyId), 2);
});
