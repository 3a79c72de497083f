/**
 * What the accept benchmarks (bench/accept-ratio.ts, bench/embedded-accept.ts, bench/http.ts) share:
 * waiting for a server, the operator-API calls (docs docs/operator-api.md) that seed companies with an API
 * key, a connected connector and an active `api` automation, the autocannon POST load (bench/http.ts),
 * the 4.3 trigger body and requests (driven by wrk, bench/lib/wrk.ts), CPU ticks and RSS of a process and
 * of a database's PostgreSQL backends from /proc (Linux only), the median and percentiles.
 *
 * CPU is counted in clock ticks of 10 ms (USER_HZ 100, as on every Linux this runs on); RSS in MB
 * (MiB, rounded). Nothing here keeps state between calls.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

/** The template of every seeded automation (and http.ts's campaigns): two variables and a URL button. */
export const TEMPLATE = { body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.', buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }] };

/** The `i`-th test phone number in E.164: `+49151` and `i` padded to 8 digits (`i` < 10^8). */
export const phoneOf = (i: number): string => `+49151${String(i).padStart(8, '0')}`;

/** Resolves on the child's first IPC message (the bare servers send 'ready'); rejects if it exits first. */
export function waitForMessage(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
}

/**
 * Polls `url + '/readyz'` every 200 ms until it answers 2xx. Throws 'service did not become ready'
 * after `timeoutMs`, and at once when `child` is given and has exited.
 */
export async function waitReady(url: string, child?: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try { if ((await fetch(url + '/readyz')).ok) return; } catch { /* not up yet */ }
    await sleep(200);
  }
  throw new Error('service did not become ready');
}

/** Where the operator API is and its bearer token (the service's ADMIN_TOKEN). */
export interface Operator { base: string; token: string }

/**
 * One operator-API call: `method` `p` (e.g. '/admin/companies') with `body` as JSON if given. Resolves
 * to the parsed JSON answer (undefined for 204); throws `METHOD path: status text` on a non-2xx.
 */
export async function admin(op: Operator, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(op.base + p, {
    method,
    headers: { authorization: `Bearer ${op.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

/** A seeded company: its id, its API key and its active `api` automation. */
export interface Tenant { companyId: number; key: string; automationId: number }

/**
 * Seeds `companies` companies `bench-0` ... through the operator API, 16 at a time: each subscribed,
 * with an API key, a connected connector and an active `api` automation of TEMPLATE; then `extend`
 * (if given) adds what else a benchmark needs. Resolves to one entry a company, in the order they
 * were done.
 */
export async function seedTenants<T = Tenant>(op: Operator, companies: number, extend?: (t: Tenant) => Promise<T>): Promise<T[]> {
  const tenants: T[] = [];
  const one = async (i: number) => {
    const c = await admin(op, 'POST', '/admin/companies', { name: `bench-${i}`, subscription_active: true });
    const k = await admin(op, 'POST', `/admin/companies/${c.company_id}/api-keys`, {});
    await admin(op, 'PUT', `/admin/companies/${c.company_id}/connector`, { connected: true });
    const a = await admin(op, 'POST', `/admin/companies/${c.company_id}/automations`, { name: 'a', type: 'api', active: true, template: TEMPLATE });
    const t: Tenant = { companyId: c.company_id, key: k.api_key, automationId: a.automation_id };
    tenants.push(extend ? await extend(t) : t as T);
  };
  for (let i = 0; i < companies; i += 16) await Promise.all(Array.from({ length: Math.min(16, companies - i) }, (_, j) => one(i + j)));
  return tenants;
}

/**
 * The JSON body of a 4.3 trigger request for `automationId`: `contacts` contacts with distinct phones
 * `phoneOf((seed % 1000) * contacts + i)`, first and last name and an `order_id` variable `A-seed-i`.
 */
export function triggerBody(automationId: number, seed: number, contacts = 50): string {
  return `{"automation_id":${automationId},"contacts":${JSON.stringify(Array.from({ length: contacts }, (_, i) => ({
    phone: phoneOf((seed % 1000) * contacts + i), first_name: 'Ada', last_name: 'Lovelace', variables: { order_id: `A-${seed}-${i}` },
  })))}}`;
}

/** One request of a load: path, headers besides `content-type: application/json`, and the body. */
export interface LoadRequest { path: string; headers: Record<string, string>; body: string }

/**
 * Runs autocannon against `url`: POST, `connections` at once, for `timing.duration` seconds or
 * `timing.amount` requests; `next()` makes every request (content-type application/json is added).
 */
export function postLoad(url: string, connections: number, timing: { duration: number } | { amount: number }, next: () => LoadRequest): Promise<autocannon.Result> {
  return autocannon({
    url, method: 'POST', connections, ...timing,
    requests: [{
      setupRequest: (req: Record<string, unknown>) => {
        const r = next();
        return { ...req, path: r.path, headers: { 'content-type': 'application/json', ...r.headers }, body: r.body };
      },
    }],
  } as unknown as autocannon.Options);
}

/**
 * The 4.3 trigger requests of a wrk load (bench/lib/wrk.ts): `perTenant` rounds over `tenants`, request
 * `k` for `tenants[k % length]` with triggerBody(its automation, k, `contacts`) and its key in
 * `service-api-key`. With the default 5 a round, 400 companies give 2,000 distinct requests, which the
 * load hands out in turn, so each company sees 1/400 of the requests (4.3 allows 20 a second each).
 */
export function triggerRequests(tenants: readonly Tenant[], contacts = 50, perTenant = 5): LoadRequest[] {
  return Array.from({ length: tenants.length * perTenant }, (_, k) => {
    const t = tenants[k % tenants.length];
    return { path: '/api/automations/send', headers: { 'service-api-key': t.key }, body: triggerBody(t.automationId, k, contacts) };
  });
}

/** A load's figures: requests/s (average, rounded), p50/p99 latency in ms, non-2xx + errors + timeouts, requests done. */
export interface LoadStats { rps: number; p50: number; p99: number; non2xx: number; requests: number }

/** The LoadStats of an autocannon result. */
export function loadStats(r: autocannon.Result): LoadStats {
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors + r.timeouts, requests: r.requests.total };
}

/** CPU `ticks` (10 ms each) spread over `requests`, in µs a request, rounded (0 requests count as 1). */
export const usPer = (ticks: number, requests: number): number => Math.round((ticks * 10_000) / Math.max(1, requests));

/** CPU time (user + system, clock ticks of 10 ms, fields 14 and 15 of proc(5)) of one process; 0 if it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch { return 0; }
}

/** CPU ticks (cpuTicks) of every process named `postgres` on this machine, by PID. */
export function postgresTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try { if (fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') ticks.set(Number(d), cpuTicks(Number(d))); } catch { /* gone */ }
  }
  return ticks;
}

/**
 * PostgreSQL ticks between two postgresTicks samples, summed over the PIDs present in both
 * (backends that end between the two would make a plain sum go down). PostgreSQL is shared with
 * whatever else runs on the machine, so this is an upper bound.
 */
export function postgresDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) if (before.has(pid)) sum += Math.max(0, t - before.get(pid)!);
  return sum;
}

/**
 * CPU ticks (10 ms) used so far by the PostgreSQL backends connected to database `name` (their process
 * title names it), each since it started; a backend that ended keeps its last sample. Samples /proc
 * every 250 ms; `stop()` ends the sampling. The difference of two `ticks()` is the CPU between them.
 */
export function backendCpu(name: string): { ticks(): number; stop(): void } {
  const last = new Map<number, number>();
  const ours = new Map<number, boolean>();
  const notPostgres = new Set<number>();
  const sample = () => {
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const pid = Number(d);
      if (!ours.get(pid) && !notPostgres.has(pid)) {
        // A new backend shows the postmaster's title until it sets its own: asked again next time.
        try {
          if (fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'postgres') notPostgres.add(pid);
          else ours.set(pid, fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(` ${name} `));
        } catch { notPostgres.add(pid); }
      }
      if (ours.get(pid)) {
        const t = cpuTicks(pid);
        if (t > 0) last.set(pid, t);
      }
    }
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    ticks() {
      sample();
      let sum = 0;
      for (const t of last.values()) sum += t;
      return sum;
    },
    stop: () => clearInterval(timer),
  };
}

/** VmHWM (peak resident set since the process started) or VmRSS (now) of one process, in MB; throws if it is gone. */
export function rssMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** The `p`-th percentile (0-100, nearest rank) of `sorted` (ascending); NaN for none. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/** The median of `xs` (the mean of the middle two for an even count; NaN for none). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * The Node options the service runs with: those of `npm start`, read from package.json's `start`
 * script (`node <options> bin/cms.js serve`, the same as bin/cms.js's shebang line), so that every
 * benchmark starts the service as operators do; throws if the script has another form.
 */
export function serviceNodeOptions(): string[] {
  const start: unknown = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../package.json'), 'utf8')).scripts?.start;
  const m = typeof start === 'string' ? /^node((?:\s+-[^\s]+)*)\s+bin\/cms\.js serve$/.exec(start.trim()) : null;
  if (!m) throw new Error(`package.json's start script is not "node [options] bin/cms.js serve": ${JSON.stringify(start)}`);
  return m[1].trim().split(/\s+/).filter(Boolean);
}
