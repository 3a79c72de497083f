/**
 * WhatsApp pacing benchmark (docs/benchmarks.md "WhatsApp pacing across worker processes"): an API
 * process and TWO worker processes (`cms serve`, as the fault tests start them) on a scratch PostgreSQL
 * database, the fake Graph API of test/helpers/fake-graph.ts in a process of its own
 * (test/helpers/fake-graph-process.ts, whose clock measures the rates).
 *
 *   node bench/whatsapp-pacing.ts [--db-url postgres://postgres@127.0.0.1:5432/postgres] [--runs a,b]
 *                                 [--cpu-prof DIR] [--pair 6s] [--scale 1]
 *
 * Per run, one company (one number) with `throughput_per_second` = the run's rate, `messaging_limit`
 * null and an approved template synced from the fake; its messages are accepted first (operator
 * campaign sends, one batch each, the workers not running), then the two workers start, and the run
 * lasts until the fake Graph API has every request:
 * - (a) 3,000 messages at 50/s: 2,700 distinct recipients and 300 of them a second time (their second
 *   message waits for the pair interval); the highest count in any 1-s window at the Graph API (must
 *   be <= 50), the mean rate (first to last request; goal >= 45/s) and the smallest gap between two
 *   requests to one recipient against WHATSAPP_PAIR_INTERVAL;
 * - (b) 20,000 messages at 1,000/s, all distinct recipients: the rate reached and where the CPU goes:
 *   CPU seconds of each process over the run (/proc: api, both workers, the fake Graph API, and the
 *   PostgreSQL backends of the scratch database), and with --cpu-prof a V8 profile of worker 1 for its
 *   whole life (summarised here by self time per package / source file and per function).
 * The scratch database `cms_bench_whatsapp` is dropped and created on the cluster of --db-url.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { admin, Harness, sleep, type Proc } from '../test/faults/helpers.ts';
import { graphTemplate, randomPhoneNumberId } from '../test/helpers/fake-graph.ts';
import { randomWabaId } from '../test/helpers/whatsapp.ts';
import { cpuTicks, phoneOf } from './lib/accept-load.ts';
import { startFakeGraphProcess, type FakeGraphProcess } from '../test/helpers/fake-graph-process.ts';

const { values: args } = parseArgs({
  options: {
    'db-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    runs: { type: 'string', default: 'a,b' },
    'cpu-prof': { type: 'string' },
    pair: { type: 'string', default: '6s' },
    /** Fraction of each run's messages (a quick check of the script: --scale 0.1). */
    scale: { type: 'string', default: '1' },
  },
});

const DB_NAME = 'cms_bench_whatsapp';
const RUNS = {
  a: { total: 3_000, repeats: 300, rate: 50 },
  b: { total: 20_000, repeats: 0, rate: 1_000 },
} as const;

async function onCluster(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: args['db-url'] });
  await c.connect();
  try { await c.query(text); } finally { await c.end(); }
}

/** PIDs of the PostgreSQL backends connected to the scratch database. */
async function backendPids(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [DB_NAME]);
    return rows.map((r) => r.pid);
  } finally { await c.end(); }
}

const ticksOf = (pids: number[]) => new Map(pids.map((p) => [p, cpuTicks(p)]));
const delta = (before: Map<number, number>, pids: number[]) => pids.reduce((s, p) => s + (before.has(p) ? Math.max(0, cpuTicks(p) - before.get(p)!) : 0), 0);

/** Self time of a V8 .cpuprofile by area (package, source file, node internals, GC, idle) and by function. */
function summarizeProfile(file: string): { areas: [string, number][]; functions: [string, number][]; totalMs: number } {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[]; startTime: number; endTime: number };
  const totalHits = prof.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
  const totalMs = (prof.endTime - prof.startTime) / 1000;
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const n of prof.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits) continue;
    const { url, functionName } = n.callFrame;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const src = /\/(src\/.*)$/.exec(url)?.[1];
    const area = pkg ? pkg : src ? src : url.startsWith('node:') ? 'node internals' : url ? url : functionName || '(native)';
    areas.set(area, (areas.get(area) ?? 0) + hits);
    const fn = `${functionName || '(anonymous)'} ${pkg ?? src ?? url ?? ''}`.trim();
    fns.set(fn, (fns.get(fn) ?? 0) + hits);
  }
  const pct = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => [k, (100 * v) / totalHits] as [string, number]);
  return { areas: pct(areas), functions: pct(fns), totalMs };
}

async function main(): Promise<void> {
  const h = new Harness('bench_whatsapp');
  let graph: FakeGraphProcess | undefined;
  try {
    await onCluster(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
    await onCluster(`CREATE DATABASE ${DB_NAME}`);
    const u = new URL(args['db-url']);
    u.pathname = '/' + DB_NAME;
    const url = u.toString();
    graph = await startFakeGraphProcess();
    const api = h.proc({ name: 'api', role: 'api', databaseUrl: url, env: { DB_POOL_MAX: '10' } });
    await api.start();
    console.log(`nproc ${os.cpus().length}, ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${new Date().toISOString()}`);

    for (const name of args.runs.split(',') as (keyof typeof RUNS)[]) {
      const scale = Number(args.scale);
      const run = { ...RUNS[name], total: Math.round(RUNS[name].total * scale), repeats: Math.round(RUNS[name].repeats * scale) };
      const numberId = randomPhoneNumberId();
      const c = await admin(api.url, 'POST', '/admin/companies', { name: `bench ${name}`, subscription_active: true, default_country: 'DE' });
      const k = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'bench' });
      // The number at the run's rate, no messaging limit, an approved template synced from the fake Graph API.
      const wabaId = randomWabaId();
      await graph.templates(wabaId, [graphTemplate('hello', 'en', {})]);
      await admin(api.url, 'PUT', `/admin/companies/${c.company_id}/channel`, {
        provider: 'whatsapp', phone_number_id: numberId, access_token: graph.accessToken, api_base_url: graph.baseUrl, waba_id: wabaId,
        throughput_per_second: run.rate, messaging_limit: null,
      });
      await admin(api.url, 'POST', `/admin/companies/${c.company_id}/whatsapp/templates/sync`);
      // Accept: operator campaign sends (POST /admin/campaigns/{id}/sends, one batch each, chunks of 250):
      // the distinct recipients, and the repeated ones in a second campaign.
      const base = name === 'a' ? 0 : 1_000_000;
      const distinct = run.total - run.repeats;
      const t0 = performance.now();
      const audiences = [Array.from({ length: distinct }, (_, i) => phoneOf(base + i)), Array.from({ length: run.repeats }, (_, i) => phoneOf(base + i))];
      for (const [i, contacts] of audiences.entries()) {
        if (contacts.length === 0) continue;
        const campaign = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/campaigns`, {
          name: `bench ${name} ${i}`, template: { body: 'Hello', whatsapp: { name: 'hello', language: 'en' } },
        });
        await admin(api.url, 'POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { contacts });
      }
      console.log(`\nrun ${name}: ${run.total} messages (${run.repeats} to recipients a second time) accepted in ${((performance.now() - t0) / 1000).toFixed(1)} s; starting 2 workers at ${run.rate}/s`);

      const env = { WHATSAPP_PAIR_INTERVAL: args.pair!, DB_POOL_MAX: '10', LOG_LEVEL: 'info' };
      const profDir = args['cpu-prof'] && name === 'b' ? path.resolve(args['cpu-prof']) : undefined;
      if (profDir) fs.mkdirSync(profDir, { recursive: true });
      const workers: Proc[] = [1, 2].map((i) => h.proc({
        name: `worker-${name}-${i}`, role: 'worker', databaseUrl: url,
        env: { ...env, ...(profDir && i === 1 ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}) },
      }));
      await Promise.all(workers.map((w) => w.start()));
      const procs: [string, number][] = [['api', api.pid!], ['worker 1', workers[0].pid!], ['worker 2', workers[1].pid!], ['fake Graph API', graph.pid]];
      const before = ticksOf(procs.map(([, p]) => p));
      const pgPids = await backendPids(url);
      const pgBefore = ticksOf(pgPids);
      const loadBefore = os.loadavg()[0];
      const started = performance.now();
      let stats = await graph.stats(numberId);
      for (;;) {
        stats = await graph.stats(numberId);
        if (stats.count >= run.total) break;
        if (performance.now() - started > (run.total / run.rate) * 4_000 + 120_000) throw new Error(`run ${name}: only ${stats.count} of ${run.total} requests arrived`);
        await sleep(500);
      }
      const wallS = (performance.now() - started) / 1000;
      const cpu = procs.map(([label, pid]) => [label, delta(before, [pid]) / 100] as [string, number]);
      const pgNow = await backendPids(url);
      const pgCpu = delta(pgBefore, pgNow) / 100;
      const spanS = (stats.lastAt - stats.firstAt) / 1000;
      const mean = (stats.count - 1) / spanS;
      console.log(`run ${name}: ${stats.count} requests at the Graph API over ${spanS.toFixed(1)} s (first to last): mean ${mean.toFixed(1)}/s `
        + `(rate ${run.rate}/s, ${(mean / run.rate).toFixed(3)} of it); most in any 1-s window ${stats.most} (limit ${run.rate}); `
        + `${stats.repeats} second sends to a recipient, the closest two ${stats.closestPairMs === null ? '-' : `${Math.round(stats.closestPairMs)} ms`} apart (pair interval ${args.pair}); `
        + `1-min load ${loadBefore.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}`);
      console.log(`run ${name}: CPU over the ${wallS.toFixed(1)} s from the workers' start to the last request (s, and % of one core):`);
      for (const [label, s] of [...cpu, ['PostgreSQL backends of the database', pgCpu] as [string, number]]) {
        console.log(`  ${label.padEnd(36)} ${s.toFixed(2).padStart(7)} s  ${((100 * s) / wallS).toFixed(0).padStart(4)} %`);
      }
      await Promise.all(workers.map((w) => w.stop()));
      if (profDir) {
        const file = fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(profDir, f))
          .sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs)[0];
        if (file) {
          const p = summarizeProfile(file);
          console.log(`run ${name}: worker 1 profile (${file}, ${(p.totalMs / 1000).toFixed(1)} s of its life), self time by area:`);
          for (const [k2, v] of p.areas) console.log(`  ${v.toFixed(1).padStart(5)} %  ${k2}`);
          console.log('  by function:');
          for (const [k2, v] of p.functions) console.log(`  ${v.toFixed(1).padStart(5)} %  ${k2}`);
        }
      }
    }
  } finally {
    graph?.stop();
    await h.cleanup();
    await onCluster(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
  }
}

await main();
