/**
 * Tenant isolation (docs/api.md): for every public route that takes an id,
 * another company's id answers exactly like a missing one, and no answer carries the other company's data.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RULES, rateLimitKey } from '../../src/http/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

const template = { body: 'secret body of A: {{ first_name }}' };

test('another company\'s segment, automation and campaign ids answer like unknown ids', async () => {
  const a = await s.company();
  const b = await s.company();
  await s.admin('PUT', `/admin/companies/${b.companyId}/connector`, { connected: true });
  const segA = (await s.api('/api/segments/create', { key: a.key, body: { name: 'A-only' } })).json.segment_id;
  const autoA = (await s.admin('POST', `/admin/companies/${a.companyId}/automations`, { name: 'A', type: 'api', active: true, template })).automation_id;
  const campA = (await s.admin('POST', `/admin/companies/${a.companyId}/campaigns`, { name: 'A', template })).campaign_id;
  const missing = 2147483000;

  const pairs: [string, (id: number) => Promise<{ status: number; text: string }>][] = [
    ['segment', (id) => s.api(`/api/segments/${id}/contacts`, { key: b.key, body: { contacts: ['+4915112345678'], mode: 'add' } })],
    ['automation', (id) => s.api('/api/automations/send', { key: b.key, body: { automation_id: id, contacts: [{ phone: '+4915112345678' }] } })],
    ['campaign', (id) => s.api('/api/connector/send', { key: b.key, body: { campaign_id: id, contacts: [{ phone: '+4915112345678' }] } })],
  ];
  for (const [what, call] of pairs) {
    await s.service.deps.rateLimiter.reset(rateLimitKey(b.companyId, RULES.manageSegmentContacts));
    await s.service.deps.rateLimiter.reset(rateLimitKey(b.companyId, RULES.connectorSend));
    const foreign = await call(what === 'segment' ? segA : what === 'automation' ? autoA : campA);
    await s.service.deps.rateLimiter.reset(rateLimitKey(b.companyId, RULES.manageSegmentContacts));
    await s.service.deps.rateLimiter.reset(rateLimitKey(b.companyId, RULES.connectorSend));
    const unknown = await call(missing);
    assert.equal(foreign.status, 404, what);
    assert.equal(foreign.text, unknown.text, what);
    assert.ok(!foreign.text.includes('A-only') && !foreign.text.includes('secret'), what);
  }
  // Nothing of A's changed: its segment has no members.
  const members = await s.service.deps.database.db.selectFrom('segment_members').select('contact_id').where('segment_id', '=', segA).execute();
  assert.equal(members.length, 0);
});

test('the same phone number is a different contact in each company', async () => {
  const a = await s.company();
  const b = await s.company();
  await s.admin('PUT', `/admin/companies/${a.companyId}/contacts`, { contacts: [{ phone: '+4915112345678', first_name: 'Ada' }] });
  const segB = (await s.api('/api/segments/create', { key: b.key, body: { name: 'B' } })).json.segment_id;
  const r = await s.api(`/api/segments/${segB}/contacts`, { key: b.key, body: { contacts: ['+4915112345678'], mode: 'add' } });
  assert.equal(r.status, 200);
  assert.equal(r.json.contacts_found, 0, 'A\'s contact is not found through B');
});
