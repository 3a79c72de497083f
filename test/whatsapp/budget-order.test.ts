/**
 * The messaging limit in list order (docs/whatsapp.md "Pacing and limits", "The messaging limit's order"), against the
 * fake Graph API with a FakeClock, the delivery runs driven directly: a send of 300 fresh numbers
 * (a pasted list) at limit 250 sends exactly positions 0-249 and holds 250-299 (`messaging_limit`),
 * even when the chunk of the later positions is claimed first and the chunks run at once; a segment
 * send admits its members in the order they were added (docs/segments.md), not in contact order.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { createDeliveryClient, type DeliveryClient } from '../../src/delivery/client.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/index.ts';
import { processBatch } from '../../src/queue/handlers/batch-process.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { deliverChunk } from '../../src/queue/handlers/messages-deliver.ts';
import { startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { FakeClock, type TestServer } from '../helpers/server.ts';
import { whatsappCompany, type WhatsappCompany } from '../helpers/whatsapp.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';

const clock = new FakeClock(Date.now());
let s: TestServer;
let graph: FakeGraph;
let registry: ProviderRegistry;
let client: DeliveryClient;
let ctx: PipelineContext;

before(async () => {
  s = await startPipelineServer('budget_order', { role: 'api', clock });
  graph = await startFakeGraph();
  client = createDeliveryClient({ policy: parseAddressPolicy('127.0.0.1'), timeoutMs: 5_000 });
  const db = s.service.deps.database.db;
  registry = createProviderRegistry({ secrets: s.service.secrets, client, whatsappRatePerSecond: 1000, whatsappPairIntervalMs: 6_000, db, clock });
  ctx = {
    db, boss: s.service.deps.boss, clock, logger: pino({ level: 'silent' }), providers: registry,
    drain: new AbortController().signal, deliveryConcurrency: 32, retrySchedule: [5_000],
  };
});
after(async () => {
  await registry.close();
  await client.close();
  await s.close();
  await graph.close();
});

const db = () => s.service.deps.database.db;
let run = Math.floor(Math.random() * 80_000) + 10_000;
function phones(n: number): string[] {
  run++;
  return Array.from({ length: n }, (_, i) => `+49156${String(run).padStart(5, '0')}${String(i).padStart(3, '0')}`);
}

const company = (): Promise<WhatsappCompany> => whatsappCompany(s, graph, { channel: { throughput_per_second: 1000, messaging_limit: 250 } });

/** A campaign send of the company (`hello`) to `audience`, fanned out (not delivered); its batch id. */
async function send(c: WhatsappCompany, audience: Record<string, unknown>, n: number): Promise<string> {
  const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'wa hello', template: { body: 'Hi', whatsapp: { name: 'hello', language: 'en' } } }, 201);
  const sent = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, audience, 202);
  let fanned = 0;
  for (let step = await processBatch(ctx, sent.batch_id); step; step = await processBatch(ctx, sent.batch_id)) fanned += step.messages;
  assert.equal(fanned, n);
  return sent.batch_id;
}

const deliver = (c: WhatsappCompany, batchId: string, from: number, to: number) =>
  deliverChunk(ctx, { batch_id: batchId, company_id: c.companyId, seq_from: from, seq_to: to });

async function messagesOf(batchId: string): Promise<{ seq: number; phone: string; status: string; reason: string | null }[]> {
  const { rows } = await sql<{ seq: number; phone: string; status: string; reason: string | null }>`
    SELECT seq, phone, status, reason FROM messages WHERE batch_id = ${batchId} ORDER BY seq`.execute(db());
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

test('300 fresh numbers at limit 250, the later chunk claimed first and the chunks at once: exactly 0-249 go, 250-299 wait', async () => {
  const c = await company();
  const to = phones(300);
  const batchId = await send(c, { contacts: to }, 300);
  // The last positions' chunk starts first; the others join while it runs.
  const last = deliver(c, batchId, 200, 299);
  await Promise.all([last, deliver(c, batchId, 100, 199), deliver(c, batchId, 0, 99)]);
  // A second look (as the sweep's retry would): the waiting ones stay waiting, nothing else goes.
  await deliver(c, batchId, 0, 299);
  const ms = await messagesOf(batchId);
  assert.equal(ms.length, 300);
  assert.deepEqual(ms.filter((m) => m.status === 'sent').map((m) => m.seq), Array.from({ length: 250 }, (_, i) => i), 'positions 0-249 sent');
  assert.deepEqual(ms.filter((m) => m.seq >= 250).map((m) => [m.status, m.reason]), Array.from({ length: 50 }, () => ['pending', 'messaging_limit']));
  const requested = new Set(graph.requests.map((r) => r.body?.to));
  assert.deepEqual(to.filter((p) => requested.has(p.slice(1))), to.slice(0, 250), 'only the first 250 reached Meta');
});

test('a segment send admits its members in the order they were added, not in contact order', async () => {
  const c = await company();
  const to = phones(6);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: to.map((phone) => ({ phone })) });
  const seg = await s.admin('POST', `/admin/companies/${c.companyId}/segments`, { name: 'order' }, 201);
  await s.admin('POST', `/admin/segments/${seg.segment_id}/members`, { mode: 'add', contacts: to });
  // The last three were added first (an earlier add), the first three later.
  const t0 = Date.now() - 3600_000;
  await sql`
    UPDATE segment_members m SET added_at = ${new Date(t0).toISOString()}::timestamptz + CASE WHEN c.phone = ANY(${to.slice(3)}::text[]) THEN interval '0' ELSE interval '1 minute' END
    FROM contacts c WHERE c.contact_id = m.contact_id AND m.segment_id = ${seg.segment_id}`.execute(db());
  // 247 people already counted in the window: 3 left of the budget.
  await sql`
    INSERT INTO whatsapp_limit_counts (company_id, recipient, counted_at)
    SELECT ${c.companyId}, '+4915000' || lpad(g::text, 6, '0'), ${new Date(clock.now()).toISOString()}::timestamptz FROM generate_series(1, 247) g`.execute(db());
  const batchId = await send(c, { segment_id: seg.segment_id }, 6);
  const ms = await messagesOf(batchId);
  assert.deepEqual(ms.map((m) => m.phone), [...to.slice(3), ...to.slice(0, 3)], 'the list is in the members\' added order');
  await deliver(c, batchId, 0, 5);
  const after = await messagesOf(batchId);
  assert.deepEqual(after.map((m) => [m.phone, m.status, m.reason]), [
    ...to.slice(3).map((p) => [p, 'sent', null]),
    ...to.slice(0, 3).map((p) => [p, 'pending', 'messaging_limit']),
  ]);
});
