/**
 * Archiving and restoring automations and campaigns through the operator API: `DELETE
 * /admin/{kind}s/{id}` answers 200 with the source and its `archived_at` (again: the same time), the
 * lists leave it out (and show only the archived ones with `?archived=true`), it cannot be sent (the
 * operator's send and test send 404, 4.4 answers `404 Campaign not found`, 4.3 answers
 * `400 Automation is not active`), and `POST .../restore` brings it all back. Unknown ids are 404,
 * ids that are not integers and an `archived` that is not a boolean are 422, and nothing is archived
 * without the admin token. Through the real server.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

/** A raw admin request: status and parsed body (no assertion). */
async function adminRaw(method: string, p: string, body?: unknown, token = ADMIN_TOKEN): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(s.url + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

const ids = (list: { id: number }[]) => list.map((x) => x.id);

test('a campaign archived: out of the list, cannot be sent (admin, test send, 4.4); restored: listed and sendable again', async () => {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/connector`, { connected: true });
  const kept = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Kept', template: { body: 'Hi' } }, 201);
  const c = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Old sale', template: { body: 'Hi {{ first_name }}' } }, 201);
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).archived_at, null);

  const archived = await s.admin('DELETE', `/admin/campaigns/${c.campaign_id}`, undefined, 200);
  assert.equal(archived.id, c.campaign_id);
  assert.equal(archived.name, 'Old sale');
  assert.ok(!Number.isNaN(Date.parse(archived.archived_at)), archived.archived_at);
  const again = await s.admin('DELETE', `/admin/campaigns/${c.campaign_id}`, undefined, 200);
  assert.equal(again.archived_at, archived.archived_at, 'archiving again keeps the first time');
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).archived_at, archived.archived_at, 'still readable by id');

  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/campaigns`)), [kept.campaign_id]);
  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/campaigns?archived=true`)), [c.campaign_id]);
  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/campaigns?archived=false`)), [kept.campaign_id]);

  const send = await adminRaw('POST', `/admin/campaigns/${c.campaign_id}/sends`, { contacts: ['+4915112340001'] });
  assert.equal(send.status, 404);
  assert.deepEqual(send.body, { detail: 'Campaign not found' });
  assert.equal((await adminRaw('POST', `/admin/campaigns/${c.campaign_id}/sends`, { contacts: ['+4915112340001'], dry_run: true })).status, 404);
  assert.equal((await adminRaw('POST', `/admin/campaigns/${c.campaign_id}/test-send`, { phone: '+4915112340001' })).status, 404);
  const connector = await s.api('/api/connector/send', { key, body: { campaign_id: c.campaign_id, contacts: [{ phone: '+4915112340001' }] } });
  assert.equal(connector.status, 404);
  assert.deepEqual(connector.json, { detail: 'Campaign not found' });
  const db = s.service.deps.database.db;
  const batches = await db.selectFrom('batches').select('batch_id').where('company_id', '=', companyId).execute();
  assert.equal(batches.length, 0, 'nothing was sent');

  const restored = await s.admin('POST', `/admin/campaigns/${c.campaign_id}/restore`, undefined, 200);
  assert.equal(restored.archived_at, null);
  assert.equal((await s.admin('POST', `/admin/campaigns/${c.campaign_id}/restore`, undefined, 200)).archived_at, null, 'restoring again changes nothing');
  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/campaigns`)), [c.campaign_id, kept.campaign_id]);
  assert.deepEqual(await s.admin('GET', `/admin/companies/${companyId}/campaigns?archived=true`), []);
  const sent = await s.admin('POST', `/admin/campaigns/${c.campaign_id}/sends`, { contacts: ['+4915112340001'] }, 202);
  assert.ok(sent.batch_id);
});

test('an automation archived: 4.3 answers it as inactive, out of the list, keeps its active flag; restored: triggerable again', async () => {
  const { companyId, key } = await s.company();
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Shipped', type: 'api', active: true, template: { body: 'Shipped' } }, 201);
  assert.equal(a.archived_at, null);
  const trigger = () => s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: '+4915112340003' }] } });
  assert.equal((await trigger()).status, 200);

  const archived = await s.admin('DELETE', `/admin/automations/${a.automation_id}`, undefined, 200);
  assert.equal(archived.active, true, 'the active flag is kept');
  assert.ok(archived.archived_at);
  const refused = await trigger();
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.json, { detail: 'Automation is not active' });
  assert.deepEqual(await s.admin('GET', `/admin/companies/${companyId}/automations`), []);
  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/automations?archived=true`)), [a.automation_id]);
  assert.equal((await adminRaw('POST', `/admin/automations/${a.automation_id}/test-send`, { phone: '+4915112340003' })).status, 404);
  const patched = await s.admin('PATCH', `/admin/automations/${a.automation_id}`, { name: 'Shipped (old)' }, 200);
  assert.equal(patched.archived_at, archived.archived_at, 'a change keeps it archived');

  const restored = await s.admin('POST', `/admin/automations/${a.automation_id}/restore`, undefined, 200);
  assert.equal(restored.archived_at, null);
  assert.equal(restored.active, true);
  assert.equal((await trigger()).status, 200);
  assert.deepEqual(ids(await s.admin('GET', `/admin/companies/${companyId}/automations`)), [a.automation_id]);
});

test('archive and restore: unknown ids 404, malformed ids and filters 422, no token 401, nothing changed', async () => {
  const { companyId } = await s.company();
  const c = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'C', template: { body: 'Hi' } }, 201);
  for (const kind of ['campaigns', 'automations']) {
    const Kind = kind === 'campaigns' ? 'Campaign' : 'Automation';
    for (const [method, suffix] of [['DELETE', ''], ['POST', '/restore']]) {
      const unknown = await adminRaw(method, `/admin/${kind}/2147483000${suffix}`);
      assert.equal(unknown.status, 404, `${method} ${kind}${suffix}`);
      assert.deepEqual(unknown.body, { detail: `${Kind} not found` });
      const bad = await adminRaw(method, `/admin/${kind}/abc${suffix}`);
      assert.equal(bad.status, 422);
      assert.ok(Array.isArray(bad.body.detail));
    }
    assert.equal((await adminRaw('GET', `/admin/companies/${companyId}/${kind}?archived=yes`)).status, 422);
    assert.equal((await adminRaw('GET', `/admin/companies/2147483000/${kind}?archived=true`)).status, 404);
  }
  assert.equal((await adminRaw('DELETE', `/admin/campaigns/${c.campaign_id}`, undefined, 'wrong-token')).status, 401);
  assert.equal((await s.admin('GET', `/admin/campaigns/${c.campaign_id}`)).archived_at, null, 'not archived without the token');
});
