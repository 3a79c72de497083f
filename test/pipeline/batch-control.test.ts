/**
 * Cancel, pause and resume of a send (docs/decisions.md "Cancel, pause and resume"), through the real
 * service with its workers and a webhook receiver in the test that answers slowly:
 * - a cancel in the middle of a delivery answers at once; after its answer at most the in-flight bound
 *   of messages reach the receiver, every other message ends skipped / `cancelled`, none twice;
 * - a scheduled send cancelled before it starts sends nothing, at its time either;
 * - a pause holds everything back (beyond what was in flight), shows `paused`, survives the workers'
 *   sweeps; the resume delivers the rest: every message reaches the receiver exactly once;
 * - a segment send confirmed in the console is cancelled while it is being fanned out: the answer is
 *   quick, the batch ends with every message written once, each sent or cancelled; a second confirm
 *   meanwhile answers quickly too;
 * - bad input: unknown batch 404, finished batch 200 `cancelled: 0` / 409 for pause and resume; the
 *   console buttons and `cms batch pause|resume`;
 * - with the handlers driven directly (no workers): a fan-out that dies between two steps is resumed
 *   by its rerun (every item written once, each pending message in one delivery chunk); a cancel, or a
 *   pause, between two steps.
 * With WORKER_CONCURRENCY=1: at most 4 delivery runs at once, so the bound is 4 × 2 × 32 messages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DELIVERY_CONCURRENCY } from '../../src/queue/workers.ts';
import { JOB_SPECS } from '../../src/queue/jobs.ts';
import { ADMIN_TOKEN, eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { confirmFrom, newCompany, signedInClient } from '../console/helpers.ts';
import { batchStatus, completed, directContext, messagesOf, phone, startPipelineServer } from './helpers.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { FAN_OUT_STEP, processBatch } from '../../src/queue/handlers/batch-process.ts';
import { deliverChunk } from '../../src/queue/handlers/messages-deliver.ts';
import { claimMessages } from '../../src/db/messages.ts';
import { controlBatch } from '../../src/queue/handlers/batch-control.ts';
import { CANCEL_STEP } from '../../src/domain/batch-control.ts';

const WORKER_CONCURRENCY = 1;
/** Delivery runs at once in the one worker process, and what each may still hand over after a pause or cancel. */
const RUNS = WORKER_CONCURRENCY * JOB_SPECS['messages-deliver'].work.batchSize!;
const IN_FLIGHT_BOUND = RUNS * 2 * DELIVERY_CONCURRENCY;

let s: TestServer;
let r: WebhookReceiver;
const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
const run = Math.floor(Math.random() * 1000);
let seq = 0;
/** Paths of the receiver that are answered slowly (ms). */
const slow = new Map<string, number>();

before(async () => {
  r = await startReceiver({ answer: (x) => ({ status: 200, delayMs: slow.get(x.path) ?? 0 }) });
  s = await startPipelineServer('batch_control', { clock, env: { WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) } });
});
after(async () => {
  await s?.close();
  await r?.close();
});

/** A company whose channel is the receiver at `path` (answering after `delayMs`), and a campaign. */
async function sender(path: string, delayMs: number): Promise<{ companyId: number; campaignId: number }> {
  slow.set(path, delayMs);
  const { companyId } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: r.origin + path, secret: r.secret });
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'big', template: { body: 'Hi {{ phone }}' }, expire_after: null }, 201);
  return { companyId, campaignId: campaign.campaign_id };
}

const numbers = (n: number) => Array.from({ length: n }, () => phone(run, ++seq));
const seenAt = (path: string) => r.seen.filter((x) => x.path === path);
const answeredAt = (path: string) => seenAt(path).filter((x) => x.answered === 200);

async function raw(method: string, p: string): Promise<{ status: number; body: any; ms: number }> {
  const t = performance.now();
  const res = await fetch(s.url + p, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, ms: performance.now() - t };
}

/** Messages of the batch a delivery run holds under a live lease. */
async function leased(batchId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM messages WHERE batch_id = ${batchId}::uuid AND status = 'pending' AND lease_until > now()`.execute(s.service.deps.database.db);
  return rows[0].n;
}

/** Every message reached the receiver at most once; returns the webhook-ids answered 2xx. */
function onceEach(path: string): Set<string> {
  const ids = seenAt(path).map((x) => x.id);
  assert.equal(new Set(ids).size, ids.length, 'no message reached the receiver twice');
  return new Set(answeredAt(path).map((x) => x.id));
}

describe('cancel, pause and resume with a slow receiver', () => {
  test('cancel mid-delivery: a quick answer, at most the in-flight bound after it, the rest skipped / cancelled', async () => {
    const path = '/cancel-mid';
    const { campaignId } = await sender(path, 300);
    const total = 1000;
    const sent = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: numbers(total) }, 202);
    await eventually(async () => seenAt(path).length >= 100, 60_000, 20);
    const answer = await raw('POST', `/admin/batches/${sent.batch_id}/cancel`);
    const answerAt = Date.now();
    assert.equal(answer.status, 200);
    assert.ok(answer.ms < 5_000, `the cancel answered in ${answer.ms.toFixed(0)} ms`);
    assert.equal(answer.body.before_fan_out, false);
    const batch = await completed(s, sent.batch_id, 60_000);
    const after = seenAt(path).filter((x) => x.at > answerAt).length;
    assert.ok(after <= IN_FLIGHT_BOUND, `${after} requests after the answer (bound ${IN_FLIGHT_BOUND})`);
    const delivered = onceEach(path);
    assert.equal(batch.counts.sent, delivered.size, 'sent = what the receiver answered');
    assert.equal(batch.counts.sent + batch.counts.skipped, total);
    assert.ok(batch.counts.skipped >= answer.body.cancelled, 'what the answer counted ended cancelled');
    assert.ok(batch.counts.skipped - answer.body.cancelled <= IN_FLIGHT_BOUND, 'the rest of the cancelled ones were claimed, not started');
    assert.ok(batch.counts.sent < total / 2, `the cancel stopped most of the send (${batch.counts.sent} sent)`);
    const { rows } = await sql<{ reason: string }>`
      SELECT DISTINCT reason FROM messages WHERE batch_id = ${sent.batch_id}::uuid AND status = 'skipped'`.execute(s.service.deps.database.db);
    assert.deepEqual(rows.map((x) => x.reason), ['cancelled']);
    // Again, and on a completed batch: nothing more.
    assert.deepEqual([(await raw('POST', `/admin/batches/${sent.batch_id}/cancel`)).body.cancelled], [0]);
  });

  test('a scheduled send cancelled before its time sends nothing, at its time either', async () => {
    const path = '/cancel-scheduled';
    const { campaignId } = await sender(path, 0);
    const at = new Date(clock.now() + 3_600_000).toISOString();
    const sent = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: [...numbers(30), 'not a number'], scheduled_for: at }, 202);
    const answer = await s.admin('POST', `/admin/batches/${sent.batch_id}/cancel`);
    assert.equal(answer.cancelled, 30, 'every valid number, written yet or not');
    const batch = await completed(s, sent.batch_id);
    assert.deepEqual(batch.counts, { total: 31, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 31, pending: 0 });
    clock.advance(2 * 3_600_000);
    await s.service.workers!.sweepNow();
    await s.service.workers!.sweepNow();
    const ms = await messagesOf(s, sent.batch_id);
    assert.deepEqual(ms.filter((m) => m.reason === 'cancelled').length, 30);
    assert.deepEqual(ms.filter((m) => m.reason === 'invalid_phone').length, 1);
    assert.equal(seenAt(path).length, 0, 'nothing reached the receiver');
  });

  test('pause holds everything back but what was in flight, shows paused; resume delivers the rest, each once', async () => {
    const path = '/pause';
    const { companyId, campaignId } = await sender(path, 200);
    const total = 600;
    const sent = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: numbers(total) }, 202);
    await eventually(async () => seenAt(path).length >= 60, 60_000, 20);
    const paused = await raw('POST', `/admin/batches/${sent.batch_id}/pause`);
    const pausedAt = Date.now();
    assert.equal(paused.status, 200);
    assert.equal(paused.body.status, 'paused');
    assert.ok(paused.ms < 5_000, `the pause answered in ${paused.ms.toFixed(0)} ms`);
    assert.equal((await raw('POST', `/admin/batches/${sent.batch_id}/pause`)).body.status, 'paused', 'pausing again changes nothing');
    // What was in flight finishes; then nothing moves, sweeps (release, dead-lease recovery) included.
    await eventually(async () => (await leased(sent.batch_id)) === 0 && seenAt(path).every((x) => x.answered !== 0), 30_000, 50);
    const held = seenAt(path).length;
    await s.service.workers!.sweepNow();
    await s.service.workers!.sweepNow();
    assert.equal(seenAt(path).length, held, 'nothing handed over while paused');
    assert.ok(seenAt(path).filter((x) => x.at > pausedAt).length <= IN_FLIGHT_BOUND);
    const during = await batchStatus(s, sent.batch_id);
    assert.equal(during.status, 'paused');
    assert.equal(during.counts.pending, total - held, 'the rest waits, pending');
    const list = await s.admin('GET', `/admin/companies/${companyId}/batches`);
    assert.equal(list.batches[0].status, 'paused', 'the batch list shows it paused too');

    const resumed = await raw('POST', `/admin/batches/${sent.batch_id}/resume`);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.status, 'processing');
    const batch = await completed(s, sent.batch_id, 60_000);
    assert.deepEqual(batch.counts, { total, sent: total, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
    assert.equal(onceEach(path).size, total, 'every message reached the receiver exactly once');
    assert.equal((await raw('POST', `/admin/batches/${sent.batch_id}/resume`)).status, 409, 'a completed batch: nothing to resume');
  });

  test('bad input: unknown 404; finished: cancel 200 cancelled 0, pause and resume 409; cancelled: 409', async () => {
    const unknown = crypto.randomUUID();
    for (const action of ['cancel', 'pause', 'resume']) {
      assert.deepEqual(await raw('POST', `/admin/batches/${unknown}/${action}`).then((x) => [x.status, x.body]), [404, { detail: 'Batch not found' }]);
      assert.equal((await raw('POST', `/admin/batches/not-a-uuid/${action}`)).status, 404);
    }
    const path = '/bad-input';
    const { campaignId } = await sender(path, 0);
    const done = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: numbers(2) }, 202);
    await completed(s, done.batch_id);
    assert.deepEqual((await raw('POST', `/admin/batches/${done.batch_id}/cancel`)).body, { batch_id: done.batch_id, cancelled: 0, before_fan_out: false });
    for (const action of ['pause', 'resume']) {
      assert.deepEqual(await raw('POST', `/admin/batches/${done.batch_id}/${action}`).then((x) => [x.status, x.body]), [409, { detail: 'Batch is completed' }]);
    }
    const at = new Date(clock.now() + 3_600_000).toISOString();
    const later = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: numbers(2), scheduled_for: at }, 202);
    await s.admin('POST', `/admin/batches/${later.batch_id}/cancel`);
    for (const action of ['pause', 'resume']) {
      const x = await raw('POST', `/admin/batches/${later.batch_id}/${action}`);
      assert.ok(x.status === 409 && ['Batch is cancelled', 'Batch is completed'].includes(x.body.detail), `${action}: ${x.status} ${JSON.stringify(x.body)}`);
    }
  });
});

describe('the console and the CLI', () => {
  test('the send page pauses and resumes; cms batch pause / resume', async () => {
    const path = '/console-pause';
    const { companyId, campaignId } = await sender(path, 0);
    const at = new Date(clock.now() + 3_600_000).toISOString();
    const sent = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, { contacts: numbers(3), scheduled_for: at }, 202);
    const cl = await signedInClient(s, companyId, 'marketer');
    const page = `/console/sends/${sent.batch_id}`;
    assert.match((await cl.get(page)).text, /data-pause/);
    const pause = await cl.submit(page, `${page}/pause`, {});
    assert.deepEqual([pause.status, pause.location], [303, page]);
    const pausedPage = await cl.get(page);
    assert.match(pausedPage.text, /badge-paused/);
    assert.match(pausedPage.text, /data-resume/);
    const resume = await cl.submit(page, `${page}/resume`, {});
    assert.equal(resume.status, 303);
    assert.notEqual((await s.admin('GET', `/admin/batches/${sent.batch_id}`)).status, 'paused');
    const reader = await signedInClient(s, companyId, 'developer');
    assert.doesNotMatch((await reader.get(page)).text, /data-pause|data-resume/, 'a read-only role sees no buttons');
    assert.equal((await reader.submit(page, `${page}/pause`, {})).status, 403);

    const { runCli } = await import('../cli/helpers.ts');
    const env = { CMS_URL: s.url, ADMIN_TOKEN };
    const p = await runCli(['batch', 'pause', sent.batch_id], { env });
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /^status\tpaused$/m);
    assert.match(p.stdout, /funnel: sent 0/);
    const q = await runCli(['batch', 'resume', sent.batch_id, '--json'], { env });
    assert.equal(q.code, 0, q.stderr);
    assert.notEqual(JSON.parse(q.stdout).status, 'paused');
    await s.admin('POST', `/admin/batches/${sent.batch_id}/cancel`);
    const refused = await runCli(['batch', 'pause', sent.batch_id], { env });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Batch is (cancelled|completed)/);
  });
});

describe('a segment send cancelled while it is being fanned out', () => {
  test('the cancel and a second confirm answer quickly; every message written once, each sent or cancelled', async () => {
    const path = '/fan-out';
    const { companyId, campaignId } = await sender(path, 0);
    const members = 2000;
    const db = s.service.deps.database.db;
    const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'k' }, 201)).api_key as string;
    const seg = await s.api('/api/segments/create', { key, body: { name: 'everyone' } });
    assert.equal(seg.status, 200, seg.text);
    const base = 100_000 + run * 100;
    await sql`
      INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, country)
      SELECT ${companyId}, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')), 'DE'
      FROM generate_series(1, ${members}::int) AS i, LATERAL (SELECT '+49170' || lpad((${base}::int * 10 + i)::text, 8, '0') AS phone) p`.execute(db);
    await sql`INSERT INTO segment_members (segment_id, contact_id) SELECT ${seg.json.segment_id}, contact_id FROM contacts WHERE company_id = ${companyId}`.execute(db);
    const other = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'other', template: { body: 'Other' } }, 201);

    const cl = await signedInClient(s, companyId);
    const form = { audience: 'segment', segment_id: String(seg.json.segment_id), numbers: '', when: 'now', send_at: '' };
    const confirm = async (id: number) => {
      const page = `/console/campaigns/${id}/send`;
      const review = await cl.submit(page, page, form);
      assert.equal(review.status, 200);
      const t = performance.now();
      const answer = await confirmFrom(cl, review, `${page}/confirm`, form);
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      return { batchId: answer.location!.split('/').pop()!, ms: performance.now() - t };
    };
    const first = await confirm(campaignId);
    assert.ok(first.ms < 10_000, `the confirm answered in ${first.ms.toFixed(0)} ms`);
    const progress = async (id: string) => (await db.selectFrom('batches').select(['fanned_out', 'total']).where('batch_id', '=', id).executeTakeFirstOrThrow());
    // While the first is being written: a second confirm, then the cancel of the first.
    await eventually(async () => (await progress(first.batchId)).fanned_out > 0, 60_000, 10);
    const second = await confirm(other.campaign_id);
    assert.ok(second.ms < 10_000, `the second confirm answered in ${second.ms.toFixed(0)} ms`);
    const before = await progress(first.batchId);
    const answer = await raw('POST', `/admin/batches/${first.batchId}/cancel`);
    assert.equal(answer.status, 200);
    assert.ok(answer.ms < 5_000, `the cancel answered in ${answer.ms.toFixed(0)} ms`);

    const batch = await completed(s, first.batchId, 120_000);
    assert.equal(batch.counts.total, members);
    assert.equal(batch.counts.sent + batch.counts.skipped, members, 'each sent or cancelled');
    const { rows } = await sql<{ n: number; seqs: number; cancelled: number }>`
      SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs, count(*) FILTER (WHERE reason = 'cancelled')::int AS cancelled
      FROM messages WHERE batch_id = ${first.batchId}::uuid`.execute(db);
    assert.deepEqual([rows[0].n, rows[0].seqs], [members, members], 'every member has exactly one message');
    assert.equal(rows[0].cancelled, batch.counts.skipped);
    if (before.fanned_out < before.total) assert.ok(rows[0].cancelled >= before.total - before.fanned_out - IN_FLIGHT_BOUND, 'the items not written at the cancel ended cancelled');
    const secondBatch = await completed(s, second.batchId, 120_000);
    assert.equal(onceEach(path).size, batch.counts.sent + secondBatch.counts.sent, 'sent = what the receiver got, each once');
  });
});

describe('a fan-out that stops between steps (a crash, or a cancel meanwhile), handlers driven directly', () => {
  let d: TestServer;
  let ctx: PipelineContext;
  before(async () => {
    d = await startPipelineServer('batch_control_direct', { role: 'api', clock });
    ctx = directContext(d, clock);
  });
  after(async () => {
    await ctx?.providers.close();
    await d?.close();
  });

  /** An outbox campaign send of `n` numbers, accepted (no workers: nothing runs it). */
  async function accepted(n: number): Promise<string> {
    const { companyId } = await d.company();
    const campaign = await d.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'direct', template: { body: 'Hi' } }, 201);
    return (await d.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts: numbers(n) }, 202)).batch_id;
  }
  /** A context whose fan-out dies before its step number `at` (counted from 1). */
  const dyingAt = (at: number): PipelineContext => {
    let steps = 0;
    return { ...ctx, idle: async () => { if (++steps === at) throw new Error('the process died'); } };
  };
  const written = async (batchId: string) => (await sql<{ n: number; seqs: number; max: number | null }>`
    SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs, max(seq) AS max FROM messages WHERE batch_id = ${batchId}::uuid`.execute(ctx.db)).rows[0];
  const chunks = async (batchId: string) => (await sql<{ from: number; to: number }>`
    SELECT (data->>'seq_from')::int AS "from", (data->>'seq_to')::int AS "to" FROM pgboss.job
    WHERE name = 'messages-deliver' AND data->>'batch_id' = ${batchId} ORDER BY 1`.execute(ctx.db)).rows;

  test('a crash after two steps: the rerun writes the rest, every item once, every pending message in one chunk', async () => {
    const n = 1000;
    const batchId = await accepted(n);
    await assert.rejects(processBatch(dyingAt(3), batchId), /the process died/);
    const part = await written(batchId);
    assert.deepEqual([part.n, part.seqs, part.max], [2 * FAN_OUT_STEP, 2 * FAN_OUT_STEP, 2 * FAN_OUT_STEP - 1], 'two committed steps');
    assert.equal((await batchStatus(d, batchId)).status, 'processing');
    const rest = await processBatch(ctx, batchId);
    assert.equal(rest?.messages, n - 2 * FAN_OUT_STEP, 'the rerun wrote only the rest');
    assert.equal(await processBatch(ctx, batchId), null, 'a third run finds nothing to do');
    const all = await written(batchId);
    assert.deepEqual([all.n, all.seqs], [n, n]);
    const covered = new Array<number>(n).fill(0);
    for (const c of await chunks(batchId)) for (let q = c.from; q <= c.to; q++) covered[q]++;
    assert.ok(covered.every((t) => t === 1), 'each message in exactly one delivery chunk');
    const company = (await d.admin('GET', `/admin/batches/${batchId}`)).company_id;
    for (const c of await chunks(batchId)) await deliverChunk(ctx, { batch_id: batchId, company_id: company, seq_from: c.from, seq_to: c.to });
    const batch = await completed(d, batchId);
    assert.deepEqual(batch.counts, { total: n, sent: n, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  });

  test('cancelled between two steps: what was written and what was not ends cancelled, the batch completes', async () => {
    const n = 800;
    const batchId = await accepted(n);
    await assert.rejects(processBatch(dyingAt(2), batchId), /the process died/);
    const answer = await d.admin('POST', `/admin/batches/${batchId}/cancel`);
    assert.deepEqual([answer.cancelled, answer.before_fan_out], [n, false], 'the written step and the items not written');
    assert.equal((await written(batchId)).n, FAN_OUT_STEP);
    const rest = await processBatch(ctx, batchId);
    assert.equal(rest?.pending, 0, 'the rest written cancelled');
    const batch = await completed(d, batchId);
    assert.deepEqual(batch.counts, { total: n, sent: 0, delivered: 0, read: 0, failed: 0, skipped: n, pending: 0 });
    const { rows } = await sql<{ reason: string; n: number }>`
      SELECT reason, count(*)::int AS n FROM messages WHERE batch_id = ${batchId}::uuid GROUP BY reason`.execute(ctx.db);
    assert.deepEqual(rows, [{ reason: 'cancelled', n }]);
    assert.equal(await controlBatch(ctx, { batch_id: batchId }), 0, 'the cancel job finds nothing left');
  });

  test('a cancel waits for a claim in progress and every later claim sees it; a fan-out step\'s progress update waits for neither (PostgreSQL)', async (t) => {
    if (d.kind !== 'postgres') return t.skip('PGlite has one connection: a transaction held open blocks everything');
    const n = 100;
    const batchId = await accepted(n);
    await processBatch(ctx, batchId);
    // A delivery claim in progress: its transaction still open.
    const claiming = await ctx.db.startTransaction().execute();
    let cancel: Promise<any> | undefined;
    try {
      const first = await claimMessages(claiming, batchId, 0, n - 1, 60, clock.now(), 10);
      assert.deepEqual([first.state, first.claimed.length], ['running', 10]);
      // The batch row's other updates (a fan-out step moving `fanned_out`) do not wait for the claim.
      await ctx.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '2s'`.execute(trx);
        await sql`UPDATE batches SET fanned_out = fanned_out WHERE batch_id = ${batchId}::uuid`.execute(trx);
      });
      // The cancel does: it answers only once the claim has committed.
      let answered = false;
      cancel = d.admin('POST', `/admin/batches/${batchId}/cancel`).then((a) => { answered = true; return a; });
      await eventually(async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`.execute(ctx.db)).rows[0].n > 0, 20_000, 10);
      assert.equal(answered, false, 'the cancel waits for the claim in progress');
    } finally {
      await claiming.commit().execute();
    }
    const answer = await cancel;
    assert.equal(answer.cancelled, n - 10, 'everything but the 10 claimed before the answer');
    const later = await claimMessages(ctx.db, batchId, 0, n - 1, 60, clock.now());
    assert.deepEqual([later.state, later.claimed.length], ['cancelled', 0], 'a claim after the answer takes nothing');
  });

  test('a cancel job whose first step finds its messages taken by a step beside it (the request\'s) goes on to the end', async () => {
    const n = 3 * CANCEL_STEP;
    const batchId = await accepted(n);
    await processBatch(ctx, batchId);
    await sql`UPDATE batches SET cancelled_at = now() WHERE batch_id = ${batchId}::uuid`.execute(ctx.db);
    // The step beside it: the first CANCEL_STEP messages, changed in a transaction still open while the job picks them.
    const beside = await ctx.db.startTransaction().execute();
    await sql`UPDATE messages SET status = 'skipped', reason = 'cancelled' WHERE batch_id = ${batchId}::uuid AND seq < ${CANCEL_STEP}`.execute(beside);
    const job = controlBatch(ctx, { batch_id: batchId });
    if (d.kind === 'postgres') {
      // The job's first step waits on those rows (PGlite has one connection: it waits for the commit instead).
      await eventually(async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`.execute(ctx.db)).rows[0].n > 0, 20_000, 10);
    }
    await beside.commit().execute();
    assert.equal(await job, n - CANCEL_STEP, 'the job cancelled the rest');
    const batch = await completed(d, batchId);
    assert.deepEqual(batch.counts, { total: n, sent: 0, delivered: 0, read: 0, failed: 0, skipped: n, pending: 0 });
  });

  test('paused during the fan-out: no delivery chunk for what is written; the resume enqueues them', async () => {
    const n = 600;
    const batchId = await accepted(n);
    await d.admin('POST', `/admin/batches/${batchId}/pause`);
    await processBatch(ctx, batchId);
    assert.deepEqual(await chunks(batchId), [], 'nothing to deliver while paused');
    const company = (await d.admin('GET', `/admin/batches/${batchId}`)).company_id;
    assert.equal((await d.admin('GET', `/admin/batches/${batchId}`)).status, 'paused');
    await deliverChunk(ctx, { batch_id: batchId, company_id: company, seq_from: 0, seq_to: n - 1 });
    assert.equal((await batchStatus(d, batchId)).counts.sent, 0, 'a chunk of a paused batch hands nothing over');
    await d.admin('POST', `/admin/batches/${batchId}/resume`);
    assert.equal(await controlBatch(ctx, { batch_id: batchId }), 1, 'one outbox chunk enqueued again');
    const [c] = await chunks(batchId);
    await deliverChunk(ctx, { batch_id: batchId, company_id: company, seq_from: c.from, seq_to: c.to });
    assert.deepEqual((await completed(d, batchId)).counts, { total: n, sent: n, delivered: 0, read: 0, failed: 0, skipped: 0, pending: 0 });
  });
});
