/**
 * A pause that stops at once (docs/whatsapp.md "A pause stops at once"), against the fake Graph API
 * with a FakeClock, the delivery runs driven directly (32 lanes, the number at 80/s): from the instant
 * the service read a pausing answer (131048, 190) no new request starts for the number, and from the
 * instant it read a template refusal (132001) none for that template, while the number's other
 * templates still go. Lanes that waited for a throughput slot look again before they send; the held
 * messages wait (`channel_paused`, no attempt counted) and go out on resume. A second process (a
 * provider registry of its own on the same database) stops from the stored state, and so does a
 * process whose channel an `account_update` webhook paused.
 *
 * The instant the answer was read is the process's stop (providers/whatsapp/stops.ts, `mono`:
 * performance.now() when it was set); a request's start is when the provider handed it to the
 * outbound client (the test wraps the client's `request`), on the same monotonic clock.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { createDeliveryClient, type DeliveryClient } from '../../src/delivery/client.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import { resumeChannel } from '../../src/db/whatsapp-channel.ts';
import { applyAccountChanges } from '../../src/domain/channel-changes.ts';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/index.ts';
import { processBatch } from '../../src/queue/handlers/batch-process.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { deliverChunk } from '../../src/queue/handlers/messages-deliver.ts';
import { releaseDue } from '../../src/queue/handlers/messages-release.ts';
import { graphError, graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { FakeClock, type TestServer } from '../helpers/server.ts';
import { whatsappCompany, type WhatsappCompany } from '../helpers/whatsapp.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';

const clock = new FakeClock(Date.now());
let s: TestServer;
let graph: FakeGraph;

/** One "worker process": its own outbound client (wrapped to record request starts) and provider registry. */
interface Proc { ctx: PipelineContext; registry: ProviderRegistry; client: DeliveryClient; starts: { at: number; to: string }[] }
const procs: Proc[] = [];

function proc(): Proc {
  const client = createDeliveryClient({ policy: parseAddressPolicy('127.0.0.1'), timeoutMs: 5_000 });
  const starts: Proc['starts'] = [];
  const request = client.request;
  client.request = (use, req) => {
    if (use === 'messages') starts.push({ at: performance.now(), to: JSON.parse(req.body ?? '{}').to });
    return request(use, req);
  };
  const db = s.service.deps.database.db;
  const registry = createProviderRegistry({ secrets: s.service.secrets, client, whatsappRatePerSecond: 80, whatsappPairIntervalMs: 6_000, db, clock });
  const ctx: PipelineContext = {
    db, boss: s.service.deps.boss, clock, logger: pino({ level: 'silent' }), providers: registry,
    drain: new AbortController().signal, deliveryConcurrency: 32, retrySchedule: [5_000],
  };
  const p = { ctx, registry, client, starts };
  procs.push(p);
  return p;
}

before(async () => {
  s = await startPipelineServer('pause_at_once', { role: 'api', clock });
  graph = await startFakeGraph();
});
after(async () => {
  for (const p of procs) {
    await p.registry.close();
    await p.client.close();
  }
  await s.close();
  await graph.close();
});

let run = Math.floor(Math.random() * 80_000) + 10_000;
function phones(n: number): string[] {
  run++;
  return Array.from({ length: n }, (_, i) => `+49157${String(run).padStart(5, '0')}${String(i).padStart(3, '0')}`);
}

async function company(): Promise<WhatsappCompany> {
  return whatsappCompany(s, graph, { templates: [graphTemplate('bye', 'en', {})], channel: { throughput_per_second: 80, messaging_limit: null } });
}

/** A batch of a campaign of the company with `template` to `to`, fanned out (not delivered). */
async function batch(c: WhatsappCompany, template: string, to: string[], p: Proc): Promise<string> {
  const campaign = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: `wa ${template}`, template: { body: 'Hi', whatsapp: { name: template, language: 'en' } } }, 201);
  const sent = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: to }, 202);
  const batchId: string = sent.batch_id;
  let fanned = 0;
  for (let step = await processBatch(p.ctx, batchId); step; step = await processBatch(p.ctx, batchId)) fanned += step.messages;
  assert.equal(fanned, to.length);
  return batchId;
}

/** Every message of the batch as stored (status, reason while pending, attempts, error code). */
async function messagesOf(_s: TestServer, batchId: string): Promise<{ status: string; reason: string | null; attempts: number; error_code: string | null }[]> {
  const { rows } = await sql<{ status: string; reason: string | null; attempts: number; error_code: string | null }>`
    SELECT status, reason, attempts, error_code FROM messages WHERE batch_id = ${batchId} ORDER BY seq`.execute(s.service.deps.database.db);
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

const deliver = (p: Proc, c: WhatsappCompany, batchId: string, n: number, from = 0) =>
  deliverChunk(p.ctx, { batch_id: batchId, company_id: c.companyId, seq_from: from, seq_to: from + n - 1 });

/**
 * Sends N messages through one process with 32 lanes at 80/s; Meta answers the K-th request with
 * `code` (HTTP `status`); checks that no request started after the answer was read, that the held
 * messages wait without an attempt, and that they go out on resume.
 */
async function pausedAtOnce(t: TestContext, code: number, status: number, reason: string): Promise<void> {
  const p = proc();
  const c = await company();
  const N = 150;
  const K = 40;
  const to = phones(N);
  const ours = new Set(to.map((x) => x.slice(1)));
  let n = 0;
  graph.script = (req) => (ours.has(req.body?.to) && ++n === K ? graphError(status, code, `refused with ${code}`) : undefined);
  const batchId = await batch(c, 'hello', to, p);
  await deliver(p, c, batchId, N);

  const stop = p.registry.whatsappPacing.stops.numberStop(c.companyId);
  assert.ok(stop, 'the number is stopped in the process');
  assert.equal(stop.reason, reason);
  const started = p.starts.filter((x) => ours.has(x.to));
  const late = started.filter((x) => x.at > stop.mono);
  assert.deepEqual(late, [], `no request starts after the answer was read (${started.length} started)`);
  assert.ok(started.length >= K, `${started.length} requests`);
  t.diagnostic(`${started.length} requests started, the ${K}th refused; ${N - started.length} held without a request`);
  assert.equal(graph.requests.filter((r) => ours.has(r.body?.to)).length, started.length, 'the fake counts exactly the requests started before');
  // The requests on the wire when the answer came finished (sent); the refused one and the rest wait.
  const ms = await messagesOf(s, batchId);
  assert.equal(ms.length, N);
  assert.equal(ms.filter((m) => m.status === 'sent').length, started.length - 1);
  assert.equal(ms.filter((m) => m.status === 'pending' && m.reason === 'channel_paused').length, N - started.length + 1);
  assert.equal(ms.filter((m) => m.attempts === 1).length, started.length, 'only the requests made count as attempts');
  assert.equal(ms.filter((m) => m.attempts === 0).length, N - started.length);

  // Resumed a minute later: every held message goes out.
  graph.script = () => undefined;
  clock.advance(60_000);
  assert.equal(await resumeChannel(s.service.deps.database.db, c.companyId, 'resumed by an operator', clock.now()), true);
  assert.equal(await releaseDue(p.ctx, batchId), N - started.length + 1, 'the resume released every held message');
  await deliver(p, c, batchId, N);
  const after = await messagesOf(s, batchId);
  assert.deepEqual(after.filter((m) => m.status !== 'sent'), []);
  assert.equal(p.registry.whatsappPacing.stops.numberStop(c.companyId), undefined, 'the resume ended the stop');
}

test('131048 with 32 lanes busy at 80/s: no request starts after the answer was read; the held messages go out on resume', async (t) => {
  await pausedAtOnce(t, 131048, 400, '131048: Spam rate limit hit');
});

test('190 (access token expired): the same', async (t) => {
  await pausedAtOnce(t, 190, 401, '190: Access token has expired');
});

test('132001: no further request for that template starts; the number\'s other templates still go', async () => {
  const p = proc();
  const c = await company();
  const N = 120;
  const K = 30;
  const helloTo = phones(N);
  const byeTo = phones(N);
  const hello = new Set(helloTo.map((x) => x.slice(1)));
  const bye = new Set(byeTo.map((x) => x.slice(1)));
  let n = 0;
  graph.script = (req) => (hello.has(req.body?.to) && ++n === K ? graphError(400, 132001, 'template name does not exist in the translation') : undefined);
  const helloBatch = await batch(c, 'hello', helloTo, p);
  const byeBatch = await batch(c, 'bye', byeTo, p);
  await Promise.all([deliver(p, c, helloBatch, N), deliver(p, c, byeBatch, N)]);

  const stop = p.registry.whatsappPacing.stops.templateStop(c.companyId, 'hello', 'en');
  assert.ok(stop, 'the template is stopped in the process');
  assert.equal(p.registry.whatsappPacing.stops.numberStop(c.companyId), undefined, 'the number is not');
  const helloStarts = p.starts.filter((x) => hello.has(x.to));
  assert.deepEqual(helloStarts.filter((x) => x.at > stop.mono), [], `no request for the template starts after the refusal was read (${helloStarts.length} started)`);
  assert.ok(helloStarts.length >= K);
  assert.ok(p.starts.filter((x) => bye.has(x.to) && x.at > stop.mono).length > 0, 'the other template still goes after it');

  const hs = await messagesOf(s, helloBatch);
  assert.equal(hs.filter((m) => m.status === 'failed' && m.error_code === '132001').length, 1);
  assert.equal(hs.filter((m) => m.status === 'sent').length, helloStarts.length - 1, 'the requests on the wire finished');
  assert.equal(hs.filter((m) => m.status === 'failed' && m.error_code === 'template_unavailable' && m.attempts === 0).length, N - helloStarts.length, 'the others fail without a request');
  assert.equal(hs.filter((m) => m.attempts === 1).length, helloStarts.length);
  const bs = await messagesOf(s, byeBatch);
  assert.deepEqual(bs.map((m) => m.status), Array(N).fill('sent'));
});

test('another process stops from the stored state: its lanes waiting for a slot look again before they send', async (t) => {
  const a = proc();
  const b = proc();
  const c = await company();
  const N = 200;
  const K = 20;
  const to = phones(N);
  const ours = new Set(to.map((x) => x.slice(1)));
  const aHalf = new Set(to.slice(0, N / 2).map((x) => x.slice(1)));
  let n = 0;
  let refusedAt = Infinity;
  graph.script = (req) => {
    // Only A is refused (the K-th request of its half): B never reads a pausing answer.
    if (!aHalf.has(req.body?.to)) return undefined;
    if (++n === K) {
      refusedAt = performance.now();
      return graphError(400, 131048, 'spam rate limit hit');
    }
    return undefined;
  };
  const batchId = await batch(c, 'hello', to, a);
  // Process A delivers the first half, process B the second, at the same time, sharing the number's 80/s.
  await Promise.all([deliver(a, c, batchId, N / 2), deliver(b, c, batchId, N / 2, N / 2)]);

  const stopA = a.registry.whatsappPacing.stops.numberStop(c.companyId);
  const stopB = b.registry.whatsappPacing.stops.numberStop(c.companyId);
  assert.ok(stopA && stopB, 'both processes stopped the number');
  assert.ok(refusedAt < Infinity);
  assert.equal(stopB.confirmed, true, 'B learnt it from the stored state');
  assert.equal(b.starts.filter((x) => ours.has(x.to)).length, graph.requests.filter((r) => ours.has(r.body?.to) && !aHalf.has(r.body?.to)).length);
  for (const [p, stop] of [[a, stopA], [b, stopB]] as const) {
    assert.deepEqual(p.starts.filter((x) => ours.has(x.to) && x.at > stop.mono), [], 'no request after the process saw the stop');
  }
  // B stops within one reservation (at most 100 ms of the number's time) of the stored pause.
  const bAfter = b.starts.filter((x) => ours.has(x.to) && x.at > refusedAt).length;
  t.diagnostic(`A started ${a.starts.length}, B ${b.starts.length}; B started ${bAfter} after A's refusal was answered`);
  assert.ok(bAfter <= 16, `B started ${bAfter} requests after the refusal`);
  const ms = await messagesOf(s, batchId);
  const made = a.starts.length + b.starts.length;
  assert.equal(ms.filter((m) => m.status === 'sent').length, made - 1);
  assert.equal(ms.filter((m) => m.status === 'pending' && m.reason === 'channel_paused').length, N - made + 1);
  assert.equal(ms.filter((m) => m.attempts === 1).length, made);
});

test('a pause stored by an account_update webhook stops the running lanes at their next reservation', async (t) => {
  const p = proc();
  const c = await company();
  const N = 120;
  const K = 20;
  const to = phones(N);
  const ours = new Set(to.map((x) => x.slice(1)));
  const db = s.service.deps.database.db;
  let n = 0;
  let storedAt = Infinity;
  let pausing: Promise<void> | undefined;
  graph.script = (req) => {
    if (ours.has(req.body?.to) && ++n === K) {
      // Meta's account_update arrives while the run sends: applied as the webhook job applies it.
      pausing = db.transaction().execute((trx) => applyAccountChanges(trx, c.companyId, [{ kind: 'pause', at: null, reason: 'account_update: ACCOUNT_RESTRICTION' }], clock.now()))
        .then((r) => { assert.equal(r.paused, 1); storedAt = performance.now(); });
    }
    return undefined;
  };
  const batchId = await batch(c, 'hello', to, p);
  await deliver(p, c, batchId, N);
  await pausing;

  const stop = p.registry.whatsappPacing.stops.numberStop(c.companyId);
  assert.ok(stop, 'the process stopped the number from the stored state');
  assert.deepEqual([stop.reason, stop.confirmed], ['account_update: ACCOUNT_RESTRICTION', true]);
  const started = p.starts.filter((x) => ours.has(x.to));
  assert.deepEqual(started.filter((x) => x.at > stop.mono), [], 'no request after the process saw the pause');
  // Slots reserved before the pause was stored may still be used: at most two blocks of 100 ms (8 slots each at 80/s).
  const afterStored = started.filter((x) => x.at > storedAt).length;
  t.diagnostic(`${started.length} requests started, ${afterStored} of them after the pause was stored`);
  assert.ok(afterStored <= 16, `${afterStored} requests started after the pause was stored`);
  const ms = await messagesOf(s, batchId);
  assert.equal(ms.filter((m) => m.status === 'sent').length, started.length);
  assert.equal(ms.filter((m) => m.status === 'pending' && m.reason === 'channel_paused' && m.attempts === 0).length, N - started.length);
});
