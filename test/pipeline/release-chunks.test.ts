/**
 * Release and dead-lease recovery chunk as fan-out does: `messages-deliver` jobs of
 * at most `chunkSizeFor` the company's provider, so a held outbox campaign of 600 messages is released
 * as ONE chunk and a webhook one as chunks of at most CHUNK_SIZE. Handlers driven directly (no
 * workers), so the enqueued jobs stay in pg-boss's table to be counted; time from a FakeClock.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { processBatch } from '../../src/queue/handlers/batch-process.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { recoverDead, releaseDue } from '../../src/queue/handlers/messages-release.ts';
import { CHUNK_SIZE } from '../../src/queue/jobs.ts';
import { FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { directContext, phone, startPipelineServer } from './helpers.ts';

let s: TestServer;
let r: WebhookReceiver;
let ctx: PipelineContext;
const clock = new FakeClock(Date.parse('2026-01-05T02:00:00Z')); // 03:00 in Berlin: closed

before(async () => {
  s = await startPipelineServer('release_chunks', { role: 'api', clock });
  r = await startReceiver();
  ctx = directContext(s, clock);
});
after(async () => {
  await ctx.providers.close();
  await s.close();
  await r.close();
});

/** A campaign of `n` messages held for delivery hours, fanned out; returns its batch id. */
async function heldCampaign(provider: 'outbox' | 'webhook', n: number): Promise<string> {
  const { companyId, key } = await s.company({ delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' } });
  await s.admin('PUT', `/admin/companies/${companyId}/connector`, { connected: true, provider: 'push' });
  if (provider === 'webhook') await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: r.url, secret: r.secret });
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'promo', template: { body: 'Hello!' } }, 201);
  const run = Math.floor(Math.random() * 1000);
  const contacts = Array.from({ length: n }, (_, i) => ({ phone: phone(run, i) }));
  const res = await s.api('/api/connector/send', { key, body: { campaign_id: campaign.campaign_id, contacts } });
  assert.equal(res.status, 200, res.text);
  const batchId = /\(batch ([0-9a-f-]{36})\)$/.exec(res.json.message)![1];
  const fanOut = await processBatch(ctx, batchId);
  assert.equal(fanOut?.held, true, 'outside delivery hours: held');
  return batchId;
}

/** The seq ranges of the `messages-deliver` jobs enqueued for `batchId`, sorted. */
async function deliverChunks(batchId: string): Promise<{ from: number; to: number }[]> {
  const { rows } = await sql<{ from: number; to: number }>`
    SELECT (data->>'seq_from')::int AS "from", (data->>'seq_to')::int AS "to" FROM pgboss.job
    WHERE name = 'messages-deliver' AND data->>'batch_id' = ${batchId} ORDER BY 1, created_on`.execute(ctx.db);
  return rows;
}

test('a held outbox campaign of 600 is released as ONE chunk, a webhook one in chunks of at most CHUNK_SIZE; recovery too', async () => {
  const outbox = await heldCampaign('outbox', 600);
  const webhook = await heldCampaign('webhook', 600);
  assert.deepEqual(await deliverChunks(outbox), [], 'nothing enqueued while held');

  clock.set(Date.parse('2026-01-05T08:00:00Z')); // 09:00 in Berlin: open
  assert.equal(await releaseDue(ctx, outbox), 600);
  assert.equal(await releaseDue(ctx, webhook), 600);
  assert.deepEqual(await deliverChunks(outbox), [{ from: 0, to: 599 }]);
  const chunks = await deliverChunks(webhook);
  assert.deepEqual(chunks, [{ from: 0, to: 249 }, { from: 250, to: 499 }, { from: 500, to: 599 }]);
  assert.ok(chunks.every((c) => c.to - c.from + 1 <= CHUNK_SIZE));

  // Runs that died holding every message's lease: recovery re-enqueues them chunked the same way.
  await sql`UPDATE messages SET lease_until = now() - interval '1 minute' WHERE batch_id IN (${outbox}::uuid, ${webhook}::uuid)`.execute(ctx.db);
  assert.ok((await recoverDead(ctx)) >= 1200);
  assert.deepEqual(await deliverChunks(outbox), [{ from: 0, to: 599 }, { from: 0, to: 599 }]);
  // Recovery works in steps of RELEASE_STEP messages (the two batches' 1,200 in two), each step chunked the same way.
  const all = await deliverChunks(webhook);
  assert.ok(all.length > 3 && all.every((c) => c.to - c.from + 1 <= CHUNK_SIZE), JSON.stringify(all));
  const times = new Array<number>(600).fill(0);
  for (const c of all) for (let q = c.from; q <= c.to; q++) times[q]++;
  assert.ok(times.every((t) => t >= 2), 'every message is in a release chunk and in a recovery chunk');
});
