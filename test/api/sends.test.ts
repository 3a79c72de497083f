/**
 * 4.3 and 4.4 (docs/api.md; docs/decisions.md#3-outcomes-of-the-four-operations) over HTTP: the lookups and their refusals, the answer, and the
 * batch committed before `accepted` (visible through the operator API at once).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RULES, rateLimitKey } from '../../src/http/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
// Acceptance only: no worker runs here, so batches stay exactly as accepted.
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

const template = { body: 'Hi {{ first_name }}', buttons: [] };

async function automation(companyId: number, fields: Record<string, unknown> = {}) {
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'a', type: 'api', active: true, template, ...fields });
  return a.automation_id as number;
}

describe('4.3 trigger automation', () => {
  test('accepted: batch id, distinct contacts among the first 50, batch visible as accepted with ignored items', async () => {
    const c = await s.company();
    const id = await automation(c.companyId);
    const contacts = Array.from({ length: 60 }, (_, i) => ({ phone: `+4915112345${String(i % 45).padStart(3, '0')}`, first_name: `P${i}` }));
    const r = await s.api('/api/automations/send', { key: c.key, body: { automation_id: id, contacts } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.json), ['batch_id', 'contacts', 'status']);
    assert.equal(r.json.status, 'accepted');
    assert.equal(r.json.contacts, 45); // items 46..50 repeat 0..4; 51..60 are ignored
    const batch = await s.admin('GET', `/admin/batches/${r.json.batch_id}`);
    assert.equal(batch.status, 'accepted');
    assert.equal(batch.kind, 'automation');
    assert.equal(batch.ignored_contacts, 10);
    assert.deepEqual(batch.counts, { total: 45, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 45 });
  });
  test('automation id given as a lax integer string is accepted', async () => {
    const c = await s.company();
    const id = await automation(c.companyId);
    const r = await s.api('/api/automations/send', { key: c.key, body: { automation_id: ` ${id} `, contacts: [{ phone: '+4915112345678' }] } });
    assert.equal(r.status, 200);
    assert.equal(r.json.contacts, 1);
  });
  test('unknown, another company\'s: 404; not api: 400; inactive: 400', async () => {
    const a = await s.company();
    const b = await s.company();
    const foreign = await automation(a.companyId);
    const event = await automation(b.companyId, { type: 'event' });
    const inactive = await automation(b.companyId, { active: false });
    const send = (automation_id: unknown) => s.api('/api/automations/send', { key: b.key, body: { automation_id, contacts: [{ phone: '+4915112345678' }] } });
    for (const id of [foreign, 2147483000, 2 ** 40]) {
      const r = await send(id);
      assert.equal(r.status, 404);
      assert.equal(r.text, '{"detail":"Automation not found"}');
    }
    const notApi = await send(event);
    assert.equal(notApi.status, 400);
    assert.equal(notApi.text, '{"detail":"Automation is not of type \'api\'"}');
    const off = await send(inactive);
    assert.equal(off.status, 400);
    assert.equal(off.text, '{"detail":"Automation is not active"}');
  });
  // Concurrent accepts share one INSERT (group commit): each batch must get exactly its own items, also
  // when they hold multi-byte text (the rows' items travel as one byte string, cut by byte offsets).
  test('parallel triggers of several companies: each batch stores exactly its own items, multi-byte text intact', async () => {
    const companies = await Promise.all([1, 2, 3].map(async () => {
      const c = await s.company();
      return { ...c, automationId: await automation(c.companyId) };
    }));
    const names = ['Zoë', '李小龙', 'Ada "the" \\ Lovelace', '👩‍💻 dev', 'plain', 'Ünïcödé ✓', "O'Brien", ''];
    const sends = Array.from({ length: 18 }, (_, i) => {
      const c = companies[i % 3];
      const contacts = Array.from({ length: 1 + (i % 5) }, (_, j) => ({
        phone: `+49151${String(i * 10 + j).padStart(8, '0')}`,
        first_name: names[(i + j) % names.length],
        variables: { n: i * 10 + j, note: names[(i * 3 + j) % names.length], nested: { ok: j % 2 === 0 } },
      }));
      return { c, contacts, idempotent: i % 4 === 0 };
    });
    const answers = await Promise.all(sends.map(({ c, contacts, idempotent }, i) => s.api('/api/automations/send', {
      key: c.key,
      body: { automation_id: c.automationId, contacts },
      headers: idempotent ? { 'Idempotency-Key': `parallel-${i}` } : {},
    })));
    assert.deepEqual(answers.map((a) => a.status), sends.map(() => 200));
    const db = s.service.deps.database.db;
    for (const [i, { c, contacts }] of sends.entries()) {
      const row = await db.selectFrom('batches').select(['company_id', 'total', 'items']).where('batch_id', '=', answers[i].json.batch_id).executeTakeFirstOrThrow();
      assert.equal(row.company_id, c.companyId);
      assert.equal(row.total, contacts.length);
      const items = JSON.parse(row.items as unknown as string) as { phone: string; e164: string; first_name: string; variables: unknown }[];
      assert.deepEqual(items.map((it) => [it.phone, it.e164, it.first_name, it.variables]), contacts.map((x) => [x.phone, x.phone, x.first_name, x.variables]));
    }
  });
});

describe('4.4 send campaign', () => {
  test('accepted: message with count and batch id; batch visible', async () => {
    const c = await s.company();
    await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true, provider: 'pushy' });
    const camp = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'spring', template });
    const r = await s.api('/api/connector/send', {
      key: c.key,
      body: { campaign_id: camp.campaign_id, contacts: [{ phone: '+4915112345678' }, { phone: '015112345678' }, { phone: '+4915112345679' }] },
    });
    assert.equal(r.status, 200);
    const m = /^Campaign send queued for 2 contacts \(batch ([0-9a-f-]{36})\)$/.exec(r.json.message);
    assert.ok(m, r.json.message);
    assert.equal(r.json.status, 'accepted');
    assert.deepEqual(Object.keys(r.json), ['message', 'status']);
    const batch = await s.admin('GET', `/admin/batches/${m[1]}`);
    assert.equal(batch.kind, 'campaign');
    assert.equal(batch.counts.total, 2);
  });
  test('unknown or another company\'s campaign: 404; connector not connected: 403', async () => {
    const a = await s.company();
    const b = await s.company();
    const campA = await s.admin('POST', `/admin/companies/${a.companyId}/campaigns`, { name: 'x', template });
    const campB = await s.admin('POST', `/admin/companies/${b.companyId}/campaigns`, { name: 'y', template });
    const body = (campaign_id: number) => ({ campaign_id, contacts: [{ phone: '+4915112345678' }] });
    await s.admin('PUT', `/admin/companies/${b.companyId}/connector`, { connected: true });
    const foreign = await s.api('/api/connector/send', { key: b.key, body: body(campA.campaign_id) });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.text, '{"detail":"Campaign not found"}');
    await s.service.deps.rateLimiter.reset(rateLimitKey(b.companyId, RULES.connectorSend));
    await s.admin('PUT', `/admin/companies/${b.companyId}/connector`, { connected: false });
    const off = await s.api('/api/connector/send', { key: b.key, body: body(campB.campaign_id) });
    assert.equal(off.status, 403);
    assert.equal(off.text, '{"detail":"The push-messaging connector is not connected"}');
  });
  test('rate limit: 1 per 10 second', async () => {
    const c = await s.company();
    await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true });
    const camp = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'x', template });
    const body = { campaign_id: camp.campaign_id, contacts: [{ phone: '+4915112345678' }] };
    assert.equal((await s.api('/api/connector/send', { key: c.key, body })).status, 200);
    const r = await s.api('/api/connector/send', { key: c.key, body });
    assert.equal(r.status, 429);
    assert.equal(r.text, '{"error":"Rate limit exceeded: 1 per 10 second"}');
  });
});
