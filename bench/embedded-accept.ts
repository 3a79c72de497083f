/**
 * The accept path on the embedded default (`npm start`: API and
 * workers in ONE process, PGlite inside it), trigger plus outbox delivery end to end, against a bare
 * durable embedded accept server and a bare no-op server, measured in ONE run.
 *
 *   node bench/embedded-accept.ts [--rounds 3] [--duration 10] [--warmup 3] [--connections 32]
 *                                 [--companies 400] [--no-api-only] [--cpu-prof DIR]
 *
 * Starts, each on its own fresh PGlite directory in one temporary directory:
 * (a) the service as `npm start` does (`node --max-semi-space-size=16 bin/cms.js serve` when this was
 *     written; the Node options are read from package.json's `start` script), role all;
 * (b) the bare durable embedded accept server (bench/bare-embedded-server.ts: node:http, JSON.parse, a
 *     shape check, group commit of the batch rows and one job row each into its own PGlite; it
 *     delivers nothing);
 * (c) the bare no-op server (bench/bare-server.ts);
 * (d) unless `--no-api-only`: the same service with `--role api` (no workers, nothing delivered), which
 *     prices an accept alone so that the one process's CPU can be split between accepting and
 *     delivering.
 * Seeds `--companies` companies through the operator API of each service, each with an API key, a
 * connected connector and an active `api` automation (the channel stays the default, outbox), so 4.3's
 * 20 requests/s per company does not bind. Then, in interleaved rounds (a, b, c, d, a, b, c, d, ...),
 * drives each server with wrk in a process of its own (bench/lib/wrk.ts; one thread, its CPU per request
 * reported): 4.3 trigger automation, 50 contacts per request, `--connections`
 * at once, `--warmup` s unmeasured, then `--duration` s measured.
 *
 * For (a) the round goes on after the load until every accepted message is final: the script polls
 * `/metrics` (cms_messages_final_total against 50 × cms_batches_accepted_total; every request carries
 * 50 distinct phones) every POLL_MS. The warm-up's messages still pending when the measured load starts
 * (the backlog) belong to the round: "delivered" counts every message that became final from the start
 * of the measured load until the last one was final, and end-to-end messages/s is that count ÷ that
 * time. "Accepted" is 50 × the batches the service counted from the start to the end of the load
 * (a request in flight at either edge counts where it committed). The drain time runs from the end of
 * the load to the poll that saw the last message final.
 * Server CPU comes from /proc (PGlite runs inside the process, so it includes the database): per
 * request during the load and, for (a), per message over the whole window. Peak RSS is VmHWM (since
 * the process started, seeding included; PGlite's start on a fresh directory alone reaches about
 * 1.1 GB), RSS after is VmRSS when the round ended; the 1-minute load average is taken at the start of each
 * measured load. Then the ratios per round and their median: service/bare durable embedded,
 * service/no-op (requests/s). `--cpu-prof DIR` writes a V8 CPU profile of (a) for the whole run.
 *
 * Exits 0 after a complete run (1 after an error); stops its servers and removes its temporary
 * directory on success, on an error and on SIGINT/SIGTERM.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  cpuTicks, median, rssMb, seedTenants, serviceNodeOptions, triggerRequests, usPer, waitForMessage, waitReady,
  type LoadRequest, type Tenant,
} from './lib/accept-load.ts';
import { wrkLoad } from './lib/wrk.ts';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    companies: { type: 'string', default: '400' },
    'api-only': { type: 'boolean', default: true },
    'cpu-prof': { type: 'string' },
  },
  allowNegative: true,
});
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const COMPANIES = Number(args.companies);
const API_ONLY = args['api-only'];
const CONTACTS = 50;
const POLL_MS = 250;
const DRAIN_LIMIT_MS = 300_000;
const ROOT = path.join(import.meta.dirname, '..');
const ADMIN_TOKEN = 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz-embedded';
const SECRETS_KEY = 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb-embedded';

/** A TCP port that was free a moment ago (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** What the drain watches in the service's /metrics: messages final, batches accepted, jobs not done. */
interface Progress { final: number; batches: number; jobs: number }

async function progress(base: string): Promise<Progress> {
  const text = await (await fetch(base + '/metrics')).text();
  const sum = (re: RegExp) => { let n = 0; for (const m of text.matchAll(re)) n += Number(m[1]); return n; };
  return {
    final: sum(/^cms_messages_final_total\{[^}]*\} (\S+)$/gm),
    batches: sum(/^cms_batches_accepted_total\{[^}]*\} (\S+)$/gm),
    jobs: sum(/^cms_queue_jobs\{queue="(?:batch-process|messages-deliver)"[^}]*\} (\S+)$/gm),
  };
}

/**
 * Polls until every accepted message is final (or, should the counters disagree, until no
 * batch-process / messages-deliver job is left and the final count has stood still for three polls).
 * Resolves to the last progress and the time (performance.now()) of the poll that saw it; `drained`
 * false after DRAIN_LIMIT_MS.
 */
async function waitDrained(base: string): Promise<{ p: Progress; at: number; drained: boolean; exact: boolean }> {
  const limit = performance.now() + DRAIN_LIMIT_MS;
  let still = 0, last = -1;
  for (;;) {
    const p = await progress(base);
    const at = performance.now();
    if (p.final >= p.batches * CONTACTS) return { p, at, drained: true, exact: true };
    still = p.jobs === 0 && p.final === last ? still + 1 : 0;
    last = p.final;
    if (still >= 3) return { p, at, drained: true, exact: false };
    if (at > limit) return { p, at, drained: false, exact: false };
    await sleep(POLL_MS);
  }
}

interface Row {
  round: number; name: string; requests: number; rps: number; p50: number; p99: number; non2xx: number;
  cpuUs: number; wrkCpuUs: number; rssMb: number; rssNowMb: number; load: number;
  /** The service with its workers only: the round until every accepted message was final. */
  e2e?: { accepted: number; backlog: number; duringLoad: number; delivered: number; drainS: number; windowS: number; rate: number; cpuPerMsg: number; drained: boolean; exact: boolean };
}

const children: ChildProcess[] = [];
let tmpRoot: string | undefined;
let cleaning: Promise<void> | undefined;

/** Stops the servers (SIGTERM, SIGKILL after 10 s) and removes the temporary directory; once. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all(children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }));
    if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and removing ${tmpRoot ?? 'nothing'}`);
    void cleanup().finally(() => process.exit(130));
  });
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Starts `bin/cms.js serve` (plus `extra` arguments) as `npm start` does, on a fresh PGlite directory `dir`; resolves when ready. */
async function startService(dir: string, extra: string[], nodeArgs: string[]): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...serviceNodeOptions(), ...nodeArgs, path.join(ROOT, 'bin/cms.js'), 'serve', ...extra], {
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dir, PORT: String(port), ADMIN_TOKEN, SECRETS_KEY, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  child.once('exit', (code, signal) => { if (!cleaning) console.error(`cms serve ${extra.join(' ')} exited early: code ${code}, signal ${signal}`); });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, child);
  return { base, child };
}

interface Server { name: string; short: string; url: string; pid: number; tenants: Tenant[]; e2e: boolean }

async function main(): Promise<void> {
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-embedded-accept-'));
  const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof'])}`] : [];
  const all = await startService(path.join(tmpRoot, 'service'), [], profile);
  const apiOnly = API_ONLY ? await startService(path.join(tmpRoot, 'service-api'), ['--role', 'api'], []) : undefined;
  const [durablePort, noopPort] = [await freePort(), await freePort()];
  const durable = fork(path.join(import.meta.dirname, 'bare-embedded-server.ts'), [String(durablePort), path.join(tmpRoot, 'bare')], { stdio: 'inherit', execArgv: ['--max-semi-space-size=16'] });
  children.push(durable);
  const noop = fork(path.join(import.meta.dirname, 'bare-server.ts'), [String(noopPort)], { stdio: 'inherit' });
  children.push(noop);
  await Promise.all([waitForMessage(durable), waitForMessage(noop)]);
  const seedStart = performance.now();
  const tenants = await seedTenants({ base: all.base, token: ADMIN_TOKEN }, COMPANIES);
  const apiTenants = apiOnly ? await seedTenants({ base: apiOnly.base, token: ADMIN_TOKEN }, COMPANIES) : [];
  console.error(`seeded ${tenants.length} companies per service in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

  const requestsOf = new Map<readonly Tenant[], LoadRequest[]>();
  const servers: Server[] = [
    { name: 'service (npm start: cms serve, role all)', short: 'service', url: all.base, pid: all.child.pid!, tenants, e2e: true },
    { name: 'bare durable embedded accept (no delivery)', short: 'bare durable', url: `http://127.0.0.1:${durablePort}`, pid: durable.pid!, tenants, e2e: false },
    { name: 'bare no-op', short: 'no-op', url: `http://127.0.0.1:${noopPort}`, pid: noop.pid!, tenants, e2e: false },
  ];
  if (apiOnly) servers.push({ name: 'service, API only (cms serve --role api; no delivery)', short: 'API only', url: apiOnly.base, pid: apiOnly.child.pid!, tenants: apiTenants, e2e: false });
  const run = (s: Server, duration: number) => {
    if (!requestsOf.has(s.tenants)) requestsOf.set(s.tenants, triggerRequests(s.tenants, CONTACTS));
    return wrkLoad(s.url, CONNECTIONS, duration, requestsOf.get(s.tenants)!);
  };

  const rows: Row[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of servers) {
      if (WARMUP > 0) await run(s, WARMUP);
      const load = os.loadavg()[0];
      const p0 = s.e2e ? await progress(s.url) : undefined;
      const cpu0 = cpuTicks(s.pid);
      const t0 = performance.now();
      const r = await run(s, DURATION);
      const t1 = performance.now();
      const cpu1 = cpuTicks(s.pid);
      const { requests, rps, p50, p99, non2xx, generatorTicks } = r;
      const row: Row = { round, name: s.name, requests, rps, p50, p99, non2xx, cpuUs: usPer(cpu1 - cpu0, requests), wrkCpuUs: usPer(generatorTicks, requests), rssMb: 0, rssNowMb: 0, load };
      if (p0) {
        const p1 = await progress(s.url);
        const d = await waitDrained(s.url);
        const cpu2 = cpuTicks(s.pid);
        const delivered = d.p.final - p0.final;
        const windowS = (d.at - t0) / 1000;
        row.e2e = {
          accepted: (p1.batches - p0.batches) * CONTACTS, backlog: p0.batches * CONTACTS - p0.final, duringLoad: p1.final - p0.final, delivered,
          drainS: (d.at - t1) / 1000, windowS, rate: Math.round(delivered / windowS),
          cpuPerMsg: usPer(cpu2 - cpu0, delivered), drained: d.drained, exact: d.exact,
        };
      }
      row.rssMb = rssMb(s.pid, 'VmHWM');
      row.rssNowMb = rssMb(s.pid, 'VmRSS');
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  }
  const at = (round: number, s: Server) => rows.find((r) => r.round === round && r.name === s.name)!;

  const dash = '-';
  console.log(`\n### ${ROUNDS} interleaved rounds, embedded: 4.3 trigger automation, ${CONTACTS} contacts, ${CONNECTIONS} connections, ${DURATION} s loads (+${WARMUP} s warm-up), ${tenants.length} companies\n`);
  console.log('| round | server | requests | requests/s | p50 ms | p99 ms | non-2xx | messages accepted | messages delivered (backlog at start) | drain s | end-to-end messages/s | server CPU µs/request | server CPU µs/message | wrk CPU µs/request | peak RSS MB | RSS after MB | load (1 min) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const e = r.e2e;
    const flag = e && !e.drained ? ' (NOT drained)' : e && !e.exact ? ' (counters disagree)' : '';
    console.log(`| ${r.round} | ${r.name} | ${fmt(r.requests)} | ${fmt(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${e ? fmt(e.accepted) : dash} | ${e ? `${fmt(e.delivered)} (${fmt(e.backlog)})${flag}` : dash} | ${e ? e.drainS.toFixed(1) : dash} | ${e ? fmt(e.rate) : dash} | ${fmt(r.cpuUs)} | ${e ? fmt(e.cpuPerMsg) : (r.cpuUs / CONTACTS).toFixed(1) + ' (accept only)'} | ${fmt(r.wrkCpuUs)} | ${r.rssMb} | ${r.rssNowMb} | ${r.load.toFixed(2)} |`);
  }
  if (apiOnly) {
    // The API-only service prices an accept in the same code on the same kind of database; what the
    // one process spent beyond that during its load went to delivery.
    console.log('\nWhere the one process\'s CPU went during the load (accept priced by the API-only service of the same round):\n');
    console.log('| round | service CPU during the load, s | accepts × API-only CPU/request, s | rest (delivery), s | delivery share | delivery CPU µs/message delivered during the load |');
    console.log('|---|---|---|---|---|---|');
    for (let round = 1; round <= ROUNDS; round++) {
      const sa = at(round, servers[0]), sd = at(round, servers[3]);
      const total = (sa.cpuUs * sa.requests) / 1e6, accept = (sd.cpuUs * sa.requests) / 1e6, rest = Math.max(0, total - accept);
      // A refused request (429) is cheap: then the API-only service prices no accept.
      if (sd.non2xx > 0) { console.log(`| ${round} | ${total.toFixed(1)} | n/a (API only answered non-2xx) | n/a | n/a | n/a |`); continue; }
      console.log(`| ${round} | ${total.toFixed(1)} | ${accept.toFixed(1)} | ${rest.toFixed(1)} | ${((rest / total) * 100).toFixed(0)}% | ${fmt(Math.round((rest * 1e6) / Math.max(1, sa.e2e!.duringLoad)))} |`);
    }
  }
  console.log(`\n| round | service/bare durable embedded | service/no-op | bare durable embedded/no-op |${apiOnly ? ' API only/bare durable embedded |' : ''}`);
  console.log(`|---|---|---|---|${apiOnly ? '---|' : ''}`);
  const ratios: number[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const [a, b, c, d] = servers.map((s) => at(round, s).rps);
    ratios.push([a / b, a / c, b / c, ...(apiOnly ? [d / b] : [])]);
    const refused = rows.some((r) => r.round === round && r.non2xx > 0) ? ' (non-2xx answers: not comparable)' : '';
    console.log(`| ${round}${refused} | ${ratios.at(-1)!.map((x) => x.toFixed(2)).join(' | ')} |`);
  }
  console.log(`| median | ${ratios[0].map((_, i) => median(ratios.map((r) => r[i])).toFixed(2)).join(' | ')} |`);
  console.log(`\nnproc ${os.cpus().length}, ${os.cpus()[0]?.model}, Node ${process.version}, ${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
