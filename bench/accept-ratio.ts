/**
 * The accept path against the bare durable accept limit, measured in ONE run.
 *
 *   node bench/accept-ratio.ts [--db-url postgres://postgres@127.0.0.1:5432/cms_bench_accept] [--rounds 3]
 *                              [--duration 10] [--warmup 3] [--connections 32] [--companies 400] [--cpu-prof DIR]
 *                              [--service-flags="--trace-gc --inspect=127.0.0.1:9229"]
 *
 * Recreates the database, then starts (a) the service as `cms serve --role api` (with the options
 * `npm start` and `bin/cms.js` use, read from package.json), (b) the bare durable accept server
 * (bench/bare-accept-server.ts: node:http, JSON.parse, a shape check, group commit of the batch row and
 * its pg-boss job row) and (c) the bare no-op server (bench/bare-server.ts: reads the body, answers).
 * Seeds `--companies` companies through the operator API (4.3 allows 20 requests/s per company, so the
 * load is spread over them), then drives each server with wrk in a process of its own (bench/lib/wrk.ts:
 * one thread; its own CPU per request is reported beside the servers'): 4.3 trigger automation, 50
 * contacts per request, `--connections` at once, in interleaved rounds (a, b, c, a, b, c, ...), each
 * timed load after `--warmup` unmeasured seconds of the same load. For every load it prints
 * requests/s, p50/p99, non-2xx (with errors and timeouts), CPU µs per request of the server process
 * and of PostgreSQL (from /proc), the server's peak RSS (VmHWM, cumulative since its start) and the
 * 1-minute load average; then per round and as the median the ratios service/bare-durable and
 * service/no-op. `--cpu-prof DIR` writes a V8 CPU profile of the service for the whole run;
 * `--service-flags` adds Node options to the service's (after them, so they win): `--trace-gc` to count
 * its collections, `--inspect=…` for bench/alloc-sample.ts (where its allocations come from).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  cpuTicks, median, postgresDelta, postgresTicks, rssMb, seedTenants, serviceNodeOptions, triggerRequests, usPer, waitForMessage, waitReady,
} from './lib/accept-load.ts';
import { wrkLoad } from './lib/wrk.ts';

const { values: args } = parseArgs({
  options: {
    'db-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/cms_bench_accept' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    companies: { type: 'string', default: '400' },
    'cpu-prof': { type: 'string' },
    'service-flags': { type: 'string', default: '' },
  },
});
const DB_URL = args['db-url'];
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const COMPANIES = Number(args.companies);
const ROOT = path.join(import.meta.dirname, '..');
const ADMIN_TOKEN = 'bench-admin-token-6Tf1Ys8Kw3Nq7Pz';

/** Drops and creates the database named in DB_URL (through the `postgres` database of the same server). */
async function recreateDatabase(): Promise<void> {
  const adminUrl = new URL(DB_URL);
  const name = adminUrl.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected database name ${name}`);
  adminUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
}

interface Row { round: number; name: string; rps: number; p50: number; p99: number; non2xx: number; requests: number; cpuUs: number; pgCpuUs: number; wrkCpuUs: number; rssMb: number; load: number }

async function main(): Promise<void> {
  await recreateDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-accept-'));
  const port = 8391, durablePort = 8392, noopPort = 8393;
  const nodeArgs = [
    ...serviceNodeOptions(), ...args['service-flags'].split(/\s+/).filter(Boolean),
    ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof'])}`] : []),
  ];
  const service = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin/cms.js'), 'serve', '--role', 'api'], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: DB_URL, PORT: String(port), ADMIN_TOKEN, SECRETS_KEY: 'bench-secrets-key-2Rw9Hc4Vj7Lx5Mb', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  let durable: ChildProcess | undefined, noop: ChildProcess | undefined;
  try {
    await waitReady(base); // migrations and pg-boss's schema are in place after this
    durable = fork(path.join(import.meta.dirname, 'bare-accept-server.ts'), [String(durablePort), DB_URL], { stdio: 'inherit', execArgv: ['--max-semi-space-size=16'] });
    noop = fork(path.join(import.meta.dirname, 'bare-server.ts'), [String(noopPort)], { stdio: 'inherit' });
    await Promise.all([waitForMessage(durable), waitForMessage(noop)]);
    const tenants = await seedTenants({ base, token: ADMIN_TOKEN }, COMPANIES);
    const requests = triggerRequests(tenants);
    const servers = [
      { name: 'service (cms serve --role api)', url: base, pid: service.pid! },
      { name: 'bare durable accept', url: `http://127.0.0.1:${durablePort}`, pid: durable.pid! },
      { name: 'bare no-op', url: `http://127.0.0.1:${noopPort}`, pid: noop.pid! },
    ];
    const run = (url: string, duration: number) => wrkLoad(url, CONNECTIONS, duration, requests);
    const rows: Row[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of servers) {
        if (WARMUP > 0) await run(s.url, WARMUP);
        const load = os.loadavg()[0];
        const before = { cpu: cpuTicks(s.pid), pg: postgresTicks() };
        const { generatorTicks, ...stats } = await run(s.url, DURATION);
        const row: Row = {
          round, name: s.name, ...stats, wrkCpuUs: usPer(generatorTicks, stats.requests),
          cpuUs: usPer(cpuTicks(s.pid) - before.cpu, stats.requests), pgCpuUs: usPer(postgresDelta(before.pg, postgresTicks()), stats.requests),
          rssMb: rssMb(s.pid, 'VmHWM'), load,
        };
        rows.push(row);
        console.error(JSON.stringify(row));
      }
    }
    console.log(`\n### ${ROUNDS} interleaved rounds, wrk (1 thread): 4.3 trigger automation, 50 contacts, ${CONNECTIONS} connections, ${DURATION} s loads (+${WARMUP} s warm-up), ${tenants.length} companies\n`);
    console.log('| round | server | requests | requests/s | p50 ms | p99 ms | non-2xx | server CPU µs/request | PostgreSQL CPU µs/request | wrk CPU µs/request | peak RSS MB | load (1 min) |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.round} | ${r.name} | ${r.requests} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.cpuUs} | ${r.pgCpuUs} | ${r.wrkCpuUs} | ${r.rssMb} | ${r.load.toFixed(2)} |`);
    // On a shared machine requests/s moves with the neighbours; the CPU (server + PostgreSQL) per request
    // of each server moves much less, and its inverse ratio is what the two could do on equal CPU.
    console.log('\n| round | service/bare durable | service/no-op | bare durable/no-op | CPU ratio bare durable/service |');
    console.log('|---|---|---|---|---|');
    const ratios: number[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const [sa, sb] = servers.slice(0, 2).map((s) => rows.find((r) => r.round === round && r.name === s.name)!);
      const [a, b, c] = servers.map((s) => rows.find((r) => r.round === round && r.name === s.name)!.rps);
      const cpu = (sb.cpuUs + sb.pgCpuUs) / Math.max(1, sa.cpuUs + sa.pgCpuUs);
      ratios.push([a / b, a / c, b / c, cpu]);
      // A refused request (429 when fewer companies than requests/s / 20) is cheap: such a round says nothing.
      const refused = rows.some((r) => r.round === round && r.non2xx > 0) ? ' (non-2xx answers: not comparable)' : '';
      console.log(`| ${round}${refused} | ${(a / b).toFixed(2)} | ${(a / c).toFixed(2)} | ${(b / c).toFixed(2)} | ${cpu.toFixed(2)} |`);
    }
    console.log(`| median | ${median(ratios.map((r) => r[0])).toFixed(2)} | ${median(ratios.map((r) => r[1])).toFixed(2)} | ${median(ratios.map((r) => r[2])).toFixed(2)} | ${median(ratios.map((r) => r[3])).toFixed(2)} |`);
    console.log(`\nnproc ${os.cpus().length}, ${os.cpus()[0]?.model}, Node ${process.version}, ${new Date().toISOString()}`);
  } finally {
    durable?.kill();
    noop?.kill();
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
