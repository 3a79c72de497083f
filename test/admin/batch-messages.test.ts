/**
 * GET /admin/batches/{id}/messages a page at a time (src/domain/batch-messages.ts): keyset pages walk
 * every message exactly once in batch order, the first page without parameters is the first 100 with
 * `next`, filters by status and by phone (any form of the number), 422 for a bad cursor, limit, status
 * or phone, and the keyset query with a status filter is an index range on (batch_id, status, seq).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
const phoneOf = (i: number) => `+49151${run}${String(i).padStart(5, '0')}`;

/** A completed batch of `n` messages: every 10th failed, every 7th (not failed) skipped, the rest sent. */
async function batchOf(companyId: number, n: number): Promise<{ batchId: string; ids: string[]; failed: string[] }> {
  const db = s.service.deps.database.db;
  const batchId = randomUUID();
  await db.insertInto('batches').values({ batch_id: batchId, company_id: companyId, kind: 'campaign', source_id: 1, status: 'completed', total: n, items: '[]', template: '{}', completed_at: new Date() }).execute();
  const rows = Array.from({ length: n }, (_, seq) => {
    const status = seq % 10 === 0 ? 'failed' as const : seq % 7 === 0 ? 'skipped' as const : 'sent' as const;
    return { message_id: randomUUID(), batch_id: batchId, company_id: companyId, seq, phone: phoneOf(seq), status, attempts: 1, sent_at: status === 'sent' ? new Date() : null };
  });
  await db.insertInto('messages').values(rows).execute();
  return { batchId, ids: rows.map((r) => r.message_id), failed: rows.filter((r) => r.status === 'failed').map((r) => r.message_id) };
}

/** Every page of `path` (with `query`) following `next`; the pages' sizes and the message ids in order. */
async function walk(path: string, query: Record<string, string>): Promise<{ sizes: number[]; ids: string[]; statuses: string[] }> {
  const sizes: number[] = [];
  const ids: string[] = [];
  const statuses: string[] = [];
  let after: string | null = null;
  for (let i = 0; i < 100; i++) {
    const q = new URLSearchParams({ ...query, ...(after ? { after } : {}) });
    const page = await s.admin('GET', `${path}?${q}`);
    sizes.push(page.messages.length);
    for (const m of page.messages) { ids.push(m.message_id); statuses.push(m.status); }
    after = page.next;
    if (after === null) return { sizes, ids, statuses };
  }
  throw new Error('no last page');
}

describe('GET /admin/batches/{id}/messages pages', () => {
  test('keyset pages: every message once, in batch order; the first page without parameters is 100 and next', async () => {
    const companyId = (await s.admin('POST', '/admin/companies', { name: 'Pages Co', subscription_active: true })).company_id;
    const { batchId, ids } = await batchOf(companyId, 250);
    const path = `/admin/batches/${batchId}/messages`;
    const first = await s.admin('GET', path);
    assert.equal(first.messages.length, 100);
    assert.equal(typeof first.next, 'string');
    assert.deepEqual(first.messages.map((m: any) => m.message_id), ids.slice(0, 100));
    assert.ok(first.messages.every((m: any) => typeof m.phone === 'string' && typeof m.attempts === 'number' && 'rendered' in m), 'the fields of old');
    const all = await walk(path, { limit: '100' });
    assert.deepEqual(all.sizes, [100, 100, 50]);
    assert.deepEqual(all.ids, ids);
    const small = await walk(path, { limit: '7' });
    assert.equal(new Set(small.ids).size, 250);
    assert.deepEqual(small.ids, ids);
    const exact = await walk(path, { limit: '250' });
    assert.deepEqual(exact.sizes, [250], 'a page that ends the batch has no next');
  });

  test('filters: status walks only that status, each once; phone finds the number in any form', async () => {
    const companyId = (await s.admin('POST', '/admin/companies', { name: 'Filter Co', subscription_active: true, default_country: 'DE' })).company_id;
    const { batchId, ids, failed } = await batchOf(companyId, 120);
    const path = `/admin/batches/${batchId}/messages`;
    const f = await walk(path, { status: 'failed', limit: '5' });
    assert.deepEqual(f.ids, failed);
    assert.ok(f.statuses.every((st) => st === 'failed'));
    assert.deepEqual(f.sizes, [5, 5, 2]);
    assert.deepEqual((await s.admin('GET', `${path}?status=pending`)).messages, []);
    const byE164 = await s.admin('GET', `${path}?phone=${encodeURIComponent(phoneOf(42))}`);
    assert.deepEqual(byE164.messages.map((m: any) => m.message_id), [ids[42]]);
    assert.equal(byE164.next, null);
    const national = await s.admin('GET', `${path}?phone=${encodeURIComponent('0' + phoneOf(42).slice(3))}`);
    assert.deepEqual(national.messages.map((m: any) => m.message_id), [ids[42]]);
    const both = await s.admin('GET', `${path}?phone=${encodeURIComponent(phoneOf(40))}&status=sent`);
    assert.deepEqual(both.messages, [], 'message 40 failed');
    assert.deepEqual((await s.admin('GET', `${path}?phone=%2B4930999999`)).messages, []);
  });

  test('bad parameters answer 422 and an unknown batch 404', async () => {
    const companyId = (await s.admin('POST', '/admin/companies', { name: 'Bad Co', subscription_active: true })).company_id;
    const { batchId } = await batchOf(companyId, 3);
    const path = `/admin/batches/${batchId}/messages`;
    for (const q of ['after=abc', 'after=-1', 'limit=0', 'limit=1001', 'status=bogus', 'phone=12']) {
      const res = await fetch(`${s.url}${path}?${q}`, { headers: { authorization: `Bearer ${adminToken()}` } });
      assert.equal(res.status, 422, q);
      const body = await res.json() as { detail: unknown };
      assert.ok(Array.isArray(body.detail), q);
    }
    await s.admin('GET', '/admin/batches/00000000-0000-4000-8000-000000000000/messages', undefined, 404);
  });

  test('the status-filtered keyset page is an index range on (batch_id, status, seq), not a walk of the batch', async () => {
    const db = s.service.deps.database.db;
    const companyId = (await s.admin('POST', '/admin/companies', { name: 'Plan Co', subscription_active: true })).company_id;
    const { batchId } = await batchOf(companyId, 500);
    const plan = await db.connection().execute(async (c) => {
      // At this size the planner would pick any plan; with scans of the whole table and bitmaps off it
      // shows whether an index gives the page's rows in order from a range that names the status.
      await sql`SET enable_seqscan = off`.execute(c);
      await sql`SET enable_bitmapscan = off`.execute(c);
      await sql`ANALYZE messages`.execute(c);
      const r = await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON)
        SELECT seq FROM messages WHERE batch_id = ${batchId}::uuid AND status = 'failed' AND seq > 10 ORDER BY seq LIMIT 101`.execute(c);
      await sql`RESET enable_seqscan`.execute(c);
      await sql`RESET enable_bitmapscan`.execute(c);
      return JSON.stringify(r.rows[0]['QUERY PLAN']);
    });
    assert.match(plan, /messages_batch_status_seq/);
    assert.match(plan, /"Index Cond":"[^"]*status[^"]*"/, 'the status is part of the index range');
    assert.doesNotMatch(plan, /"Node Type":"Sort"/);
  });
});

function adminToken(): string {
  return (s.service.deps as { adminToken: string }).adminToken;
}
