/**
 * A million-recipient campaign on PostgreSQL, beside the bare delivery limit (docs/benchmarks.md
 * "A million-recipient campaign"):
 *
 *   node bench/million.ts [--db-url postgres://postgres@127.0.0.1:5432/postgres] [--contacts 1000000]
 *                         [--workers 2] [--segments 1] [--console-gap-ms 250] [--cpu-prof DIR] [--keep]
 *
 * Setup (not measured): a database `bench_million` next to the one in the URL (dropped and created);
 * the webhook receiver of the benchmarks in a process of its own (test/helpers/receiver.ts
 * `startCountingReceiverProcess`: node:http, keep-alive, answers 200 at once); one API process
 * (`cms serve --role api`, with the Node options of `npm start` and the service's defaults,
 * DB_POOL_MAX 10); through its operator API a company with the webhook channel on the receiver (a
 * `whsec_` secret), a campaign (a template with two variables and a button) and the segments; set-based
 * SQL (bench/lib/segment-seed.ts) writes `--contacts` contacts, none opted out, as members of
 * `--segments` segments of equal size (default 1: a million is one send; a send to a segment takes up to
 * MAX_SEGMENT_SEND_CONTACTS members), one send each. Then `--workers` worker processes
 * (`cms serve --role worker`) start.
 *
 * Service run: `POST /admin/campaigns/{id}/sends` with each segment, one after the other (the confirms),
 * then `GET /admin/batches/{id}` every 250 ms until every batch is `completed`. Reported: the confirms' answer
 * times; the time from the first confirm to the last final status and messages/s over it; the fan-out's
 * duration (its pg-boss job); the delivery span (first to last `sent_at`) and its rate; each process's peak RSS (VmHWM) and CPU; PostgreSQL's CPU
 * (the backends of the database, bench/lib/accept-load.ts backendCpu) per message; and, meanwhile,
 * `GET /console/login` on the API process one at a time every `--console-gap-ms`: p50 / p95 / max.
 *
 * Bare run, in the same invocation, once the workers have stopped: the sent messages' ids, `seq` and
 * `rendered` are copied into a table `bare_messages` (status pending), and `--workers` copies of
 * bench/bare-delivery.ts (one per service worker, each with the service's keep-alive connections per
 * origin, and the Node options of the service's workers) deliver them to the same receiver with the
 * same secret. Reported: messages/s, CPU and peak RSS per process, PostgreSQL's CPU per message; and
 * the ratio service rate / bare rate.
 *
 * `--cpu-prof DIR` profiles worker 1 (its whole life; open the .cpuprofile in Chrome DevTools). `--keep`
 * leaves the database in place. On a 2-core machine the receiver, PostgreSQL and the Node processes
 * share the cores: the rates are those of the whole machine, not of one component.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { admin, Harness, sleep, type Proc } from '../test/faults/helpers.ts';
import { startCountingReceiverProcess, type CountingReceiver } from '../test/helpers/receiver.ts';
import { backendCpu, cpuTicks, percentile, rssMb, serviceNodeOptions } from './lib/accept-load.ts';
import { segmentSeedSql } from './lib/segment-seed.ts';
import { MAX_SEGMENT_SEND_CONTACTS } from '../src/domain/campaign-sends.ts';
import { loadConfig } from '../src/config.ts';

const { values: args } = parseArgs({
  options: {
    'db-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    contacts: { type: 'string', default: '1000000' },
    workers: { type: 'string', default: '2' },
    // Segments (and sends) the contacts are split over; 10 reproduces ten sends of 100,000.
    segments: { type: 'string', default: '1' },
    'console-gap-ms': { type: 'string', default: '250' },
    'cpu-prof': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

const DB_NAME = 'bench_million';
const TEMPLATE = { body: 'Hi {{ first_name }}, 20 % off in {{ city }} this week.', buttons: [{ text: 'Shop', url: 'https://shop.example.com' }] };

/** Runs `text` on database `url` with a client of its own. */
async function run(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return await c.query(text, params); } finally { await c.end(); }
}

/** `GET url` one at a time every `gapMs` until `stop` resolves: the latencies (ms, to the last byte) and the count of non-2xx answers and failed requests. */
async function probeLoop(url: string, gapMs: number, stop: Promise<unknown>): Promise<{ ms: number[]; bad: number }> {
  let done = false;
  void stop.then(() => { done = true; });
  const ms: number[] = [];
  let bad = 0;
  while (!done) {
    const t = performance.now();
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (!res.ok) bad++;
    } catch {
      bad++;
    }
    ms.push(performance.now() - t);
    await sleep(gapMs);
  }
  return { ms: ms.sort((a, b) => a - b), bad };
}

/** CPU seconds of each labelled process since `before` (cpuTicks, 10 ms each). */
const cpuSince = (before: Map<number, number>, procs: [string, number][]) => procs.map(([label, pid]) => [label, (cpuTicks(pid) - before.get(pid)!) / 100] as [string, number]);

interface BareResult { sent: number; failed: number; ms: number; rate: number; cpu_ms: number; max_rss_mb: number }

/**
 * The young generation the service's workers run with (`cms serve --role worker` restarts itself with
 * it, src/cli/worker-heap.ts): the bare processes get the same, so that both sides run with the same
 * Node options.
 */
function workerHeapFlags(): string[] {
  const mb = loadConfig().workerSemiSpaceMb;
  return mb > 0 ? [`--max-semi-space-size=${mb}`] : [];
}

/** Runs one bench/bare-delivery.ts process to its end; resolves to its JSON line. */
function bareProcess(url: string, receiverUrl: string, secret: string): Promise<BareResult> {
  const child = spawn(process.execPath, [...serviceNodeOptions(), ...workerHeapFlags(), path.join(import.meta.dirname, 'bare-delivery.ts'), '--db', url, '--url', receiverUrl, '--secret', secret], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`bare-delivery exited with ${code}: ${out}`)))));
}

async function main(): Promise<void> {
  const contacts = Number(args.contacts);
  const workerCount = Number(args.workers);
  const u = new URL(args['db-url']!);
  u.pathname = '/' + DB_NAME;
  const url = u.toString();
  const h = new Harness('million');
  let receiver: CountingReceiver | undefined;
  let failed = true;
  try {
    await run(args['db-url']!, `DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
    await run(args['db-url']!, `CREATE DATABASE ${DB_NAME}`);
    receiver = await startCountingReceiverProcess();
    const nodeOptions = serviceNodeOptions().join(' ');
    const env = { DB_POOL_MAX: '10', NODE_OPTIONS: nodeOptions };
    const api = h.proc({ name: 'api', role: 'api', databaseUrl: url, env });
    await api.start();

    // Setup through the operator API, the audience in SQL.
    const secret = 'whsec_' + randomBytes(32).toString('base64');
    const c = await admin(api.url, 'POST', '/admin/companies', { name: 'Million', subscription_active: true });
    const key = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'bench' });
    await admin(api.url, 'PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'webhook', url: `${receiver.url}/hook`, secret });
    const campaign = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/campaigns`, { name: 'Everyone', template: TEMPLATE, expire_after: null });
    const segmentIds: number[] = [];
    for (let i = 0; i < Math.max(Number(args.segments), Math.ceil(contacts / MAX_SEGMENT_SEND_CONTACTS)); i++) {
      const segRes = await fetch(`${api.url}/api/segments/create`, { method: 'POST', headers: { 'service-api-key': key.api_key, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Everyone ${i + 1}` }) });
      if (!segRes.ok) throw new Error(`segment: ${segRes.status} ${await segRes.text()}`);
      segmentIds.push(((await segRes.json()) as { segment_id: number }).segment_id);
    }
    const ts = performance.now();
    for (const q of segmentSeedSql(c.company_id, segmentIds, contacts)) await run(url, q);
    console.error(`  ${contacts} contacts and members written in ${((performance.now() - ts) / 1000).toFixed(1)} s`);

    const profDir = args['cpu-prof'] ? path.resolve(args['cpu-prof']) : undefined;
    if (profDir) fs.mkdirSync(profDir, { recursive: true });
    const workers: Proc[] = Array.from({ length: workerCount }, (_, i) => h.proc({
      name: `worker-${i + 1}`, role: 'worker', databaseUrl: url,
      env: { ...env, NODE_OPTIONS: nodeOptions + (profDir && i === 0 ? ` --cpu-prof --cpu-prof-dir=${profDir}` : '') },
    }));
    await Promise.all(workers.map((w) => w.start()));
    const procs: [string, number][] = [['api', api.pid!], ...workers.map((w, i) => [`worker ${i + 1}`, w.pid!] as [string, number]), ['receiver', receiver.pid]];

    const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`${os.cpus()[0]?.model}, nproc ${os.cpus().length}, Node ${process.version}, load before ${load}, ${new Date().toISOString()}`);
    console.log(`${contacts} contacts, ${workerCount} worker processes + 1 API process, receiver in its own process\n`);

    // Service run.
    const pgCpu = backendCpu(DB_NAME);
    const pg0 = pgCpu.ticks();
    const before = new Map(procs.map(([, pid]) => [pid, cpuTicks(pid)]));
    const received0 = await receiver.count();
    let finished!: () => void;
    const probing = probeLoop(`${api.url}/console/login`, Number(args['console-gap-ms']), new Promise<void>((r) => { finished = r; }));
    const t0 = performance.now();
    const confirmMs: number[] = [];
    const batchIds: string[] = [];
    for (const segmentId of segmentIds) {
      const t = performance.now();
      batchIds.push((await admin(api.url, 'POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { segment_id: segmentId })).batch_id);
      confirmMs.push(performance.now() - t);
    }
    for (const batchId of batchIds) {
      for (;;) {
        const batch = await admin(api.url, 'GET', `/admin/batches/${batchId}`);
        if (batch.status === 'completed') break;
        if (performance.now() - t0 > contacts * 5 + 600_000) throw new Error(`not completed in time: ${JSON.stringify(batch.counts)}`);
        await sleep(250);
      }
    }
    const serviceS = (performance.now() - t0) / 1000;
    finished();
    const consoleMs = await probing;
    const pgTicks = pgCpu.ticks() - pg0;
    const cpu = cpuSince(before, procs);
    const rss = procs.map(([label, pid]) => [label, rssMb(pid, 'VmHWM')] as [string, number]);
    const received = (await receiver.count()) - received0;
    const span = (await run(url, `SELECT extract(epoch FROM max(sent_at) - min(sent_at)) AS s, count(*) FILTER (WHERE status = 'sent') AS sent, count(*) AS total FROM messages WHERE batch_id = ANY($1::uuid[])`, [batchIds])).rows[0];
    // The fan-out (the batch's `batch-process` job): from its creation (the confirm) to its end.
    const fanOut = (await run(url, `SELECT extract(epoch FROM max(completed_on) - min(created_on)) AS s FROM pgboss.job WHERE name = 'batch-process'`)).rows[0];
    const total = Number(span.total);
    const final = Number(span.sent);
    const serviceRate = total / serviceS;
    const msgUs = (s: number, n: number) => ((s * 1e6) / n).toFixed(0);

    console.log(`| service (1 API + ${workerCount} workers) | value |`);
    console.log('|---|---|');
    console.log(`| confirms (${batchIds.length} × POST /admin/campaigns/{id}/sends) answered | ${confirmMs.map((x) => x.toFixed(0)).join(', ')} ms |`);
    console.log(`| messages (sent / all final) | ${final} / ${total}; receiver got ${received} |`);
    console.log(`| confirm to last final status | ${serviceS.toFixed(1)} s |`);
    console.log(`| messages/s (confirm to last final) | ${serviceRate.toFixed(0)} |`);
    console.log(`| fan-out (batch-process job, created to completed) | ${Number(fanOut.s).toFixed(1)} s |`);
    console.log(`| first to last sent_at | ${Number(span.s).toFixed(1)} s (${(final / Number(span.s)).toFixed(0)} messages/s) |`);
    console.log(`| PostgreSQL CPU (backends of the database) | ${(pgTicks / 100).toFixed(1)} s, ${msgUs(pgTicks / 100, total)} µs a message |`);
    for (const [label, s] of cpu) console.log(`| CPU ${label} | ${s.toFixed(1)} s, ${msgUs(s, total)} µs a message |`);
    for (const [label, mb] of rss) console.log(`| peak RSS ${label} (VmHWM) | ${mb} MB |`);
    console.log(`| GET /console/login meanwhile (n ${consoleMs.ms.length}, non-2xx ${consoleMs.bad}) | p50 ${percentile(consoleMs.ms, 50).toFixed(0)} ms, p95 ${percentile(consoleMs.ms, 95).toFixed(0)} ms, max ${consoleMs.ms.at(-1)?.toFixed(0)} ms |`);

    // Bare run: the workers stop, the same messages again, delivered by bench/bare-delivery.ts.
    await Promise.all(workers.map((w) => w.stop()));
    await run(url, `CREATE TABLE bare_messages AS SELECT message_id, row_number() OVER (ORDER BY batch_id, seq)::int AS seq, rendered,
      'pending'::text AS status, NULL::timestamptz AS sent_at FROM messages WHERE batch_id IN (${batchIds.map((b) => `'${b}'::uuid`).join(',')}) AND status = 'sent'`);
    await run(url, 'ALTER TABLE bare_messages ADD PRIMARY KEY (message_id)');
    await run(url, `CREATE INDEX bare_messages_pending ON bare_messages (seq) WHERE status = 'pending'`);
    await run(url, 'VACUUM ANALYZE bare_messages');
    await sleep(2_000);
    const bareReceived0 = await receiver.count();
    const recv0 = cpuTicks(receiver.pid);
    const bpg0 = pgCpu.ticks();
    const bt0 = performance.now();
    const bare = await Promise.all(Array.from({ length: workerCount }, () => bareProcess(url, `${receiver!.url}/hook`, secret)));
    const bareWallS = (performance.now() - bt0) / 1000;
    const bpgTicks = pgCpu.ticks() - bpg0;
    pgCpu.stop();
    const bareSent = bare.reduce((s, b) => s + b.sent, 0);
    const bareS = Math.max(...bare.map((b) => b.ms)) / 1000;
    const bareRate = bareSent / bareS;
    const bareReceived = (await receiver.count()) - bareReceived0;
    console.log(`\n| bare delivery (${workerCount} processes) | value |`);
    console.log('|---|---|');
    console.log(`| messages (sent / failed) | ${bareSent} / ${bare.reduce((s, b) => s + b.failed, 0)}; receiver got ${bareReceived} |`);
    console.log(`| first claim to last mark | ${bareS.toFixed(1)} s (${bareWallS.toFixed(1)} s with process start) |`);
    console.log(`| messages/s | ${bareRate.toFixed(0)} |`);
    console.log(`| PostgreSQL CPU (backends of the database) | ${(bpgTicks / 100).toFixed(1)} s, ${msgUs(bpgTicks / 100, bareSent)} µs a message |`);
    for (const [i, b] of bare.entries()) console.log(`| bare ${i + 1}: CPU, peak RSS | ${(b.cpu_ms / 1000).toFixed(1)} s (${msgUs(b.cpu_ms / 1000, b.sent)} µs a message), ${b.max_rss_mb} MB |`);
    console.log(`| CPU receiver | ${((cpuTicks(receiver.pid) - recv0) / 100).toFixed(1)} s |`);
    failed = false;
    console.log(`\nratio service / bare: ${(serviceRate / bareRate).toFixed(2)} (confirm to last final status), ${(final / Number(span.s) / bareRate).toFixed(2)} (first to last sent_at)`);
  } finally {
    receiver?.stop();
    await h.cleanup(failed); // the processes' logs are kept when the run failed
    if (!args.keep) await run(args['db-url']!, `DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
  }
}

await main();
