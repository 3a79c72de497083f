/**
 * Helpers of the fault tests: real `cms serve` child processes (`bin/cms.js`), a local
 * webhook receiver that records every delivery by webhook-id (the shared one of test/helpers/receiver.ts), a paced load generator that records every
 * answer, and the checks that compare what was answered `accepted` with what the database and the
 * receiver hold afterwards.
 *
 * Nothing here imports the service's code: the tests see the service only as processes, HTTP and SQL.
 *
 * Everything a test starts is registered in a `Harness` whose `cleanup()` (called from `after`, and on
 * process exit as a last resort) kills the children with SIGKILL, drops the databases and removes the
 * temporary directories, so a failing test leaves nothing behind.
 *
 * The fault tests run only when CMS_FAULT_TESTS=1 (`npm run test:faults`); `npm test`, whose glob also
 * matches these files, skips them.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startReceiver as startSharedReceiver } from '../helpers/receiver.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CMS_BIN = path.join(ROOT, 'bin', 'cms.js');
export const ADMIN_TOKEN = 'faults-admin-token-3Kp8Rv2Xn6Qw9Zt';
export const SECRETS_KEY = 'faults-secrets-key-7Gd2Mx5Lq9Wc4Bn';

/** Why a fault test is skipped, or false when it runs. */
export const SKIP: string | false = process.env.CMS_FAULT_TESTS === '1' ? false : 'fault tests run with `npm run test:faults` (CMS_FAULT_TESTS=1)';

/** A maintenance connection to the PostgreSQL cluster the tests create their own databases in. */
export const PG_ADMIN_URL = process.env.FAULTS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Prints a line of measurements to the test output (stderr is shown by node --test). */
export function report(line: string): void {
  process.stderr.write(`# faults: ${line}\n`);
}

/** Polls `check` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false | null>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    }
    await sleep(everyMs);
  }
}

/** A TCP port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------------------------------------------
// PostgreSQL

export function dbUrl(name: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = '/' + name;
  return u.toString();
}

/** Runs one statement on `url` with a fresh connection (bounded by `timeoutMs`). */
export async function sqlOn<R extends pg.QueryResultRow = any>(url: string, text: string, params: unknown[] = [], timeoutMs = 10_000): Promise<R[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  c.on('error', () => {});
  await c.connect();
  try {
    return (params.length ? await c.query<R>(text, params) : await c.query<R>(text)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function pgReady(): Promise<boolean> {
  try {
    await sqlOn(PG_ADMIN_URL, 'SELECT 1', [], 2_000);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------
// Child processes

export interface ProcOptions {
  /** For logs and messages, e.g. `worker-1`. */
  name: string;
  role: 'api' | 'worker' | 'all';
  /** DATABASE_URL (PostgreSQL) or none (PGlite in DATA_DIR). */
  databaseUrl?: string;
  dataDir: string;
  logDir: string;
  env?: Record<string, string>;
}

/** A `cms serve` process that can be started, killed with SIGKILL and started again (same port, same env). */
export class Proc {
  readonly opts: ProcOptions;
  port = 0;
  child: ChildProcess | undefined;
  starts = 0;
  /** Started and not killed since. */
  ready = false;
  /** Last lines of output of the current run (for failure messages). */
  tail: string[] = [];
  #exited: Promise<void> = Promise.resolve();

  constructor(opts: ProcOptions) {
    this.opts = opts;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and waits until it serves HTTP (api, all) or its workers run (worker). */
  async start(timeoutMs = 60_000): Promise<number> {
    if (this.alive) throw new Error(`${this.opts.name} is already running`);
    this.ready = false;
    if (!this.port && this.opts.role !== 'worker') this.port = await freePort();
    this.starts++;
    const t0 = Date.now();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      PORT: String(this.port || 0),
      HOST: '127.0.0.1',
      DATA_DIR: this.opts.dataDir,
      ADMIN_TOKEN,
      SECRETS_KEY,
      PROVIDER_ALLOWED_HOSTS: '127.0.0.1',
      // info on workers: their readiness is the 'cms worker running' line; warn on the API (no request log).
      LOG_LEVEL: this.opts.role === 'worker' ? 'info' : 'warn',
      DB_POOL_MAX: '4',
      ...(this.opts.databaseUrl ? { DATABASE_URL: this.opts.databaseUrl } : {}),
      // Extra node options for the service processes only (e.g. --stack-trace-limit=50 when diagnosing).
      ...(process.env.FAULTS_NODE_OPTIONS ? { NODE_OPTIONS: process.env.FAULTS_NODE_OPTIONS } : {}),
      ...this.opts.env,
    };
    const log = fs.createWriteStream(path.join(this.opts.logDir, `${this.opts.name}.log`), { flags: 'a' });
    log.write(`--- start ${this.starts} at ${new Date().toISOString()}\n`);
    const child = spawn(process.execPath, [CMS_BIN, 'serve', '--role', this.opts.role], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.tail = [];
    guard(child.pid!);
    let markReady: () => void = () => {};
    const readyLine = new Promise<void>((resolve) => { markReady = resolve; });
    const onData = (buf: Buffer) => {
      log.write(buf);
      for (const line of buf.toString('utf8').split('\n')) {
        if (!line) continue;
        this.tail.push(line.length > 500 ? line.slice(0, 500) + '…' : line);
        if (this.tail.length > 40) this.tail.shift();
        if (!this.ready && (line.includes('"cms worker running"') || line.includes('"cms listening"'))) markReady();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    this.#exited = new Promise<void>((resolve) => child.once('exit', () => { log.end(); resolve(); }));
    // Whichever comes first: ready, the process exits, or the time is up (no promise is left to reject later).
    let timer: NodeJS.Timeout | undefined;
    let starting = true;
    const failure = new Promise<never>((_, reject) => {
      void this.#exited.then(() => {
        if (starting) reject(new Error(`${this.opts.name} exited during start (code ${child.exitCode}, signal ${child.signalCode}):\n${this.tail.join('\n')}`));
      });
      timer = setTimeout(() => reject(new Error(`${this.opts.name} did not start within ${timeoutMs} ms:\n${this.tail.join('\n')}`)), timeoutMs);
    });
    failure.catch(() => {});
    const probe = this.opts.role === 'worker'
      ? readyLine
      : (async () => {
        while (starting && this.alive) {
          try {
            if ((await fetch(this.url + '/healthz', { signal: AbortSignal.timeout(1_000) })).ok) return;
          } catch {
            // not listening yet
          }
          await sleep(50);
        }
      })();
    try {
      await Promise.race([probe, failure]);
      if (!this.alive) await failure;
      this.ready = true;
    } catch (err) {
      await this.kill9();
      throw err;
    } finally {
      starting = false;
      clearTimeout(timer);
    }
    return Date.now() - t0;
  }

  /** kill -9, and waits until the process is gone. */
  async kill9(): Promise<void> {
    this.ready = false;
    if (this.alive) this.child!.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM (graceful stop), SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    this.ready = false;
    if (!this.alive) return this.#exited;
    this.child!.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([this.#exited.then(() => false), new Promise<boolean>((r) => { timer = setTimeout(() => r(true), graceMs); })]);
    clearTimeout(timer);
    if (late) await this.kill9();
  }
}

/**
 * Kills `pid` with SIGKILL as soon as this test process is gone, however it goes (a test runner that
 * gives up on a file, a kill -9 of the runner): a detached shell polls both every second.
 */
function guard(pid: number): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; kill -9 ${pid} 2>/dev/null`;
  const watcher = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watcher.unref();
}

/** Owns everything one test file starts; `cleanup()` releases all of it, whatever state it is in. */
export class Harness {
  readonly name: string;
  readonly dir: string;
  readonly procs: Proc[] = [];
  readonly databases: string[] = [];
  readonly receivers: Receiver[] = [];
  readonly cleanups: (() => Promise<void>)[] = [];
  #onExit = () => {
    for (const p of this.procs) if (p.alive) p.child!.kill('SIGKILL');
  };

  constructor(name: string) {
    this.name = name;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `cms-faults-${name}-`));
    process.on('exit', this.#onExit);
  }

  get logDir(): string {
    return this.dir;
  }

  /**
   * A fresh PostgreSQL database `<prefix>_<name>` (dropped first if a previous run left it); the prefix
   * is FAULTS_DB_PREFIX, default `cms_faults` (a shared cluster: each user of it keeps to its own names).
   */
  async database(suffix = ''): Promise<string> {
    const name = `${process.env.FAULTS_DB_PREFIX ?? 'cms_faults'}_${this.name}${suffix}`.replace(/[^a-z0-9_]/g, '_');
    await sqlOn(PG_ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await sqlOn(PG_ADMIN_URL, `CREATE DATABASE ${name}`);
    this.databases.push(name);
    return dbUrl(name);
  }

  proc(opts: Omit<ProcOptions, 'logDir' | 'dataDir'> & { dataDir?: string }): Proc {
    const p = new Proc({ dataDir: path.join(this.dir, `data-${opts.name}`), logDir: this.dir, ...opts });
    this.procs.push(p);
    return p;
  }

  async receiver(opts: ReceiverOptions = {}): Promise<Receiver> {
    const r = await startReceiver(opts);
    this.receivers.push(r);
    return r;
  }

  /** Kills every process, closes receivers, drops the databases, removes the directory (logs kept on failure). */
  async cleanup(keepLogs = false): Promise<void> {
    for (const c of this.cleanups.reverse()) await c().catch((err) => report(`cleanup step failed: ${(err as Error).message}`));
    await Promise.all(this.procs.map((p) => p.kill9()));
    for (const r of this.receivers) await r.close().catch(() => {});
    for (const name of this.databases) {
      await waitFor(`drop ${name}`, async () => {
        await sqlOn(PG_ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        return true;
      }, 30_000, 1_000).catch((err) => report(`could not drop ${name}: ${(err as Error).message}`));
    }
    process.off('exit', this.#onExit);
    if (keepLogs) report(`logs of the processes kept in ${this.dir}`);
    else fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Webhook receiver

export interface ReceiverOptions {
  /** Milliseconds the receiver takes to answer each delivery (keeps messages in flight longer). */
  delayMs?: number;
}

/** One 200-answered delivery: when its request had arrived in full (Date.now()), and its `to`. */
export interface Delivery {
  t: number;
  to: string;
}

export interface Receiver {
  url: string;
  secret: string;
  /** Deliveries answered 200, by webhook-id (message id), in arrival order. */
  byId: Map<string, Delivery[]>;
  /** Requests with a missing or wrong Standard Webhooks signature (answered 401, not counted). */
  badSignatures: number;
  requests: number;
  /** Message ids delivered more than once, with their delivery times. */
  duplicates(): Map<string, Delivery[]>;
  close(): Promise<void>;
}

/**
 * A webhook endpoint on 127.0.0.1 that records every delivery by webhook-id: the shared receiver of the
 * tests (test/helpers/receiver.ts), which verifies each Standard Webhooks signature with the official
 * `standardwebhooks` package; a request that fails it is answered 401 and not counted as a delivery.
 */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const byId = new Map<string, Delivery[]>();
  const shared = await startSharedReceiver({
    answer: (r) => (r.signatureError !== null ? 401 : opts.delayMs ? { status: 200, delayMs: opts.delayMs } : 200),
    // Recorded when the 200 is written: from here on the service may consider the message delivered.
    onAnswer: (r) => {
      if (r.answered !== 200) return;
      const d: Delivery = { t: r.at, to: String(r.body?.to ?? '') };
      const list = byId.get(r.id);
      if (list) list.push(d);
      else byId.set(r.id, [d]);
    },
    keepAliveTimeoutMs: 30_000,
  });
  return {
    url: shared.url,
    secret: shared.secret,
    byId,
    get badSignatures() { return shared.signatureFailures().length; },
    get requests() { return shared.seen.length; },
    duplicates() {
      return new Map([...byId].filter(([, list]) => list.length > 1));
    },
    close: () => shared.close(),
  };
}

// ---------------------------------------------------------------------------------------------------
// Operator API

export async function admin<T = any>(baseUrl: string, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(baseUrl + p, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface Tenant {
  companyId: number;
  key: string;
  automationId: number;
}

/** Creates `n` companies with a key, an active API automation and (given a receiver) a webhook channel. */
export async function createTenants(baseUrl: string, n: number, receiver?: Receiver): Promise<Tenant[]> {
  const out: Tenant[] = [];
  for (let i = 0; i < n; i++) {
    const c = await admin(baseUrl, 'POST', '/admin/companies', { name: `Faults ${i}`, subscription_active: true, default_country: 'DE' });
    const k = await admin(baseUrl, 'POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'faults' });
    const a = await admin(baseUrl, 'POST', `/admin/companies/${c.company_id}/automations`, { name: 'faults', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } });
    if (receiver) await admin(baseUrl, 'PUT', `/admin/companies/${c.company_id}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
    out.push({ companyId: c.company_id, key: k.api_key, automationId: a.automation_id });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Load

/** One request of the load and what became of it. */
export interface Sent {
  i: number;
  target: string;
  companyId: number;
  /** Date.now() just before the request was written and just after its answer was read. */
  start: number;
  end: number;
  /** HTTP status, or 0 when no answer came (connection refused or reset, or the timeout). */
  status: number;
  error?: string;
  timedOut?: boolean;
  batchId?: string;
  contacts?: number;
  retryAfter?: string | null;
  body?: string;
}

export interface LoadOptions {
  /** Base URLs of API processes; request i goes to targets()[i % n] (no balancer: round robin by the client). */
  targets: () => string[];
  tenants: Tenant[];
  /** Total requests (each of `contacts` distinct phones). Stops earlier when `stop()` says so. */
  requests: number;
  /** Requests started per second (all tenants together). */
  ratePerSecond: number;
  /** Most requests in flight at once. */
  maxInFlight?: number;
  contacts?: number;
  /** Bound of one request: a request not answered within it counts as a hang. */
  timeoutMs?: number;
  /** First phone number index; numbers are +49151 followed by 8 digits, unique per (run, request, contact). */
  phoneBase?: number;
  stop?: () => boolean;
}

/** A distinct valid German mobile number for index `n` (0..99,999,999). */
export function phoneOf(n: number): string {
  return `+49151${String(n).padStart(8, '0')}`;
}

/** Sends one trigger-automation request and records the outcome. */
export async function sendOne(target: string, tenant: Tenant, i: number, contacts: { phone: string; first_name: string }[], timeoutMs: number): Promise<Sent> {
  const rec: Sent = { i, target, companyId: tenant.companyId, start: Date.now(), end: 0, status: 0 };
  try {
    const res = await fetch(target + '/api/automations/send', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-api-key': tenant.key },
      body: JSON.stringify({ automation_id: tenant.automationId, contacts }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    rec.status = res.status;
    rec.retryAfter = res.headers.get('retry-after');
    if (res.status === 200) {
      const json = JSON.parse(text);
      rec.batchId = json.batch_id;
      rec.contacts = json.contacts;
      if (json.status !== 'accepted') rec.error = `200 without accepted: ${text}`;
    } else {
      rec.body = text.slice(0, 300);
    }
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    rec.timedOut = e.name === 'TimeoutError';
    rec.error = e.cause?.code ?? e.name ?? String(err);
  }
  rec.end = Date.now();
  return rec;
}

/**
 * Runs paced load: request k starts at t0 + k / ratePerSecond (later if `maxInFlight` are in flight),
 * tenants in round robin, targets in round robin. Resolves when every request has an outcome.
 */
export async function runLoad(opts: LoadOptions): Promise<Sent[]> {
  const contacts = opts.contacts ?? 50;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxInFlight = opts.maxInFlight ?? 64;
  const base = opts.phoneBase ?? 0;
  const results: Sent[] = [];
  const inFlight = new Set<Promise<void>>();
  const t0 = Date.now();
  for (let i = 0; i < opts.requests; i++) {
    if (opts.stop?.()) break;
    const due = t0 + (i * 1000) / opts.ratePerSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const targets = opts.targets();
    const target = targets[i % targets.length];
    const tenant = opts.tenants[i % opts.tenants.length];
    const people = Array.from({ length: contacts }, (_, j) => ({ phone: phoneOf(base + i * contacts + j), first_name: `P${i}_${j}` }));
    const p = sendOne(target, tenant, i, people, timeoutMs).then((r) => { results.push(r); });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  return results.sort((a, b) => a.i - b.i);
}

/** A compact summary of answers: `{"200": 180, "503": 12, "error:ECONNREFUSED": 8}`. */
export function summarize(sent: Sent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of sent) {
    const k = s.status ? String(s.status) : `error:${s.timedOut ? 'timeout' : s.error}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Checks on PostgreSQL

export interface DbState {
  batches: Map<string, { status: string; total: number }>;
  messages: Map<string, { batch_id: string; status: string; attempts: number }>;
}

export async function readState(url: string): Promise<DbState> {
  const batches = await sqlOn<{ batch_id: string; status: string; total: number }>(url, 'SELECT batch_id::text, status, total FROM batches', [], 30_000);
  const messages = await sqlOn<{ message_id: string; batch_id: string; status: string; attempts: number }>(url, 'SELECT message_id::text, batch_id::text, status, attempts FROM messages', [], 30_000);
  return {
    batches: new Map(batches.map((b) => [b.batch_id, { status: b.status, total: b.total }])),
    messages: new Map(messages.map((m) => [m.message_id, { batch_id: m.batch_id, status: m.status, attempts: m.attempts }])),
  };
}

/** Counts of what is not finished yet on PostgreSQL: batches not completed, messages pending. */
export async function unfinished(url: string): Promise<{ batches: number; pending: number; jobs: number }> {
  const [row] = await sqlOn<{ batches: number; pending: number; jobs: number }>(url, `
    SELECT (SELECT count(*)::int FROM batches WHERE status <> 'completed') AS batches,
           (SELECT count(*)::int FROM messages WHERE status = 'pending') AS pending,
           (SELECT count(*)::int FROM pgboss.job WHERE state IN ('created', 'retry', 'active')) AS jobs`, [], 5_000);
  return row;
}

/**
 * Reads batches and messages from a PGlite data directory that no process has open, in a child process
 * (bounded by `timeoutMs`; PGlite runs its recovery there if the last stop was unclean).
 */
export async function readPgliteState(pgliteDir: string, timeoutMs = 90_000): Promise<DbState> {
  const script = `
    import { PGlite } from '@electric-sql/pglite';
    const db = await PGlite.create(process.argv[1]);
    const batches = (await db.query("SELECT batch_id::text, status, total FROM batches")).rows;
    const messages = (await db.query("SELECT message_id::text, batch_id::text, status, attempts FROM messages")).rows;
    await db.close();
    process.stdout.write(JSON.stringify({ batches, messages }));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, pgliteDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.on('data', (b: Buffer) => err.push(b));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`reading ${pgliteDir} failed (exit ${code}): ${Buffer.concat(err).toString().slice(0, 2000)}`);
  const { batches, messages } = JSON.parse(Buffer.concat(out).toString()) as {
    batches: { batch_id: string; status: string; total: number }[];
    messages: { message_id: string; batch_id: string; status: string; attempts: number }[];
  };
  return {
    batches: new Map(batches.map((b) => [b.batch_id, { status: b.status, total: b.total }])),
    messages: new Map(messages.map((m) => [m.message_id, { batch_id: m.batch_id, status: m.status, attempts: m.attempts }])),
  };
}

export interface Verdict {
  acceptedBatches: number;
  acceptedMissing: string[];
  batchesNotCompleted: string[];
  messages: number;
  byStatus: Record<string, number>;
  /** Messages recorded `sent` that the receiver never answered 200 for (lost on the way). */
  sentNotReceived: string[];
  /** Messages whose batch was accepted that are not `sent`. */
  notSent: string[];
  /** Accepted batches whose message count differs from the contacts answered. */
  wrongSize: string[];
  duplicates: Map<string, Delivery[]>;
  receivedUnknown: number;
}

/**
 * Compares the accepted answers with the database and the receiver: every accepted batch exists, is
 * completed and has one message per answered contact, every message is `sent`, and every sent message
 * was received (every batch in the database is checked, answered or not).
 */
export function judge(sent: Sent[], state: DbState, receiver: Receiver): Verdict {
  const accepted = sent.filter((s) => s.status === 200 && s.batchId);
  const perBatch = new Map<string, number>();
  for (const m of state.messages.values()) perBatch.set(m.batch_id, (perBatch.get(m.batch_id) ?? 0) + 1);
  const byStatus: Record<string, number> = {};
  for (const m of state.messages.values()) byStatus[m.status] = (byStatus[m.status] ?? 0) + 1;
  const sentNotReceived: string[] = [];
  const notSent: string[] = [];
  for (const [id, m] of state.messages) {
    if (m.status !== 'sent') notSent.push(id);
    else if (!receiver.byId.has(id)) sentNotReceived.push(id);
  }
  let receivedUnknown = 0;
  for (const id of receiver.byId.keys()) if (!state.messages.has(id)) receivedUnknown++;
  return {
    acceptedBatches: accepted.length,
    acceptedMissing: accepted.filter((s) => !state.batches.has(s.batchId!)).map((s) => s.batchId!),
    batchesNotCompleted: [...state.batches].filter(([, b]) => b.status !== 'completed').map(([id]) => id),
    messages: state.messages.size,
    byStatus,
    sentNotReceived,
    notSent,
    wrongSize: accepted.filter((s) => perBatch.get(s.batchId!) !== s.contacts).map((s) => s.batchId!),
    duplicates: receiver.duplicates(),
    receivedUnknown,
  };
}

/** The verdict without the big lists, for messages. */
export function brief(v: Verdict): string {
  return JSON.stringify({
    acceptedBatches: v.acceptedBatches,
    acceptedMissing: v.acceptedMissing.length,
    batchesNotCompleted: v.batchesNotCompleted.length,
    messages: v.messages,
    byStatus: v.byStatus,
    sentNotReceived: v.sentNotReceived.length,
    notSent: v.notSent.length,
    wrongSize: v.wrongSize.length,
    duplicates: v.duplicates.size,
    receivedUnknown: v.receivedUnknown,
  });
}

// ---------------------------------------------------------------------------------------------------
// The database going away under load

/**
 * A TCP proxy in front of PostgreSQL that can fail like a database that dies: `cut()` resets every
 * connection (RST, as a killed server's sockets do) and refuses new ones; `restore()` accepts again on
 * the same port.
 */
export class PgProxy {
  readonly target: URL;
  port = 0;
  #server: net.Server | undefined;
  readonly #sockets = new Set<net.Socket>();

  constructor(targetUrl: string) {
    this.target = new URL(targetUrl);
  }

  /** The database URL through the proxy. */
  get url(): string {
    const u = new URL(this.target);
    u.port = String(this.port);
    return u.toString();
  }

  async start(): Promise<void> {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(Number(this.target.port || 5432), this.target.hostname);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.#server!.address() as AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server!.close(() => resolve()));
    for (const s of this.#sockets) s.resetAndDestroy();
    await closed;
  }

  async restore(): Promise<void> {
    await this.start();
  }
}

export interface OutageOptions {
  h: Harness;
  label: string;
  /** What the service processes connect to. */
  serviceDbUrl: string;
  /** What the test reads the outcome from (the database directly). */
  checkDbUrl: string;
  /** Makes the database unreachable / reachable again; `restore` resolves when it accepts connections. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  downMs: number;
  phoneBase: number;
}

/**
 * One API process and one worker, webhook deliveries to a local receiver, paced load of 20-contact
 * sends over 5 companies (10 per second). 5 s into the load the database goes away (`cut`), `downMs`
 * later it comes back (`restore`); the load goes on for 15 s more. Neither process is restarted by
 * the test (one that dies is started again afterwards, as a supervisor would, so that what was
 * accepted can still be checked — and the death is reported as a failure).
 *
 * Checks (all collected, then asserted together so that one run reports every finding): no service
 * process died; every answer is 200, 503 or 429 (no 500, no connection error, no request unanswered
 * within the 20 s bound); every 503 is {"detail":"Service unavailable"} with Retry-After; while the
 * database is unreachable every answer is 503 and /readyz says 503; the same processes answer 200
 * again after it is back (within 10 s every answer is 200 again); every accepted batch is processed:
 * completed, one message per contact, all sent and received.
 */
export async function outageScenario(o: OutageOptions): Promise<void> {
  const problems: string[] = [];
  const check = (ok: unknown, what: string) => { if (!ok) problems.push(what); };
  const receiver = await o.h.receiver({ delayMs: 10 });
  const api = o.h.proc({ name: 'api', role: 'api', databaseUrl: o.serviceDbUrl });
  const worker = o.h.proc({ name: 'worker', role: 'worker', databaseUrl: o.serviceDbUrl });
  await api.start();
  await worker.start();
  const tenants = await createTenants(api.url, 5, receiver);

  let stopLoad = false;
  const load = runLoad({
    targets: () => [api.url], tenants, requests: 100_000, ratePerSecond: 10, contacts: 20, maxInFlight: 64,
    timeoutMs: 20_000, phoneBase: o.phoneBase, stop: () => stopLoad,
  });
  await sleep(5_000);

  const downAt = Date.now();
  await o.cut();
  const cutAt = Date.now();
  await sleep(3_000);
  // /readyz while the database is away (the service bounds its own probe by 2 s).
  const ready = await fetch(api.url + '/readyz', { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  await sleep(Math.max(0, o.downMs - (Date.now() - cutAt)));
  const restoreAt = Date.now();
  await o.restore();
  const upAt = Date.now();
  await sleep(15_000);
  stopLoad = true;
  const sent = await load;
  const crashed = [api, worker].filter((p) => !p.alive).map((p) => `${p.opts.name} exited (code ${p.child!.exitCode}): ${p.tail.filter((l) => !l.startsWith('{')).slice(0, 8).join(' | ')}`);
  for (const p of [api, worker]) if (!p.alive) await p.start();

  const answers = summarize(sent);
  const before = sent.filter((s) => s.end < downAt);
  const during = sent.filter((s) => s.start >= cutAt && s.end <= restoreAt);
  const firstOk = sent.filter((s) => s.start >= upAt).find((s) => s.status === 200);
  const lastBad = sent.filter((s) => s.status !== 200).reduce((m, s) => Math.max(m, s.end), 0);
  const slowest503 = Math.max(0, ...sent.filter((s) => s.status === 503).map((s) => s.end - s.start));
  report(`${o.label}: answers ${JSON.stringify(answers)}; while unreachable ${JSON.stringify(summarize(during))}; /readyz then ${ready?.status}; `
    + `slowest 503 ${slowest503} ms; database unreachable ${((upAt - cutAt) / 1000).toFixed(1)} s; first 200 ${firstOk ? firstOk.end - upAt : 'never'} ms after it was back; `
    + `last non-200 answered ${lastBad - upAt} ms after it was back`);
  for (const c of crashed) report(`${o.label}: PROCESS DIED: ${c}`);

  check(crashed.length === 0, `no service process dies when the database goes away: ${crashed.join('; ')}`);
  check(before.length > 0 && before.every((s) => s.status === 200), 'all 200 before the outage');
  const wrong = sent.filter((s) => s.status !== 200 && s.status !== 503 && s.status !== 429);
  check(wrong.length === 0, `only 200, 503 (and 429) answers — no 500, no connection error, no hang: ${JSON.stringify(summarize(wrong))} ${wrong.slice(0, 3).map((s) => s.body ?? '').join(' ')}`);
  const bad503 = sent.filter((s) => s.status === 503 && (s.body !== '{"detail":"Service unavailable"}' || !/^\d+$/.test(s.retryAfter ?? '')));
  check(bad503.length === 0, `503 answers carry {"detail":"Service unavailable"} and Retry-After: ${bad503.slice(0, 3).map((s) => `${s.body} retry-after=${s.retryAfter}`).join('; ')}`);
  check(during.length > 0 && during.every((s) => s.status === 503), `every answer while the database is unreachable is 503: ${JSON.stringify(summarize(during))}`);
  check(ready?.status === 503 && /^\d+$/.test(ready.headers.get('retry-after') ?? ''), `/readyz is 503 with Retry-After meanwhile (got ${ready?.status})`);
  check(firstOk, 'the service answers 200 again after the database is back');
  check(lastBad - upAt < 10_000, `within 10 s every answer is 200 again (last non-200 ${lastBad - upAt} ms after)`);

  const t0 = Date.now();
  await waitFor('all batches completed', async () => {
    const u = await unfinished(o.checkDbUrl);
    return u.batches === 0 && u.pending === 0 ? u : undefined;
  }, 150_000, 500).catch((err) => problems.push((err as Error).message));
  const v = judge(sent, await readState(o.checkDbUrl), receiver);
  report(`${o.label}: verdict ${brief(v)}; everything final ${((Date.now() - upAt) / 1000).toFixed(1)} s after the database was back `
    + `(${((Date.now() - t0) / 1000).toFixed(1)} s after the load ended); ${v.duplicates.size} messages delivered twice`);
  check(v.acceptedMissing.length === 0, `every accepted batch is in the database (${v.acceptedMissing.length} missing)`);
  check(v.batchesNotCompleted.length === 0, `every batch completed (${v.batchesNotCompleted.length} not)`);
  check(v.wrongSize.length === 0, 'one message per accepted contact');
  check(v.notSent.length === 0, `every message sent (${v.notSent.length} not)`);
  check(v.sentNotReceived.length === 0, `every message recorded sent was received (${v.sentNotReceived.length} not)`);
  assert.deepEqual(problems, [], `${o.label}: ${problems.length} problem(s)`);
}
