/**
 * HTTP benchmark of the four public operations against the real server.
 *
 *   node bench/http.ts [--db pglite|postgres] [--duration 10] [--connections 32] [--companies 400] [--contacts 1000000]
 *                      [--warmup 3] [--only trigger,segment,campaign,contacts,big] [--node-options "..."]
 *                      [--cpu-prof DIR] [--alloc-prof DIR] [--heap-snapshot DIR]
 *
 * Starts a bare Node http server (bench/bare-server.ts) and the service (`cms serve --role api`, so no
 * worker competes for the two cores) on a fresh database, seeds companies through the operator API and
 * one large company directly in SQL, and drives each operation with autocannon, spreading requests over
 * many companies so that the per-company rate limits do not refuse them. Each timed load of a fixed
 * duration follows `--warmup` seconds of the same load that are not measured. Prints a Markdown table:
 * requests/s, p50/p99 latency, non-2xx count, the ratio to the bare server, the CPU time (user + system,
 * from /proc) of the service process and of all PostgreSQL processes per request, which varies less
 * from run to run than requests/s on a shared machine, and the service's peak RSS (VmHWM).
 */
import { fork, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openPglite, openPostgres, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import {
  TEMPLATE, admin as adminCall, cpuTicks, loadStats, phoneOf, postLoad, postgresTicks, rssMb, seedTenants, serviceNodeOptions, triggerBody, usPer,
  waitForMessage, waitReady, type LoadRequest, type Tenant as SeededTenant,
} from './lib/accept-load.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    // Seconds of the same load, not measured, before each timed load (JIT, phone memo, connection pools).
    warmup: { type: 'string', default: '3' },
    companies: { type: 'string', default: '400' },
    contacts: { type: 'string', default: '1000000' },
    // Comma-separated subset of: trigger, segment, campaign, contacts, big (all by default).
    only: { type: 'string', default: 'trigger,segment,campaign,contacts,big' },
    // Writes a V8 CPU profile of the service process into this folder (node --cpu-prof).
    'cpu-prof': { type: 'string' },
    // Node options for the service process; the default is what bin/cms.js and `npm start` pass.
    'node-options': { type: 'string', default: serviceNodeOptions().join(' ') },
    // Writes a heap snapshot of the service after the loads into this folder (what stays live).
    // Writes an allocation profile (V8 sampling heap profiler, collected objects included) of the service
    // during the trigger load into this folder: where the bytes that the garbage collector handles come from.
    'alloc-prof': { type: 'string' },
    'heap-snapshot': { type: 'string' },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
const COMPANIES = Number(args.companies);
const BIG_CONTACTS = Number(args.contacts);
const ROOT = path.join(import.meta.dirname, '..');
const ADMIN_TOKEN = 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz';
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/cms_bench_http';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Creates a fresh database and seeds one company with `n` contacts directly in SQL. */
async function prepareDatabase(): Promise<{ env: Record<string, string>; bigCompanyId: number; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-'));
  let database: Database;
  const env: Record<string, string> = { DATA_DIR: dataDir };
  if (args.db === 'postgres') {
    const adminDb = await openPostgres(PG_ADMIN_URL, 1);
    const name = new URL(PG_URL).pathname.slice(1);
    await sql.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).execute(adminDb.db);
    await sql.raw(`CREATE DATABASE ${name}`).execute(adminDb.db);
    await adminDb.close();
    database = await openPostgres(PG_URL, 2);
    env.DATABASE_URL = PG_URL;
  } else {
    database = await openPglite(dataDir);
  }
  await migrate(database);
  const { rows } = await sql<{ company_id: number }>`
    INSERT INTO companies (name, subscription_active, connector_connected) VALUES ('big', true, true) RETURNING company_id`.execute(database.db);
  const bigCompanyId = rows[0].company_id;
  const started = Date.now();
  for (let from = 0; from < BIG_CONTACTS; from += 200_000) {
    const to = Math.min(BIG_CONTACTS, from + 200_000) - 1;
    await sql`
      INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare)
      SELECT ${bigCompanyId}, p, sha256(convert_to(p, 'UTF8')), sha256(convert_to(substr(p, 2), 'UTF8'))
      FROM (SELECT '+49151' || lpad(g::text, 8, '0') AS p FROM generate_series(${from}::int, ${to}::int) g) s`.execute(database.db);
  }
  await sql`ANALYZE contacts`.execute(database.db);
  console.error(`seeded ${BIG_CONTACTS} contacts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await database.close();
  return { env, bigCompanyId, dataDir };
}

const admin = (base: string, method: string, p: string, body?: unknown) => adminCall({ base, token: ADMIN_TOKEN }, method, p, body);

interface Tenant extends SeededTenant { campaignId: number; segmentId: number }

/** The seeded companies (bench/lib/accept-load.ts), each with a campaign and a segment besides. */
function seedHttpTenants(base: string): Promise<Tenant[]> {
  return seedTenants({ base, token: ADMIN_TOKEN }, COMPANIES, async (t) => {
    const camp = await admin(base, 'POST', `/admin/companies/${t.companyId}/campaigns`, { name: 'c', template: TEMPLATE });
    const seg = await fetch(base + '/api/segments/create', { method: 'POST', headers: { 'service-api-key': t.key, 'content-type': 'application/json' }, body: '{"name":"bench"}' });
    return { ...t, campaignId: camp.campaign_id, segmentId: (await seg.json()).segment_id };
  });
}

interface Row { name: string; rps: number; p50: number; p99: number; non2xx: number; requests: number; serviceCpuUs: number; pgCpuUs: number }

/** Total CPU ticks of the service and of PostgreSQL, to express a load's cost per request (robust to a noisy machine). */
function cpuSample(servicePid: number | undefined): { service: number; pg: number } {
  // A plain sum over the PostgreSQL processes of each sample (none when the database is PGlite, inside the service).
  return { service: servicePid ? cpuTicks(servicePid) : 0, pg: args.db === 'postgres' ? [...postgresTicks().values()].reduce((sum, t) => sum + t, 0) : 0 };
}
let servicePidForCpu: number | undefined;

async function load(name: string, url: string, bodies: () => LoadRequest, opts: { duration?: number; amount?: number; connections?: number } = {}): Promise<Row> {
  const run = (timing: { duration: number } | { amount: number }) => postLoad(url, opts.connections ?? CONNECTIONS, timing, bodies);
  if (!opts.amount && WARMUP > 0) await run({ duration: WARMUP });
  const before = cpuSample(servicePidForCpu);
  const result = await run(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? DURATION });
  const after = cpuSample(servicePidForCpu);
  const stats = loadStats(result);
  return { serviceCpuUs: usPer(after.service - before.service, stats.requests), pgCpuUs: usPer(after.pg - before.pg, stats.requests), name, ...stats };
}

/**
 * A Chrome DevTools Protocol session with the service's inspector (`--inspect=127.0.0.1:9339`), over
 * Node's built-in WebSocket. `send` resolves with the command's result.
 */
async function inspectorSession(): Promise<{ send: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const [target] = await (await fetch('http://127.0.0.1:9339/json/list')).json() as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let id = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  };
  return {
    send: (method, params = {}) => new Promise((resolve) => { waiting.set(++id, resolve); ws.send(JSON.stringify({ id, method, params })); }),
    close: () => ws.close(),
  };
}

async function main(): Promise<void> {
  const { env, bigCompanyId, dataDir } = await prepareDatabase();
  const barePort = 8190;
  const bare = fork(path.join(import.meta.dirname, 'bare-server.ts'), [String(barePort)], { stdio: 'inherit' });
  await waitForMessage(bare);
  const port = 8191;
  // Node options go on the command line (not NODE_OPTIONS, which refuses V8 flags such as --trace-gc).
  const nodeArgs = [args['node-options'],
    args['heap-snapshot'] ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${path.resolve(args['heap-snapshot'])}` : '',
    args['cpu-prof'] ? `--cpu-prof --cpu-prof-dir=${path.resolve(args['cpu-prof'])}` : '',
    args['alloc-prof'] ? '--inspect=127.0.0.1:9339' : ''].join(' ').split(/\s+/).filter(Boolean);
  const service = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin/cms.js'), 'serve', '--role', 'api'], {
    env: { ...process.env, ...env, PORT: String(port), ADMIN_TOKEN, SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base);
    const tenants = await seedHttpTenants(base);
    const big = await admin(base, 'POST', `/admin/companies/${bigCompanyId}/api-keys`, {});
    let n = 0;
    const next = () => tenants[n++ % tenants.length];
    const rows: Row[] = [];
    servicePidForCpu = bare.pid; // the bare server's row: its own CPU per request

    // The seed goes in below 1,000 (phones and order ids), as this benchmark always sent it.
    const trigger = (t: Tenant) => triggerBody(t.automationId, n % 1000);
    rows.push(await load('bare node:http, same route and body', `http://127.0.0.1:${barePort}`, () => {
      const t = next();
      return { path: '/api/automations/send', headers: { 'service-api-key': t.key }, body: trigger(t) };
    }));
    servicePidForCpu = service.pid;
    const only = new Set(args.only.split(','));
    const inspector = args['alloc-prof'] ? await inspectorSession() : undefined;
    await inspector?.send('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    if (only.has('trigger')) rows.push(await load('4.3 trigger automation (50 contacts)', base, () => {
      const t = next();
      return { path: '/api/automations/send', headers: { 'service-api-key': t.key }, body: trigger(t) };
    }));
    if (inspector) {
      const { profile } = await inspector.send('HeapProfiler.stopSampling');
      fs.mkdirSync(args['alloc-prof']!, { recursive: true });
      fs.writeFileSync(path.join(args['alloc-prof']!, 'trigger.heapprofile'), JSON.stringify(profile));
      inspector.close();
    }
    // 4.1: 10 per second and 20 segments per company: a short run over all companies.
    if (only.has('segment')) rows.push(await load('4.1 create segment', base, () => {
      const t = next();
      return { path: '/api/segments/create', headers: { 'service-api-key': t.key }, body: '{"name":"load"}' };
    }, { amount: Math.min(tenants.length * 15, 6000) }));
    // 4.4: 1 per 10 seconds per company: one request per company.
    if (only.has('campaign')) rows.push(await load('4.4 send campaign (10 contacts)', base, () => {
      const t = next();
      const contacts = JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ phone: phoneOf(n * 10 + i) })));
      return { path: '/api/connector/send', headers: { 'service-api-key': t.key }, body: `{"campaign_id":${t.campaignId},"contacts":${contacts}}` };
    }, { amount: tenants.length }));
    // 4.2: 1 per minute per company: one request per company, 1,000 digests each (most of them found in
    // the large company's numbering range, none in the small companies: the lookup cost is the same).
    const digestBody = (seed: number) => JSON.stringify({
      contacts: Array.from({ length: 1000 }, (_, i) => sha(phoneOf((seed * 1000 + i * 997) % BIG_CONTACTS))),
      mode: 'add', use_hashed_phone: true,
    });
    if (only.has('contacts')) rows.push(await load('4.2 segment contacts (1,000 digests), many companies', base, () => {
      const t = next();
      return { path: `/api/segments/${t.segmentId}/contacts`, headers: { 'service-api-key': t.key }, body: digestBody(n) };
    }, { amount: tenants.length }));
    // 4.2 against the company of BIG_CONTACTS contacts, one request at a time (its window is reset between).
    const latencies: number[] = [];
    if (only.has('big')) {
      const bigSeg = await (await fetch(base + '/api/segments/create', { method: 'POST', headers: { 'service-api-key': big.api_key, 'content-type': 'application/json' }, body: '{"name":"big"}' })).json();
      for (let i = 0; i < 100; i++) {
        await admin(base, 'DELETE', `/admin/companies/${bigCompanyId}/rate-limits`);
        const t0 = performance.now();
        const res = await fetch(`${base}/api/segments/${bigSeg.segment_id}/contacts`, {
          method: 'POST', headers: { 'service-api-key': big.api_key, 'content-type': 'application/json' },
          body: digestBody(i).replace('"add"', i % 2 ? '"delete"' : '"add"'),
        });
        await res.text();
        if (res.status !== 200) throw new Error(`4.2 big company: ${res.status}`);
        latencies.push(performance.now() - t0);
      }
      latencies.sort((a, b) => a - b);
    }
    const rss = rssMb(service.pid!, 'VmHWM');
    if (args['heap-snapshot']) {
      fs.mkdirSync(args['heap-snapshot'], { recursive: true });
      service.kill('SIGUSR2');
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !fs.readdirSync(args['heap-snapshot']).some((f) => f.endsWith('.heapsnapshot'))) await new Promise((r) => setTimeout(r, 500));
      await new Promise((r) => setTimeout(r, 5_000)); // the file is written in pieces
    }
    // The V8 heap right after the loads (prom-client's default metrics): live data vs. what RSS holds.
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const gauge = (name: string) => Math.round(Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN) / 1048576);

    console.log(`\n### ${args.db === 'postgres' ? 'PostgreSQL 15' : 'PGlite (embedded)'} — ${CONNECTIONS} connections, ${DURATION} s runs, ${tenants.length} companies\n`);
    console.log('| load | requests | requests/s | p50 ms | p99 ms | non-2xx | ratio to bare | service CPU µs/request | PostgreSQL CPU µs/request |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const cpu = r === rows[0] ? `| ${r.serviceCpuUs} (bare server) | - |` : `| ${r.serviceCpuUs} | ${args.db === 'postgres' ? r.pgCpuUs : '(in the service)'} |`;
      console.log(`| ${r.name} | ${r.requests} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${(r.rps / rows[0].rps).toFixed(2)} ${cpu}`);
    }
    if (latencies.length) console.log(`\n4.2 with 1,000 digests against one company of ${BIG_CONTACTS.toLocaleString('en')} contacts, sequential: p50 ${latencies[50].toFixed(1)} ms, p99 ${latencies[98].toFixed(1)} ms`);
    console.log(`Peak RSS of the service process: ${rss} MB (after the loads: RSS ${gauge('process_resident_memory_bytes')} MB, V8 heap used ${gauge('nodejs_heap_size_used_bytes')} of ${gauge('nodejs_heap_size_total_bytes')} MB, external ${gauge('nodejs_external_memory_bytes')} MB)`);
  } finally {
    service.kill('SIGTERM');
    bare.kill();
    await new Promise((r) => service.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
