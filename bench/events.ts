/**
 * Events-out benchmark (docs/events.md): event fan-out to a local
 * receiver, and message delivery throughput with and without that load.
 *
 *   node bench/events.ts [--db postgres://...|pglite] [--events 30000] [--endpoints 1]
 *                        [--rounds 3] [--batches 10] [--size 1000] [--event-load 30000] [--event-concurrency N]
 *
 * Phase 1, fan-out: the service runs without workers or event loop. One company gets `--endpoints`
 * endpoints (all on one local receiver, a child process that answers 200 at once and checks nothing)
 * and `--events` opted-out contacts are imported (the outbox triggers write one contact.opted_out event
 * per contact and one delivery per endpoint). Then the event loop starts (the same one `cms serve`
 * runs, default EVENT_CONCURRENCY) and the clock runs until no delivery is pending:
 * deliveries / elapsed = events delivered per second (claim, sign with standardwebhooks, POST, record).
 * Phase 2, interference: workers and the event loop run. `--rounds` × 2 rounds, alternating: `quiet`
 * (nothing else) and `loaded` (first an event backlog of `--event-load` events is written, which the
 * event loop delivers during the round); each round sends `--batches` campaign sends of `--size`
 * contacts through the webhook provider (another receiver child) and measures accept-to-completed
 * messages per second. Reported: each round, the medians, and the reduction of the loaded median.
 *
 * PostgreSQL runs on a fresh database `cms_bench_events` next to the one in the URL (dropped first).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { setChannel } from '../src/domain/companies.ts';
import { startEventLoop } from '../src/queue/events/loop.ts';
import { startWorkers } from '../src/queue/workers.ts';
import { startService } from '../src/service.ts';
import { startCountingReceiverProcess } from '../test/helpers/receiver.ts';

async function freshPostgres(url: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS cms_bench_events WITH (FORCE)');
  await admin.query('CREATE DATABASE cms_bench_events');
  await admin.end();
  const u = new URL(url);
  u.pathname = '/cms_bench_events';
  return u.toString();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      events: { type: 'string', default: '30000' },
      endpoints: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      batches: { type: 'string', default: '10' },
      size: { type: 'string', default: '1000' },
      'event-load': { type: 'string', default: '30000' },
      'event-concurrency': { type: 'string' },
    },
  });
  const loadBefore = os.loadavg()[0];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-events-'));
  const databaseUrl = values.db === 'pglite' ? undefined : await freshPostgres(values.db!);
  const config = loadConfig({
    DATA_DIR: dataDir, ADMIN_TOKEN: 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz', SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn', PROVIDER_ALLOWED_HOSTS: '127.0.0.1',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(values['event-concurrency'] ? { EVENT_CONCURRENCY: values['event-concurrency'] } : {}),
  });
  const logger = pino({ level: 'warn' });
  const service = await startService(config, { role: 'api', logger });
  const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const db = service.deps.database.db;
  const eventsRx = await startCountingReceiverProcess();
  const messagesRx = await startCountingReceiverProcess();

  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, { method, headers: { authorization: 'Bearer bench-admin-token-6Tf1Ys8Kw3Nq7Pz', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? undefined : res.json() as Promise<any>;
  };
  let phoneSeq = 0;
  const phoneOf = (n: number) => `+49151${String(n).padStart(8, '0')}`;
  /** Imports `n` opted-out contacts (10,000 a request): n contact.opted_out events. */
  const optOut = async (companyId: number, n: number) => {
    for (let done = 0; done < n; done += 10_000) {
      const k = Math.min(10_000, n - done);
      await admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: Array.from({ length: k }, () => ({ phone: phoneOf(phoneSeq++), opted_out: true })) });
    }
  };
  const pendingDeliveries = async () => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'pending'`.execute(db)).rows[0].n);

  // Phase 1: fan-out throughput.
  const ec = await admin('POST', '/admin/companies', { name: 'bench events', subscription_active: true });
  const endpoints = Number(values.endpoints);
  for (let e = 0; e < endpoints; e++) await admin('POST', `/admin/companies/${ec.company_id}/event-endpoints`, { url: `${eventsRx.url}/e${e}`, events: ['contact.opted_out'] });
  const nEvents = Number(values.events);
  const w0 = performance.now();
  await optOut(ec.company_id, nEvents);
  const writeMs = performance.now() - w0;
  const deliveries = await pendingDeliveries();
  const t0 = performance.now();
  const loop = startEventLoop({ database: service.deps.database, logger, clock: service.deps.clock, secrets: service.secrets, config, delivery: service.deps.delivery });
  while ((await pendingDeliveries()) > 0) await new Promise((r) => setTimeout(r, 20));
  const fanoutMs = performance.now() - t0;
  const received = await eventsRx.count();
  const phase1 = {
    events: nEvents, endpoints, deliveries, received, write_s: +(writeMs / 1000).toFixed(2),
    deliver_s: +(fanoutMs / 1000).toFixed(2), deliveries_per_s: Math.round(deliveries / (fanoutMs / 1000)),
    event_concurrency_per_endpoint: config.eventConcurrency,
  };
  console.error(JSON.stringify({ phase1 }));

  // Phase 2: message delivery with and without an event load, interleaved.
  const workers = await startWorkers({ database: service.deps.database, boss: service.deps.boss, logger, clock: service.deps.clock, secrets: service.secrets, config, delivery: service.deps.delivery });
  const batches = Number(values.batches);
  const size = Number(values.size);
  const eventLoad = Number(values['event-load']);
  const template = { body: 'Hi {{ first_name }}, your order has shipped.' };
  const rounds: { kind: 'quiet' | 'loaded'; messages_per_s: number; events_pending_at_end?: number; events_delivered_during?: number }[] = [];
  for (let r = 0; r < Number(values.rounds) * 2; r++) {
    const kind = r % 2 === 0 ? 'quiet' : 'loaded';
    const companies: { id: number; key: string; campaign: number }[] = [];
    for (let b = 0; b < batches; b++) {
      const c = await admin('POST', '/admin/companies', { name: 'bench', subscription_active: true });
      const k = await admin('POST', `/admin/companies/${c.company_id}/api-keys`, {});
      await admin('PUT', `/admin/companies/${c.company_id}/connector`, { connected: true });
      await setChannel(db, c.company_id, { provider: 'webhook', url: `${messagesRx.url}/m`, secret_sealed: service.secrets.seal('whsec_' + Buffer.from('bench-secret-0123456789').toString('base64')) });
      const campaign = await admin('POST', `/admin/companies/${c.company_id}/campaigns`, { name: 'bench', template });
      companies.push({ id: c.company_id, key: k.api_key, campaign: campaign.campaign_id });
    }
    let before = 0;
    if (kind === 'loaded') {
      await optOut(ec.company_id, eventLoad);
      before = await eventsRx.count();
    }
    const s0 = performance.now();
    await Promise.all(companies.map(async (c) => {
      const res = await fetch(url + '/api/connector/send', {
        method: 'POST', headers: { 'service-api-key': c.key, 'content-type': 'application/json' },
        body: JSON.stringify({ campaign_id: c.campaign, contacts: Array.from({ length: size }, () => ({ phone: phoneOf(phoneSeq++) })) }),
      });
      if (res.status !== 200) throw new Error(`send: ${res.status} ${await res.text()}`);
    }));
    for (;;) {
      const row = await db.selectFrom('batches').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '<>', 'completed').executeTakeFirstOrThrow();
      if (Number(row.n) === 0) break;
      await new Promise((res) => setTimeout(res, 10));
    }
    const ms = performance.now() - s0;
    const round: (typeof rounds)[number] = { kind, messages_per_s: Math.round((batches * size) / (ms / 1000)) };
    if (kind === 'loaded') {
      round.events_pending_at_end = await pendingDeliveries();
      round.events_delivered_during = (await eventsRx.count()) - before;
      while ((await pendingDeliveries()) > 0) await new Promise((res) => setTimeout(res, 50));
    }
    rounds.push(round);
    console.error(JSON.stringify(round));
  }
  const quiet = median(rounds.filter((x) => x.kind === 'quiet').map((x) => x.messages_per_s));
  const loaded = median(rounds.filter((x) => x.kind === 'loaded').map((x) => x.messages_per_s));
  const result = {
    db: service.deps.database.kind,
    phase1,
    phase2: { batches, size, event_load: eventLoad, rounds, quiet_median_per_s: quiet, loaded_median_per_s: loaded, reduction_pct: +((1 - loaded / quiet) * 100).toFixed(1) },
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadavg_1m_before: loadBefore, loadavg_1m_after: os.loadavg()[0] },
  };
  console.log(JSON.stringify(result, null, 2));
  await loop.stop();
  await workers.stop();
  await service.close();
  eventsRx.stop();
  messagesRx.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

await main();
