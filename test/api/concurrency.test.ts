/**
 * Concurrency: 50 parallel segment creates leave exactly 20 segments; 20 parallel
 * contact updates of one company obey the limit of 1 per minute; parallel requests of several companies
 * decided together (one limiter statement per event-loop turn on PostgreSQL) give each company
 * exactly its limit, and each admitted request the remaining count right after it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { RateLimiter } from '../../src/http/rate-limit.ts';

let s: TestServer;
// The create limit (10 per second) would refuse most of 50 parallel creates before the segment limit is
// reached; this test is about the segment limit, so the rate limiter admits everything here.
const admitAll: RateLimiter = {
  consume: async () => ({ allowed: true, remaining: 1, resetMs: 0 }),
  reset: async () => {},
};
let limited: TestServer;
before(async () => {
  s = await startTestServer({ rateLimiter: admitAll });
  limited = await startTestServer();
});
after(async () => { await s.close(); await limited.close(); });

test('50 parallel creates leave exactly 20 segments', async () => {
  const c = await s.company();
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => s.api('/api/segments/create', { key: c.key, body: { name: `s${i}` } })));
  const ok = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 400);
  assert.equal(ok.length, 20);
  assert.equal(refused.length, 30);
  assert.equal(new Set(ok.map((a) => a.json.segment_id)).size, 20);
  const rows = await s.service.deps.database.db.selectFrom('segments').select('segment_id').where('company_id', '=', c.companyId).execute();
  assert.equal(rows.length, 20);
});

test('20 parallel contact updates: exactly one admitted per minute', async () => {
  const c = await limited.company();
  const seg = await limited.api('/api/segments/create', { key: c.key, body: { name: 'x' } });
  const answers = await Promise.all(Array.from({ length: 20 }, () =>
    limited.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: ['+4915112345678'], mode: 'add' } })));
  assert.equal(answers.filter((a) => a.status === 200).length, 1);
  assert.equal(answers.filter((a) => a.status === 429).length, 19);
});

// Requests that arrive together are decided together (on PostgreSQL: one limiter statement for all the
// requests of an event-loop turn, several buckets and several requests per bucket in it).
test('parallel requests of several companies at once: each company gets exactly its limit', async () => {
  const companies = await Promise.all([1, 2, 3].map(async () => {
    const c = await limited.company();
    const seg = await limited.api('/api/segments/create', { key: c.key, body: { name: 'x' } });
    return { ...c, segmentId: seg.json.segment_id as number };
  }));
  const answers = await Promise.all(companies.flatMap((c) => Array.from({ length: 10 }, () =>
    limited.api(`/api/segments/${c.segmentId}/contacts`, { key: c.key, body: { contacts: ['+4915112345678'], mode: 'add' } })
      .then((a) => ({ company: c.companyId, status: a.status })))));
  for (const c of companies) {
    const mine = answers.filter((a) => a.company === c.companyId);
    assert.equal(mine.filter((a) => a.status === 200).length, 1, `company ${c.companyId}: one admitted`);
    assert.equal(mine.filter((a) => a.status === 429).length, 9);
  }
});

test('30 parallel triggers of one company: 20 admitted, each told what was left after it', async () => {
  const c = await limited.company();
  const a = await limited.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi' } });
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => limited.api('/api/automations/send', {
    key: c.key, body: { automation_id: a.automation_id, contacts: [{ phone: `+49151${String(i).padStart(8, '0')}` }] },
  })));
  const ok = answers.filter((x) => x.status === 200);
  // The burst is decided within a few milliseconds, far inside one 1-second window.
  assert.equal(ok.length, 20);
  assert.equal(answers.filter((x) => x.status === 429).length, 10);
  const remaining = ok.map((x) => Number(/;r=(\d+);/.exec(x.headers.get('ratelimit') ?? '')?.[1])).sort((p, q) => p - q);
  assert.deepEqual(remaining, Array.from({ length: 20 }, (_, i) => i));
});
