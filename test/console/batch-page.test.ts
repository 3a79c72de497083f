/**
 * The console's send page of a big batch (routes/batch.ts): one page of messages at a time (a
 * 1,000-message batch's page stays under 100 KB), the Next page links walk every message once, the
 * counts by status link to filtered pages, and a processing batch shows its rate and time left and
 * reloads itself (Refresh header) until asked not to.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { newCompany, signedInClient } from './helpers.ts';

const NOW = Date.parse('2026-06-01T10:00:00Z');
const clock = new FakeClock(NOW);
let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api', clock }); });
after(() => s.close());

const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
const phoneOf = (i: number) => `+49151${run}${String(i).padStart(5, '0')}`;
const rowIds = (text: string) => [...text.matchAll(/<tr data-message-id="([^"]+)"/g)].map((m) => m[1]);
const nextLink = (text: string) => /<a href="([^"]+)" rel="next">/.exec(text)?.[1]?.replace(/&amp;/g, '&');

/** A batch of `n` messages in `status` (every 10th failed); sent ones sent a minute apart back from NOW. */
async function batchOf(companyId: number, n: number, batchStatus: 'completed' | 'processing', pendingFrom = n): Promise<{ batchId: string; ids: string[] }> {
  const db = s.service.deps.database.db;
  const batchId = randomUUID();
  await db.insertInto('batches').values({ batch_id: batchId, company_id: companyId, kind: 'campaign', source_id: 1, status: batchStatus, total: n, items: '[]', template: '{}', completed_at: batchStatus === 'completed' ? new Date(NOW) : null }).execute();
  const rows = Array.from({ length: n }, (_, seq) => {
    const status = seq >= pendingFrom ? 'pending' as const : seq % 10 === 0 ? 'failed' as const : 'sent' as const;
    const at = new Date(NOW - (seq % 10) * 20_000); // within the last 200 s
    return {
      message_id: randomUUID(), batch_id: batchId, company_id: companyId, seq, phone: phoneOf(seq), status, attempts: status === 'pending' ? 0 : 1,
      sent_at: status === 'sent' ? at : null, failed_at: status === 'failed' ? at : null, error: status === 'failed' ? 'HTTP 500' : null,
      rendered: JSON.stringify({ to: phoneOf(seq), header: { type: 'none' }, body: 'Spring sale: 20 % off everything this week, see you soon!', buttons: [] }),
    };
  });
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('messages').values(rows.slice(i, i + 500)).execute();
  return { batchId, ids: rows.map((r) => r.message_id) };
}

describe('console send page of a big batch', () => {
  test('a 1,000-message batch: pages of 100 under 100 KB, Next page walks every message once', async () => {
    const companyId = await newCompany(s);
    const { batchId, ids } = await batchOf(companyId, 1000, 'completed');
    const c = await signedInClient(s, companyId);
    const first = await c.get(`/console/sends/${batchId}`);
    assert.equal(first.status, 200);
    assert.ok(Buffer.byteLength(first.text) < 100_000, `page of ${Buffer.byteLength(first.text)} bytes`);
    assert.equal(rowIds(first.text).length, 100);
    assert.equal(first.headers.get('refresh'), null, 'a completed batch does not reload');
    assert.match(first.text, /1,000 total: 900 sent, 100 failed, 0 skipped, 0 pending/);
    const seen: string[] = [];
    let page = first;
    for (let i = 0; i < 20; i++) {
      seen.push(...rowIds(page.text));
      const next = nextLink(page.text);
      if (!next) break;
      page = await c.get(next);
      assert.equal(page.status, 200);
      assert.match(page.text, /First page/);
    }
    assert.deepEqual(seen, ids, 'every message once, in batch order');

    const failedLink = /<a href="([^"]+)" data-status-count="failed"[^>]*>failed \(100\)</.exec(first.text)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(failedLink, 'the failed count links to its messages');
    const failed: string[] = [];
    let fp = await c.get(failedLink);
    for (let i = 0; i < 5; i++) {
      assert.ok(!/badge-sent/.test(fp.text.slice(fp.text.indexOf('<table'))), 'only failed messages');
      failed.push(...rowIds(fp.text));
      const next = nextLink(fp.text);
      if (!next) break;
      assert.match(next, /status=failed/);
      fp = await c.get(next);
    }
    assert.deepEqual(failed, ids.filter((_, i) => i % 10 === 0));
    const edited = await c.get(`/console/sends/${batchId}?after=not-a-cursor`);
    assert.deepEqual(rowIds(edited.text), ids.slice(0, 100), 'an edited cursor shows the first page');
    const short = await c.get(`/console/sends/${batchId}?phone=12`);
    assert.match(short.text, /at least 4 of its digits/);
    const one = await c.get(`/console/sends/${batchId}?phone=${encodeURIComponent(phoneOf(123))}`);
    assert.deepEqual(rowIds(one.text), [ids[123]]);
    assert.match(one.text, /1 of 1,000 messages match/);
  });

  test('a processing batch shows its rate and time left and reloads itself until told to stop', async () => {
    const companyId = await newCompany(s);
    // 200 messages: 100 delivered in the last 200 s (within the 5-minute window), 100 pending.
    const { batchId } = await batchOf(companyId, 200, 'processing', 100);
    const c = await signedInClient(s, companyId);
    const page = await c.get(`/console/sends/${batchId}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('refresh'), '10');
    assert.match(page.text, /data-rate>20 messages per minute/, '100 in 5 minutes');
    assert.match(page.text, /data-eta>about 5 min/, '100 pending at 20 a minute');
    assert.match(page.text, /Stop refreshing/);
    const stopped = await c.get(`/console/sends/${batchId}?refresh=0`);
    assert.equal(stopped.headers.get('refresh'), null);
    clock.set(NOW + 60 * 60_000); // nothing delivered in the last 5 minutes
    const idle = await c.get(`/console/sends/${batchId}`);
    assert.match(idle.text, /data-rate>0\.0 messages per minute/);
    assert.match(idle.text, /data-eta>unknown/);
    clock.set(NOW);
  });
});
