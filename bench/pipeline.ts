/**
 * Send-pipeline benchmark: throughput from accepted to final, and accept-to-
 * delivery latency, for the outbox and webhook providers on PGlite or PostgreSQL.
 *
 *   node bench/pipeline.ts [--db pglite|postgres://...] [--provider outbox|webhook]
 *                          [--batches 30] [--size 1000] [--latency-batches 100] [--latency-size 50]
 *                          [--latency-interval-ms 100] [--profile drain.cpuprofile] [--named]
 *                          [--bench-db cms_bench]
 *
 * Phase 1, throughput: the service runs without workers while `--batches` campaign sends (4.4) of
 * `--size` distinct contacts each are accepted over HTTP (one company per batch: 4.4 allows one send
 * per 10 s). The contacts are new (4.4 knows only their phone), so every message of a batch renders
 * the same text and the template renders once per batch (render.ts memo); with `--named` they are
 * imported first with distinct names and variables, so every message renders on its own.
 * Then the workers start, and the clock runs until every batch is `completed`:
 * messages / elapsed = messages per second from accepted to final (fan-out, rendering, contact
 * writes, provider hand-off, result commits, batch completion).
 * Phase 2, latency: with the workers running, `--latency-batches` automation sends (4.3) of
 * `--latency-size` contacts are accepted over HTTP, one every `--latency-interval-ms`; per message,
 * latency = sent_at (after the provider answered) - the moment its accept request was sent (an upper
 * bound of accept-to-delivery: it includes the accept round trip, reported too). p50 / p99.
 *
 * The webhook receiver is a child process (node:http on 127.0.0.1, answers 200 at once). PostgreSQL
 * runs on a fresh database `--bench-db` (default `cms_bench`) created next to the one in the URL
 * (dropped first; give each concurrent run its own name).
 *
 * CPU per message of phase 1 (`cpu_us_per_message`), for the accept and for the drain: this process
 * (process.cpuUsage: HTTP, fan-out, rendering, providers) and, on PostgreSQL, the server processes
 * connected to the bench database (/proc, sampled every 250 ms so that a backend that ends loses at
 * most one sample). CPU time rather than elapsed time, so that a machine shared with other work
 * changes it less; the receiver child and PostgreSQL's shared processes (WAL writer, checkpointer)
 * are not counted.
 */
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { setChannel } from '../src/domain/companies.ts';
import { startService } from '../src/service.ts';
import { startWorkers } from '../src/queue/workers.ts';
import { type CountingReceiver, startCountingReceiverProcess } from '../test/helpers/receiver.ts';
import { backendCpu } from './lib/accept-load.ts';
import { freshDatabase } from './lib/serve.ts';


function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'pglite' },
      provider: { type: 'string', default: 'outbox' },
      batches: { type: 'string', default: '30' },
      size: { type: 'string', default: '1000' },
      'latency-batches': { type: 'string', default: '100' },
      'latency-size': { type: 'string', default: '50' },
      'latency-interval-ms': { type: 'string', default: '100' },
      profile: { type: 'string' },
      named: { type: 'boolean', default: false },
      'bench-db': { type: 'string', default: 'cms_bench' },
    },
  });
  const loadBefore = os.loadavg()[0];
  const batches = Number(values.batches);
  const size = Number(values.size);
  const provider = values.provider as 'outbox' | 'webhook';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-'));
  const databaseUrl = values.db === 'pglite' ? undefined : await freshDatabase(values.db!, values['bench-db']!);
  const config = loadConfig({
    DATA_DIR: dataDir, ADMIN_TOKEN: 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz', SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn', PROVIDER_ALLOWED_HOSTS: '127.0.0.1',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const logger = pino({ level: 'warn' });
  const service = await startService(config, { role: 'api', logger });
  const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const db = service.deps.database.db;

  let receiver: CountingReceiver | undefined;
  let receiverUrl = '';
  if (provider === 'webhook') {
    receiver = await startCountingReceiverProcess();
    receiverUrl = `${receiver.url}/hook`;
  }

  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, { method, headers: { authorization: 'Bearer bench-admin-token-6Tf1Ys8Kw3Nq7Pz', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const company = async () => {
    const c = await admin('POST', '/admin/companies', { name: 'bench', subscription_active: true });
    const k = await admin('POST', `/admin/companies/${c.company_id}/api-keys`, {});
    await admin('PUT', `/admin/companies/${c.company_id}/connector`, { connected: true });
    if (provider === 'webhook') {
      await setChannel(db, c.company_id, { provider: 'webhook', url: receiverUrl, secret_sealed: service.secrets.seal('whsec_' + Buffer.from('bench-secret-0123456789').toString('base64')) });
    }
    return { id: c.company_id as number, key: k.api_key as string };
  };
  const send = async (key: string, p: string, body: unknown) => {
    const res = await fetch(url + p, { method: 'POST', headers: { 'service-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json: any = await res.json();
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const template = {
    header: { type: 'image', url: 'https://cdn.example/default.png' },
    body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.',
    buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }],
  };
  const phoneOf = (n: number) => `+49151${String(n).padStart(8, '0')}`;

  // Phase 1: accept everything, then let the workers drain it.
  const pgCpu = databaseUrl ? backendCpu(values['bench-db']!) : undefined;
  const cpu0 = process.cpuUsage();
  const pg0 = pgCpu?.ticks() ?? 0;
  const acceptStart = performance.now();
  for (let b = 0; b < batches; b++) {
    const c = await company();
    if (values.named) {
      await admin('PUT', `/admin/companies/${c.id}/contacts`, {
        contacts: Array.from({ length: size }, (_, i) => ({ phone: phoneOf(b * size + i), first_name: `Name${b * size + i}`, variables: { order_id: `O-${b * size + i}` } })),
      });
    }
    const campaign = await admin('POST', `/admin/companies/${c.id}/campaigns`, { name: 'bench', template });
    await send(c.key, '/api/connector/send', { campaign_id: campaign.campaign_id, contacts: Array.from({ length: size }, (_, i) => ({ phone: phoneOf(b * size + i) })) });
  }
  const acceptMs = performance.now() - acceptStart;
  const cpu1 = process.cpuUsage();
  const pg1 = pgCpu?.ticks() ?? 0;
  const total = batches * size;
  // --profile: a CPU profile of this process during the drain only (open it in Chrome DevTools).
  const session = values.profile ? new inspector.Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const t0 = performance.now();
  const workers = await startWorkers({ database: service.deps.database, boss: service.deps.boss, logger, clock: service.deps.clock, secrets: service.secrets, config, delivery: service.deps.delivery });
  for (;;) {
    const row = await db.selectFrom('batches').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '<>', 'completed').executeTakeFirstOrThrow();
    if (Number(row.n) === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const drainMs = performance.now() - t0;
  const cpu2 = process.cpuUsage();
  const pg2 = pgCpu?.ticks() ?? 0;
  pgCpu?.stop();
  const nodeUs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => b.user + b.system - a.user - a.system;
  const perMessage = (us: number) => +(us / total).toFixed(1);
  const cpuPerMessage = {
    accept: { node: perMessage(nodeUs(cpu0, cpu1)), ...(pgCpu ? { postgres: perMessage((pg1 - pg0) * 10_000) } : {}) },
    drain: { node: perMessage(nodeUs(cpu1, cpu2)), ...(pgCpu ? { postgres: perMessage((pg2 - pg1) * 10_000) } : {}) },
  };
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(values.profile!, JSON.stringify(profile));
    session.disconnect();
  }
  const counts = await db.selectFrom('messages').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();

  // Phase 2: paced automation sends with the workers running.
  const lc = await company();
  const automation = await admin('POST', `/admin/companies/${lc.id}/automations`, { name: 'bench', type: 'api', active: true, template });
  const accepted = new Map<string, number>(); // batch id → when its accept request was sent
  const acceptRtt: number[] = [];
  const latencyBatches = Number(values['latency-batches']);
  const latencySize = Number(values['latency-size']);
  const interval = Number(values['latency-interval-ms']);
  const pending: Promise<void>[] = [];
  const phaseStart = Date.now();
  for (let b = 0; b < latencyBatches; b++) {
    const due = phaseStart + b * interval;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    const contacts = Array.from({ length: latencySize }, (_, i) => ({ phone: phoneOf(10_000_000 + b * latencySize + i), first_name: `F${i}`, variables: { order_id: `A-${b}-${i}` } }));
    const sentAt = Date.now();
    pending.push(send(lc.key, '/api/automations/send', { automation_id: automation.automation_id, contacts }).then((r) => {
      accepted.set(r.batch_id, sentAt);
      acceptRtt.push(Date.now() - sentAt);
    }));
  }
  await Promise.all(pending);
  for (;;) {
    const row = await db.selectFrom('batches').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '<>', 'completed').executeTakeFirstOrThrow();
    if (Number(row.n) === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const sent = await db.selectFrom('messages').select(['batch_id', 'sent_at']).where('batch_id', 'in', [...accepted.keys()]).where('status', '=', 'sent').execute();
  const latencies = sent.map((m) => new Date(m.sent_at!).getTime() - accepted.get(m.batch_id)!).sort((a, b) => a - b);

  let receiverCount: number | undefined;
  if (receiver) receiverCount = await receiver.count();
  const result = {
    db: service.deps.database.kind,
    provider,
    phase1: { batches, size, named: values.named, messages: total, accept_s: +(acceptMs / 1000).toFixed(2), drain_s: +(drainMs / 1000).toFixed(2), messages_per_s: Math.round(total / (drainMs / 1000)), cpu_us_per_message: cpuPerMessage, statuses: Object.fromEntries(counts.map((c) => [c.status, Number(c.n)])) },
    phase2: {
      batches: latencyBatches, size: latencySize, offered_per_s: Math.round((latencySize * 1000) / interval), messages: latencies.length,
      p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), max_ms: latencies.at(-1),
      accept_rtt_p50_ms: percentile(acceptRtt.sort((a, b) => a - b), 50),
    },
    ...(receiverCount !== undefined ? { receiver_requests: receiverCount } : {}),
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadavg_1m_before: loadBefore, loadavg_1m_after: os.loadavg()[0] },
  };
  console.log(JSON.stringify(result, null, 2));

  await workers.stop();
  await service.close();
  receiver?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

await main();
