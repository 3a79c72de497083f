/**
 * Fairness between companies on the embedded database (docs/benchmarks.md "Fairness between
 * companies"): how much slower a small company's requests get while a large company on the same
 * service makes its heaviest allowed requests back to back.
 *
 *   node bench/fairness.ts [--contacts 100000] [--messages 5] [--duration 15] [--data-dir DIR]
 *
 * On PGlite every SQL statement runs on the service's one thread, so a long statement of one company
 * holds up every other company's statements. Dynamic-segment filters are evaluated in bounded steps
 * (src/domain/dynamic-segments.ts `scan`): this benchmark measures what that leaves for the others.
 *
 * Setup (not measured): a fresh PGlite directory (`--data-dir`, default a new one under the OS
 * temporary directory; removed at the end unless given). An in-process service makes, through the
 * operator API, company A (a campaign, a static segment) and company B (an API key, 20 static
 * segments: the most a company may hold). Set-based SQL then writes A's `--contacts` contacts with
 * the variables `score` (a number as text, below 1,000,000), `joined` (a date, YYYY-MM-DD) and `city`,
 * tags (`vip` on every 5th, `newsletter` on every 2nd), `--messages` messages per contact in completed
 * campaign batches of 1,000 (read, delivered, sent, failed in turn, 1 to 60 days old), every
 * `newsletter` contact as a member of A's static segment; B's 300 contacts; VACUUM ANALYZE. Then the
 * service runs as its own process (`node bin/cms.js serve`, role all, as `npm start` runs it), and an
 * owner of B is invited, accepts and signs in to the console (the session cookie is kept).
 *
 * Measured: three of B's requests, each driven by wrk (its own process, 1 thread, 2 connections,
 * `--duration` seconds, closed loop), whose Lua `done` prints p50 / p95 / p99 / max and the statuses:
 * 1. `GET /console/contacts` with B's session cookie: a person at the console (session, company,
 *    contacts page: several statements a request).
 * 2. `POST /api/segments/create` with B's API key: what B's integration calls, through the whole
 *    public pipeline, without state that grows with the run: B already holds 20 segments, so 10
 *    answers a second are 400 (limit reached, after one counting statement) and the rest 429 from the
 *    rate limit. On the embedded database the key lookup is cached (2 s) and the rate limit kept in
 *    memory, so most of these answers take no statement: they show how long the one thread is held.
 * 3. `GET /readyz`: a load balancer's readiness probe, one database round trip (`SELECT 1` in the
 *    queue of statements), answered 503 when it takes over 2 s. A probe that fails takes the process
 *    out of rotation for every company, not only for A.
 * Each is measured with nothing else running (baseline), then while company A runs, from a client loop
 * in this process, one request at a time, back to back:
 * - `preview`: `POST /admin/companies/{A}/segments/preview` cycling through the widest filters the
 *   language allows (test/helpers/widest-filters.ts);
 * - `segment list`: `GET /admin/companies/{A}/segments` while A holds 5 dynamic segments with the 5
 *   filters whose previews were slowest (made, not measured, before this load) and its static one;
 * - `export`: `GET /admin/companies/{A}/contacts/export`, the CSV of all of A's contacts, read to the end.
 * Reported per run: B's p50 / p95 / p99 / max in ms and statuses; the ratio of B's p95 under A's load
 * to B's baseline p95; A's requests (count, p50, max, and per filter for the previews, with the time
 * of a step of the scan: the median preview's time over its steps, `scanChunk`); the service's longest
 * stall over the run (the largest event-loop delay, from GET /metrics: the longest the thread was held
 * at once, or waited for a CPU); CPU time of wrk (from /proc, read while its `done` waits), of the
 * service process and of this process (A's client) over each run; the load average before and after.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { SCAN_BUDGET, scanChunk } from '../src/domain/dynamic-segments.ts';
import { filterCost, MAX_FILTER_COST, parseFilter } from '../src/domain/segment-filter.ts';
import { startService } from '../src/service.ts';
import { widestFilters } from '../test/helpers/widest-filters.ts';
import { cpuTicks, percentile } from './lib/accept-load.ts';
import { freePort, operatorApi, startServeProcess } from './lib/serve.ts';

const ADMIN = 'bench-fairness-admin-8Qs3Lm6Tz1Wc4Hn';
const SECRETS = 'bench-fairness-secrets-2Kd7Pv9Rx5Jb3Yf';
const PASSWORD = 'correct horse battery staple';
const EMAIL = 'owner@b.fairness.example.com';
const B_CONTACTS = 300;
const TICK_MS = 10;

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    messages: { type: 'string', default: '5' },
    duration: { type: 'string', default: '15' },
    'data-dir': { type: 'string' },
  },
});
const CONTACTS = Number(args.contacts);
const MESSAGES = Number(args.messages);
const DURATION = Number(args.duration);
for (const [name, v] of [['contacts', CONTACTS], ['messages', MESSAGES], ['duration', DURATION]] as const) {
  if (!Number.isSafeInteger(v) || v < (name === 'messages' ? 0 : 1)) throw new Error(`--${name} must be a whole number, got ${String(v)}`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A cookie-keeping client that fills console forms with their CSRF token (no redirects followed). */
class Browser {
  cookies = new Map<string, string>();
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  async request(method: string, p: string, form?: Record<string, string>): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = this.cookieHeader();
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(this.base + p, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0];
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(pair.slice(0, eq).trim());
      else this.cookies.set(pair.slice(0, eq).trim(), value);
    }
    return { status: res.status, text: await res.text() };
  }
  async submit(page: string, action: string, form: Record<string, string>) {
    const { text } = await this.request('GET', page);
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (!token) throw new Error(`no CSRF token on ${page}`);
    return this.request('POST', action, { _csrf: token, ...form });
  }
}

interface Ids { a: number; b: number; aStatic: number; aCampaign: number; bKey: string }

/** Companies through the operator API of an in-process service, then the set-based data (module comment). */
async function setup(env: Record<string, string>): Promise<Ids> {
  const service = await startService(loadConfig(env), { role: 'api', logger: pino({ level: 'warn' }) });
  try {
    const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    const admin = operatorApi(base, ADMIN);
    const a: number = (await admin('POST', '/admin/companies', { name: 'Large A', subscription_active: true })).company_id;
    const campaignId: number = (await admin('POST', `/admin/companies/${a}/campaigns`, { name: 'Newsletter', template: { body: 'Hi {{ first_name }}' }, expire_after: null })).campaign_id;
    const aStatic: number = (await admin('POST', `/admin/companies/${a}/segments`, { name: 'Newsletter (list)' })).segment_id;
    const b: number = (await admin('POST', '/admin/companies', { name: 'Small B', subscription_active: true })).company_id;
    const bKey: string = (await admin('POST', `/admin/companies/${b}/api-keys`, { label: 'shop backend' })).api_key;
    for (let i = 1; i <= 20; i++) await admin('POST', `/admin/companies/${b}/segments`, { name: `List ${i}` });
    const db = service.deps.database.db;
    const step = async (what: string, q: { execute(db: unknown): Promise<unknown> }) => {
      const t = Date.now();
      await q.execute(db);
      console.error(`  ${what}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    };
    const contacts = (company: number, prefix: string, n: number) => sql`
      INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, tags, country)
      SELECT ${company}::int, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')), 'Name ' || i, 'Tester ' || i,
             jsonb_build_object('score', ((i::bigint * 7919) % 1000000)::text, 'joined', to_char(date '2020-01-01' + i % 2000, 'YYYY-MM-DD'),
                                'city', (ARRAY['Berlin','Köln','Hamburg','München','Leipzig','Dresden','Bremen'])[1 + i % 7]),
             (CASE WHEN i % 5 = 0 THEN ARRAY['vip'] ELSE ARRAY[]::text[] END) || (CASE WHEN i % 2 = 0 THEN ARRAY['newsletter'] ELSE ARRAY[]::text[] END), 'DE'
      FROM generate_series(1, ${n}::int) AS i, LATERAL (SELECT ${prefix}::text || lpad(i::text, 8, '0') AS phone) p`;
    await step(`A: ${CONTACTS} contacts`, contacts(a, '+49151', CONTACTS));
    await step(`B: ${B_CONTACTS} contacts`, contacts(b, '+49160', B_CONTACTS));
    const total = CONTACTS * MESSAGES;
    if (total > 0) {
      const batches = Math.ceil(total / 1000);
      await step(`A: ${batches} completed campaign batches`, sql`
        INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
        SELECT md5('fairness-bench' || b)::uuid, ${a}::int, 'campaign', ${campaignId}::int, 'completed', least(1000, ${total}::bigint - b * 1000), '[]', '{"body":"Hi"}',
               now() - interval '61 days', now() - interval '61 days'
        FROM generate_series(0, ${batches - 1}::int) AS b`);
      // One statement per round of messages (one message to every contact), to bound each statement's size.
      for (let j = 0; j < MESSAGES; j++) {
        await step(`A: messages round ${j + 1} of ${MESSAGES} (${CONTACTS})`, sql`
          INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, error_code, attempts, sent_at, delivered_at, read_at, failed_at, rendered, updated_at)
          SELECT gen_random_uuid(), md5('fairness-bench' || ((k - 1) / 1000))::uuid, ${a}::int, ((k - 1) % 1000)::int, contact_id, phone,
                 (ARRAY['read','delivered','sent','failed'])[1 + k % 4], CASE WHEN k % 4 = 3 THEN '131026' END, 1,
                 CASE WHEN k % 4 <> 3 THEN t END, CASE WHEN k % 4 IN (0, 1) THEN t + interval '9 seconds' END,
                 CASE WHEN k % 4 = 0 THEN t + interval '40 minutes' END, CASE WHEN k % 4 = 3 THEN t + interval '4 seconds' END,
                 '{"body":"Hi"}', t + interval '1 hour'
          FROM (SELECT contact_id, phone, ${j}::bigint * ${CONTACTS}::bigint + rn AS k, now() - ((rn + ${j}::bigint) % 60 + 1) * interval '1 day' AS t
                FROM (SELECT contact_id, phone, row_number() OVER (ORDER BY contact_id) AS rn FROM contacts WHERE company_id = ${a}::int) c) x`);
      }
    }
    await step('A: static segment members', sql`
      INSERT INTO segment_members (segment_id, contact_id) SELECT ${aStatic}::int, contact_id FROM contacts WHERE company_id = ${a}::int AND tags @> ARRAY['newsletter']`);
    await step('vacuum analyze', sql`VACUUM ANALYZE`);
    return { a, b, aStatic, aCampaign: campaignId, bKey };
  } finally {
    await service.close();
  }
}

/** What one wrk run of a B request showed (latencies in ms, CPU in ms). */
interface WrkResult { requests: number; seconds: number; p50: number; p95: number; p99: number; max: number; statuses: Record<string, number>; socketErrors: number; cpuMs: number }

/** A request of B as wrk sends it. Header values and the body must be printable ASCII. */
interface BRequest { name: string; method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }

/** A Lua string literal of printable ASCII `s` (JSON's escapes of `"` and `\` are Lua's too). */
function luaString(s: string): string {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`not printable ASCII: ${s}`);
  return JSON.stringify(s);
}

/** The Lua script of one run: one fixed request; statuses counted per thread; `done` prints one JSON line, then waits for stdin. */
function wrkScript(r: BRequest): string {
  return `
wrk.method = ${luaString(r.method)}
wrk.path = ${luaString(r.path)}
${Object.entries(r.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`).join('\n')}
${r.body === undefined ? '' : `wrk.body = ${luaString(r.body)}`}
statuses = {}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
function done(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do all[k] = (all[k] or 0) + v end
  end
  local parts = {}
  for k, v in pairs(all) do table.insert(parts, string.format('"%d":%d', k, v)) end
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"socket_errors":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"max_us":%d,"statuses":{%s}}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max, table.concat(parts, ",")))
  io.stdout:flush()
  io.read()
end
`;
}

/** Runs wrk (1 thread, 2 connections, DURATION s) with request `r` against `base`. */
async function runWrk(base: string, r: BRequest): Promise<WrkResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-fairness-wrk-'));
  try {
    const script = path.join(dir, 'b.lua');
    fs.writeFileSync(script, wrkScript(r));
    const child = spawn('wrk', ['-t1', '-c2', `-d${DURATION}s`, '--timeout', '10s', '-s', script, base], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    let ticks = -1;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (ticks < 0 && out.includes('WRK_RESULT') && out.endsWith('\n')) {
        ticks = cpuTicks(child.pid!); // wrk waits on its stdin in `done`: it is still there
        child.stdin.end('\n');
      }
    });
    const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('exit', resolve); });
    const m = /WRK_RESULT (\{.*\})/.exec(out);
    if (!m) throw new Error(`wrk exited with ${code} without a result:\n${out}`);
    const j = JSON.parse(m[1]) as { requests: number; duration_us: number; socket_errors: number; p50_us: number; p95_us: number; p99_us: number; max_us: number; statuses: Record<string, number> };
    return {
      requests: j.requests, seconds: j.duration_us / 1e6, p50: j.p50_us / 1000, p95: j.p95_us / 1000, p99: j.p99_us / 1000, max: j.max_us / 1000,
      statuses: j.statuses, socketErrors: j.socket_errors, cpuMs: Math.max(0, ticks) * TICK_MS,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One of A's requests: its label (the filter's name for previews) and what it answered. */
type ARequest = () => Promise<{ label: string; status: number; bytes: number }>;

/** A's client loop: `next` one at a time, back to back, until stopped; every request timed to its last byte. */
class Loop {
  readonly times: { label: string; ms: number; status: number; bytes: number }[] = [];
  private stopped = false;
  private readonly running: Promise<void>;
  constructor(next: ARequest) {
    this.running = (async () => {
      while (!this.stopped) {
        const t = performance.now();
        const r = await next();
        this.times.push({ ...r, ms: performance.now() - t });
      }
    })();
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/**
 * The service's largest event-loop delay since the previous call, in ms: prom-client's
 * `nodejs_eventloop_lag_max_seconds` in GET /metrics, read from `perf_hooks.monitorEventLoopDelay`,
 * whose histogram each scrape resets: the longest the service's one thread was held at once (a
 * statement on the embedded database runs on it), or waited for a CPU.
 */
async function eventLoopDelay(base: string): Promise<{ max: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const gauge = (name: string) => 1000 * Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { max: gauge('nodejs_eventloop_lag_max_seconds') };
}

/** p50 and max of `ms` as text. */
function summary(ms: number[]): string {
  const s = [...ms].sort((x, y) => x - y);
  return s.length ? `${percentile(s, 50).toFixed(0)} / ${s.at(-1)!.toFixed(0)}` : '-';
}

const f1 = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function main(): Promise<void> {
  const cpu = execFileSync('lscpu', { encoding: 'utf8' }).match(/^Model name:\s*(.*)$/m)?.[1] ?? os.cpus()[0]?.model ?? '?';
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(', ');
  console.log(`# Fairness between companies, PGlite, ${CONTACTS} contacts × ${MESSAGES} messages, ${DURATION} s a run, ${new Date().toISOString()}`);
  console.log(`# ${cpu}, ${os.availableParallelism()} CPUs, Node ${process.version}, load average ${load()} before the setup`);
  const ownDir = args['data-dir'] === undefined;
  const dataDir = args['data-dir'] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-fairness-'));
  if (!ownDir && fs.existsSync(dataDir) && fs.readdirSync(dataDir).length) throw new Error(`--data-dir ${dataDir} is not empty: the benchmark needs a fresh database`);
  const env: Record<string, string> = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn' };
  const t0 = Date.now();
  const ids = await setup(env);
  const port = await freePort();
  const child = await startServeProcess(env, port);
  const base = `http://127.0.0.1:${port}`;
  const admin = operatorApi(base, ADMIN);
  try {
    // B's console owner: invited, accepted, signed in.
    const inv = await admin('POST', `/admin/companies/${ids.b}/users/invitations`, { email: EMAIL, role: 'owner' });
    const invPath = new URL(inv.invite_url).pathname;
    const accepted = await new Browser(base).submit(invPath, invPath, { password: PASSWORD, password_confirm: PASSWORD });
    if (accepted.status !== 303) throw new Error(`accepting the invitation: ${accepted.status} ${accepted.text.slice(0, 200)}`);
    const browser = new Browser(base);
    const signIn = await browser.submit('/console/login', '/console/login', { email: EMAIL, password: PASSWORD });
    if (signIn.status !== 303) throw new Error(`sign-in: ${signIn.status}`);
    console.error(`setup: ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const bRequests: BRequest[] = [
      { name: 'console `GET /console/contacts`', method: 'GET', path: '/console/contacts', headers: { cookie: browser.cookieHeader() } },
      { name: 'API `POST /api/segments/create`', method: 'POST', path: '/api/segments/create', headers: { 'service-api-key': ids.bKey, 'content-type': 'application/json' }, body: '{"name":"Fairness probe"}' },
      { name: '`GET /readyz`', method: 'GET', path: '/readyz', headers: {} },
    ];
    // Each answers as expected, and a short warm-up.
    for (const r of bRequests) {
      for (let i = 0; i < 30; i++) {
        const res = await fetch(base + r.path, { method: r.method, headers: r.headers, body: r.body, redirect: 'manual' });
        await res.text();
        if (i === 0 && ![200, 400, 429].includes(res.status)) throw new Error(`${r.method} ${r.path}: ${res.status}`);
      }
    }

    const filters = Object.entries(widestFilters({ segmentId: ids.aStatic, campaignId: ids.aCampaign }));
    let n = 0;
    const preview: ARequest = async () => {
      const [label, filter] = filters[n++ % filters.length];
      const res = await fetch(`${base}/admin/companies/${ids.a}/segments/preview`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ filter }),
      });
      return { label, status: res.status, bytes: (await res.arrayBuffer()).byteLength };
    };
    const get = (label: string, p: string): ARequest => async () => {
      const res = await fetch(base + p, { headers: { authorization: `Bearer ${ADMIN}` } });
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
      return { label, status: res.status, bytes };
    };
    const loads: { name: string; request?: ARequest; before?: () => Promise<void> }[] = [
      { name: 'none (baseline)' },
      { name: 'preview', request: preview },
      { name: 'segment list', request: get('list', `/admin/companies/${ids.a}/segments`), before: makeDynamicSegments },
      { name: 'export', request: get('export', `/admin/companies/${ids.a}/contacts/export`) },
    ];
    let previewTimes: { label: string; ms: number }[] = [];
    /** A's 5 dynamic segments: the 5 filters whose previews took longest (median). */
    async function makeDynamicSegments(): Promise<void> {
      const byName = new Map<string, number[]>();
      for (const t of previewTimes) byName.set(t.label, [...(byName.get(t.label) ?? []), t.ms]);
      const med = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
      const slowest = [...filters].sort(([x], [y]) => med(byName.get(y) ?? [0]) - med(byName.get(x) ?? [0])).slice(0, 5);
      const t = Date.now();
      for (const [name, filter] of slowest) await admin('POST', `/admin/companies/${ids.a}/segments`, { name: `Widest ${name}`, filter });
      console.error(`  A's dynamic segments (${slowest.map(([x]) => x).join(', ')}) made in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }

    interface Row { load: string; b: string; r: WrkResult; serviceMs: number; benchMs: number; seconds: number; stall: { max: number } }
    const rows: Row[] = [];
    const aRows: string[] = [];
    const loadsBefore = load();
    const measuredFrom = new Date();
    for (const l of loads) {
      await l.before?.();
      await sleep(1000);
      const loop = l.request ? new Loop(l.request) : undefined;
      for (const r of bRequests) {
        await eventLoopDelay(base); // resets the service's event-loop delay histogram
        const service0 = cpuTicks(child.pid!);
        const bench0 = process.cpuUsage();
        const w0 = performance.now();
        const res = await runWrk(base, r);
        const seconds = (performance.now() - w0) / 1000;
        const benchUse = process.cpuUsage(bench0);
        const serviceMs = (cpuTicks(child.pid!) - service0) * TICK_MS;
        rows.push({ load: l.name, b: r.name, r: res, serviceMs, benchMs: (benchUse.user + benchUse.system) / 1000, seconds, stall: await eventLoopDelay(base) });
        console.error(`  A: ${l.name}; B: ${r.name}: ${res.requests} requests, p50 ${f1(res.p50)} p95 ${f1(res.p95)} p99 ${f1(res.p99)} max ${f1(res.max)} ms, ${JSON.stringify(res.statuses)}`);
      }
      if (loop) {
        await loop.stop();
        const bad = loop.times.filter((t) => t.status !== 200);
        if (bad.length) throw new Error(`A's ${l.name}: ${bad.length} answers not 200 (first ${bad[0].status})`);
        if (l.name === 'preview') previewTimes = loop.times;
        const labels = [...new Set(loop.times.map((t) => t.label))];
        const per = labels.length > 1
          ? `; by filter, p50 / max ms (cost units, contacts a step, steps, p50 ms a step): ${labels.map((x) => {
            const cost = filterCost(parseFilter(filters.find(([y]) => y === x)![1]));
            const chunk = scanChunk(cost);
            const steps = Math.floor(CONTACTS / chunk) + 1; // the last step sees fewer than a chunk (or none)
            const ms = loop.times.filter((t) => t.label === x).map((t) => t.ms).sort((p, q) => p - q);
            return `${x} ${summary(ms)} (${cost}, ${chunk}, ${steps}, ${(percentile(ms, 50) / steps).toFixed(0)})`;
          }).join(', ')}`
          : '';
        const bytes = loop.times.at(-1)!.bytes;
        aRows.push(`| ${l.name} | ${loop.times.length} | ${summary(loop.times.map((t) => t.ms))} | ${(bytes / 1024).toFixed(0)} KiB${per} |`);
      }
    }
    const measuredTo = new Date();

    const baseline = new Map(rows.filter((x) => x.load === loads[0].name).map((x) => [x.b, x.r.p95]));
    console.log(`\nMeasured ${measuredFrom.toISOString().slice(11, 19)}-${measuredTo.toISOString().slice(11, 19)} UTC; load average before ${loadsBefore}, after ${load()}.`);
    console.log(`A: ${CONTACTS} contacts, ${CONTACTS * MESSAGES} messages; B: ${B_CONTACTS} contacts, 20 segments. wrk: 1 thread, 2 connections, ${DURATION} s a run. MAX_FILTER_COST ${MAX_FILTER_COST}, SCAN_BUDGET ${SCAN_BUDGET}.\n`);
    console.log('| B\'s request | A\'s load | B requests/s | p50 ms | p95 ms | p99 ms | max ms | p95 ÷ baseline | B statuses | longest service stall ms | wrk CPU | service CPU | A\'s client CPU |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
    for (const x of rows) {
      const pct = (ms: number) => `${(ms / 1000).toFixed(2)} s (${Math.round((100 * ms) / 1000 / x.seconds)} %)`;
      const ratio = x.load === loads[0].name ? '1' : `**${(x.r.p95 / baseline.get(x.b)!).toFixed(1)}**`;
      const statuses = Object.entries(x.r.statuses).map(([k, v]) => `${k}: ${v}`).join(', ') + (x.r.socketErrors ? `, socket errors ${x.r.socketErrors}` : '');
      console.log(`| ${x.b} | ${x.load} | ${Math.round(x.r.requests / x.r.seconds)} | ${f1(x.r.p50)} | ${f1(x.r.p95)} | ${f1(x.r.p99)} | ${f1(x.r.max)} | ${ratio} | ${statuses} | ${f1(x.stall.max)} | ${pct(x.r.cpuMs)} | ${pct(x.serviceMs)} | ${pct(x.benchMs)} |`);
    }
    console.log(`\nA's requests during each load (one at a time, back to back, timed to the last byte):\n`);
    console.log('| A\'s load | requests | p50 / max ms | answer size, per filter |');
    console.log('|---|---:|---:|---|');
    for (const r of aRows) console.log(r);
  } finally {
    child.kill();
    await new Promise((r) => child.once('exit', r));
    if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
