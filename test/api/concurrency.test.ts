/**
 * Concurrency (issue 2 acceptance): 50 parallel segment creates leave exactly 20 segments; 20 parallel
 * contact updates of one company obey the limit of 1 per minute.
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
