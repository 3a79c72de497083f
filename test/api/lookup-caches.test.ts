/**
 * The domain's writes drop the lookup caches they make stale (docs/architecture.md "Who owns what"):
 * with the service's clock stopped (a FakeClock, so the 2-s cache lifetime never runs out), a change
 * made through the console or the operator API is seen at once by the public API of the same process —
 * an automation's type and active flag (console edit form and activation, operator PATCH), a revoked key
 * (console), a company's subscription (operator PATCH). Each check first warms the cache with a request
 * that the change then makes wrong.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { signedInClient } from '../console/helpers.ts';

const clock = new FakeClock(Date.parse('2026-06-01T08:00:00Z'));
let s: TestServer;
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const run = Math.floor(Math.random() * 1000);
const contact = { phone: `+49151${String(run).padStart(3, '0')}77001` };

/** The console's automation edit form with `o` over its defaults. */
const form = (o: Record<string, string>) => ({
  name: 'Cached', type: 'api', header_type: 'none', header_text: '', header_url: '', body: 'Hi', b1_text: '', b1_url: '', b2_text: '', b2_url: '',
  wa_name: '', wa_language: '', wa_body_parameters: '', wa_header_parameters: '', ...o,
});

test("an automation's change through the console or the operator API is seen at once by 4.3", async () => {
  const { companyId, key } = await s.company();
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Cached', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const id = a.automation_id as number;
  const send = () => s.api('/api/automations/send', { key, body: { automation_id: id, contacts: [contact] } });
  const c = await signedInClient(s, companyId);
  const page = `/console/automations/${id}`;

  assert.equal((await send()).status, 200, 'cached: type api, active');
  const edited = await c.submit(page, page, form({ type: 'manual' }));
  assert.equal(edited.status, 303, edited.text);
  let res = await send();
  assert.equal(res.status, 400, 'the new type applies at once');
  assert.equal(res.json.detail, "Automation is not of type 'api'");

  assert.equal((await c.submit(page, page, form({ type: 'api' }))).status, 303);
  assert.equal((await send()).status, 200, 'type api again, cached');
  assert.equal((await c.submit(page, `${page}/active`, { active: 'false' })).status, 303);
  res = await send();
  assert.equal(res.status, 400, 'deactivated in the console: at once');
  assert.equal(res.json.detail, 'Automation is not active');

  await s.admin('PATCH', `/admin/automations/${id}`, { active: true });
  assert.equal((await send()).status, 200, 'activated through the operator API: at once');
  await s.admin('PATCH', `/admin/automations/${id}`, { active: false });
  assert.equal((await send()).status, 400, 'deactivated through the operator API: at once');
});

test('a key revoked in the console and a subscription ended through the operator API apply at once', async () => {
  const { companyId, key } = await s.company();
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'k', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const send = (k: string) => s.api('/api/automations/send', { key: k, body: { automation_id: a.automation_id, contacts: [contact] } });
  const c = await signedInClient(s, companyId);

  const second = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'to revoke' }, 201);
  assert.equal((await send(second.api_key)).status, 200, 'cached: a valid key');
  const revokePage = `/console/settings/integrations/credentials/${second.key_id}/revoke`;
  const revoked = await c.submit(revokePage, revokePage, {});
  assert.equal(revoked.status, 303, revoked.text);
  assert.equal((await send(second.api_key)).status, 401, 'revoked in the console: refused at once');

  // 4.2 needs a subscription; an invalid body is refused after that check (422) and writes nothing.
  const manage = () => s.api('/api/segments/1/contacts', { key, body: {} });
  assert.equal((await manage()).status, 422, 'cached: an active subscription');
  await s.admin('PATCH', `/admin/companies/${companyId}`, { subscription_active: false });
  const res = await manage();
  assert.equal(res.status, 403, 'subscription ended: refused at once');
  assert.equal(res.json.detail, 'An active subscription is required');
});
