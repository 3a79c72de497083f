/**
 * 4.1 and 4.2 (docs/api.md; docs/decisions.md#3-outcomes-of-the-four-operations, #5-phone-numbers-and-digests) over HTTP: happy paths, the six counts, digests with and
 * without `+`, the segment limit, and another company's segment answered like an unknown one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { RULES, rateLimitKey } from '../../src/http/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

/** A company with contacts +4915112345670..+491511234567(n-1), and a segment. */
async function setup(n = 5) {
  const c = await s.company({ default_country: 'DE' });
  const contacts = Array.from({ length: n }, (_, i) => ({ phone: `+49151123456${70 + i}` }));
  const imported = await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts });
  assert.deepEqual(imported, { created: n, updated: 0, invalid: 0 });
  const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP' } });
  return { ...c, segmentId: seg.json.segment_id as number };
}

describe('4.1 create segment', () => {
  test('creates an empty segment: name and id', async () => {
    const c = await s.company();
    const r = await s.api('/api/segments/create', { key: c.key, body: { name: 'Kunden 🚀 ünïcödé' } });
    assert.equal(r.status, 200);
    assert.equal(r.json.name, 'Kunden 🚀 ünïcödé');
    assert.ok(Number.isInteger(r.json.segment_id) && r.json.segment_id > 0);
    assert.ok(r.text.includes('🚀'), 'non-ASCII written raw');
  });
  test('the 21st segment: 400 with the limit text; names need not be unique', async () => {
    const c = await s.company();
    for (let i = 0; i < 20; i++) {
      // Stay under 10 per second: a fresh window instead of waiting for one (the limit is tested elsewhere).
      if (i === 10) await s.service.deps.rateLimiter.reset(rateLimitKey(c.companyId, RULES.createSegment));
      const r = await s.api('/api/segments/create', { key: c.key, body: { name: 'same' } });
      assert.equal(r.status, 200, `segment ${i + 1}`);
    }
    await s.service.deps.rateLimiter.reset(rateLimitKey(c.companyId, RULES.createSegment));
    const r = await s.api('/api/segments/create', { key: c.key, body: { name: 'same' } });
    assert.equal(r.status, 400);
    assert.equal(r.text, '{"detail":"Segment limit reached: a company can hold at most 20 segments"}');
  });
});

describe('4.2 manage segment contacts', () => {
  test('add by raw phone: the six counts (duplicates, unknown and unparseable numbers)', async () => {
    const c = await setup();
    const r = await s.api(`/api/segments/${c.segmentId}/contacts`, {
      key: c.key,
      body: { contacts: ['+4915112345670', '015112345671', '+49 151 12345670', '+4915199999999', 'not a phone'], mode: 'add' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.text, JSON.stringify({
      segment_id: c.segmentId, mode: 'add', contacts_provided: 4, contacts_found: 2, contacts_not_found: 2, contacts_processed: 2,
    }));
  });
  test('adding members again is found but not processed; delete removes; deleting a non-member is not processed', async () => {
    const c = await setup();
    const body = (mode: string, contacts: string[]) => ({ contacts, mode });
    const call = (b: unknown) => s.api(`/api/segments/${c.segmentId}/contacts`, { key: c.key, body: b });
    const first = await call(body('add', ['+4915112345670', '+4915112345671']));
    assert.equal(first.json.contacts_processed, 2);
    await resetLimit(c.companyId);
    const again = await call(body('add', ['+4915112345670', '+4915112345672']));
    assert.deepEqual([again.json.contacts_found, again.json.contacts_processed], [2, 1]);
    await resetLimit(c.companyId);
    const del = await call(body('delete', ['+4915112345670', '+4915112345673', '+4915199999999']));
    assert.deepEqual(
      [del.json.mode, del.json.contacts_provided, del.json.contacts_found, del.json.contacts_not_found, del.json.contacts_processed],
      ['delete', 3, 2, 1, 1],
    );
  });
  test('by digest: with and without +, any case; the same contact twice is processed once', async () => {
    const c = await setup();
    const r = await s.api(`/api/segments/${c.segmentId}/contacts`, {
      key: c.key,
      body: {
        use_hashed_phone: true,
        mode: 'add',
        contacts: [sha('+4915112345670'), sha('4915112345670').toUpperCase(), sha('+4915112345671'), sha('+4915199999999'), 'zz'],
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, {
      segment_id: c.segmentId, mode: 'add', contacts_provided: 5, contacts_found: 3, contacts_not_found: 2, contacts_processed: 2,
    });
  });
  test('unknown segment and another company\'s segment: the same 404', async () => {
    const a = await setup(1);
    const b = await s.company();
    const body = { contacts: ['+4915112345670'], mode: 'add' };
    const unknown = await s.api('/api/segments/2147483000/contacts', { key: b.key, body });
    await resetLimit(b.companyId);
    const foreign = await s.api(`/api/segments/${a.segmentId}/contacts`, { key: b.key, body });
    for (const r of [unknown, foreign]) {
      assert.equal(r.status, 404);
      assert.equal(r.text, '{"detail":"Segment not found"}');
    }
    await resetLimit(b.companyId);
    const huge = await s.api('/api/segments/99999999999999999999/contacts', { key: b.key, body });
    assert.equal(huge.status, 404);
  });
});

/** Forgets a company's 4.2 window so a test can make several calls (the limit itself is tested elsewhere). */
async function resetLimit(companyId: number): Promise<void> {
  await s.admin('DELETE', `/admin/companies/${companyId}/rate-limits`, undefined, 204);
}
