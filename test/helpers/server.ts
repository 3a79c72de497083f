/**
 * Starts the real service for a test: on an embedded PGlite database of its own (a copy of a migrated
 * template, see ensurePgliteTemplate), or on PostgreSQL when
 * TEST_DATABASE_URL is set (each test creates its own companies, so runs can share that database).
 * The server listens on 127.0.0.1 on a free port; tests talk to it over HTTP with `fetch`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { listMigrations } from '../../src/db/migrate.ts';
import type { Clock } from '../../src/clock.ts';
import type { RateLimiter } from '../../src/http/rate-limit.ts';
import { CompiledSchemas } from '../../src/http/lazy-compilers.ts';
import { startService, type Service } from '../../src/service.ts';
import { argon2Hashing, TEST_PASSWORD_HASH_COST } from '../../src/domain/users.ts';

export const ADMIN_TOKEN = 'test-admin-token-4Jx9qLw2Zr7Vb5Nc';

/**
 * The password hashing of test servers: console passwords of test users are hashed at a low cost
 * (src/domain/users.ts TEST_PASSWORD_HASH_COST): hundreds of users are made and signed in. `cms`
 * processes that tests start keep the service's cost.
 */
export const TEST_PASSWORDS = argon2Hashing(TEST_PASSWORD_HASH_COST);

export interface TestServer {
  url: string;
  service: Service;
  /** Which database the test runs on. */
  kind: 'pglite' | 'postgres';
  /** Calls the operator API; throws on an unexpected status. */
  admin<T = any>(method: string, path: string, body?: unknown, expectStatus?: number): Promise<T>;
  /** Calls the public API with a key; returns status, headers and parsed body (text kept too). */
  api(path: string, opts?: { key?: string; body?: unknown; raw?: string | Buffer; contentType?: string | null; headers?: Record<string, string> }): Promise<ApiAnswer>;
  /** Creates a company (subscription active by default), an API key, and returns both. */
  company(overrides?: Record<string, unknown>): Promise<{ companyId: number; key: string; keyId: number }>;
  close(): Promise<void>;
}

export interface ApiAnswer { status: number; headers: Headers; text: string; json: any }

export interface StartOptions {
  clock?: Clock;
  rateLimiter?: RateLimiter;
  role?: 'api' | 'worker' | 'all';
  env?: Record<string, string>;
  /** A server of its own even when the process pools servers (see enableServerPool). */
  own?: boolean;
  /** The service's logger (default: pino at LOG_LEVEL, on stdout); a server with one is never pooled. */
  logger?: pino.Logger;
}

/** A RAM file system when there is one (/dev/shm writable), else the OS temporary directory. */
function ramOrTmp(): string {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
}

/**
 * Where a test's database directory goes: CMS_TEST_TMPDIR (test/run.ts sets one per run and removes
 * it afterwards, so a file that dies leaves nothing behind), else /dev/shm when it is writable (a RAM
 * file system: copying the 41 MB template and PGlite's writes and fsyncs cost no disk I/O, which took
 * seconds per file on a busy machine), else the OS temporary directory.
 */
export function testTmpDir(): string {
  return process.env.CMS_TEST_TMPDIR || ramOrTmp();
}

/**
 * PostgreSQL settings the test template adds to PGlite's postgresql.conf (so every test database and
 * every `cms serve` a test seeds from it has them). They make tests cheaper, not different: measured
 * on 3 groups of test files (admin, events, receipts: 107 tests) in one process, 43.5 s of CPU before,
 * 36 s after.
 * - `shared_buffers` 16MB instead of PGlite's 128MB: PGlite zero-fills its whole shared memory when it
 *   starts (a memset of 128 MB in WebAssembly, about 0.1 s of CPU per test server, and RSS that no test
 *   database needs), and `max_connections` sizes more of it (single-user mode has one connection);
 * - `full_page_writes` off and `wal_level` minimal: a fresh copy of the template writes a full image of
 *   every page it touches to the WAL after the checkpoint. Full-page images protect against pages torn
 *   by an operating-system crash, not by a process that is killed (its writes are in the kernel), which
 *   is what the crash tests do.
 * `synchronous_commit` stays on: single-user PGlite has no WAL writer, so a commit that is not flushed
 * would be lost when a test kills the process, and the crash tests check that nothing accepted is.
 */
export const TEST_PGLITE_SETTINGS = ['shared_buffers = 16MB', 'max_connections = 10', 'full_page_writes = off', 'wal_level = minimal', 'max_wal_senders = 0'];

/** Templates not used for this long (another set of migrations) are removed when a new one is made. */
const TEMPLATE_UNUSED_MS = 3 * 3600_000;

/**
 * A migrated embedded database to copy from (PGlite only), made once per set of migrations and reused
 * by every test file and run: creating and migrating a fresh PGlite (and pg-boss's schema) takes
 * seconds, copying its directory a fraction of that. The directory (in /dev/shm or the OS temporary
 * directory) is keyed by a hash of the migration files, pg-boss's version and TEST_PGLITE_SETTINGS,
 * built aside and renamed into place, so test files starting together never see half of one; test/run.ts makes it before the
 * files start. Resolves to undefined with CMS_TEST_TEMPLATE=0 (every test file migrates its own database).
 */
export async function ensurePgliteTemplate(): Promise<string | undefined> {
  if (process.env.CMS_TEST_TEMPLATE === '0') return undefined;
  const hash = createHash('sha256');
  for (const m of listMigrations()) hash.update(`${m.version}:${m.sql}\n`);
  hash.update(String((createRequire(import.meta.url)('pg-boss/package.json') as { version: string }).version));
  hash.update(TEST_PGLITE_SETTINGS.join('\n'));
  const root = ramOrTmp();
  const name = `cms-test-template-${hash.digest('hex').slice(0, 16)}`;
  const dir = path.join(root, name);
  if (fs.existsSync(path.join(dir, 'pglite'))) {
    const now = new Date();
    fs.utimesSync(dir, now, now); // in use: see removeStaleTemplates
    return dir;
  }
  const build = fs.mkdtempSync(`${dir}-build-`);
  const config = loadConfig({ DATA_DIR: build, ADMIN_TOKEN, SECRETS_KEY: 'test-secrets-key-8Hm3Tq6Yk1Pd9Wf2', LOG_LEVEL: 'silent' });
  const service = await startService(config, { role: 'api', logger: pino({ level: 'silent' }) });
  await service.close();
  fs.appendFileSync(path.join(build, 'pglite', 'postgresql.conf'), `\n# test/helpers/server.ts TEST_PGLITE_SETTINGS\n${TEST_PGLITE_SETTINGS.join('\n')}\n`);
  try {
    fs.renameSync(build, dir);
  } catch {
    fs.rmSync(build, { recursive: true, force: true }); // another test file made it first
  }
  removeStaleTemplates(root, name);
  return dir;
}

/** Removes the templates in `root` other than `keep` that no test used for TEMPLATE_UNUSED_MS (they hold RAM in /dev/shm). */
function removeStaleTemplates(root: string, keep: string): void {
  for (const entry of fs.readdirSync(root)) {
    if (!entry.startsWith('cms-test-template-') || entry === keep) continue;
    const p = path.join(root, entry);
    try {
      if (Date.now() - fs.statSync(p).mtimeMs > TEMPLATE_UNUSED_MS) fs.rmSync(p, { recursive: true, force: true });
    } catch { /* another run removed it */ }
  }
}

/**
 * Prepares `dataDir` (a DATA_DIR) for a service started by a test, in this process or as a child
 * process: on PGlite, a copy of the migrated template goes to `dataDir/pglite`, so the service starts
 * without creating and migrating a database (about 5 s of CPU in a child process). For a service
 * on PGlite only (the caller knows); nothing with CMS_TEST_TEMPLATE=0. A fresh start on an empty
 * DATA_DIR is what test/api/start.process.test.ts and ensurePgliteTemplate go through.
 */
export async function seedDataDir(dataDir: string): Promise<void> {
  const template = await ensurePgliteTemplate();
  if (template) fs.cpSync(path.join(template, 'pglite'), path.join(dataDir, 'pglite'), { recursive: true });
}

/**
 * Node flags for the `cms` processes that tests start (`spawn(process.execPath, [...CHILD_NODE_FLAGS,
 * BIN, 'serve'])`): V8 compiles PGlite's WebAssembly with its baseline compiler only, as test/run.ts
 * does for the test processes. Its optimising compiler spends about 1.5 s of CPU and several hundred MB
 * on the 8 MB module in the background, which a process that lives a few seconds never earns back. It
 * changes how fast the same code runs, nothing else.
 */
export const CHILD_NODE_FLAGS: readonly string[] = ['--liftoff-only'];

/**
 * The validators and serializers compiled by this test process's servers, shared by all of them (each
 * would compile the same schemas again; see src/http/lazy-compilers.ts).
 */
const COMPILED_SCHEMAS = new CompiledSchemas();

/** Servers that files of this process have closed, by role, ready for the next file; undefined: no pool. */
let pool: Map<string, TestServer[]> | undefined;

/**
 * From now on this process reuses servers between test files (test/helpers/run-files.ts calls it, so
 * only `npm test`'s processes of several files do): a server started with the default options, or
 * only a `role` (`all` or `api`), is not closed by its `close()` but kept, and the next such
 * startTestServer call of the same role gets it instead of a new one (about 0.45 s of CPU less each: a
 * copy of the template, PGlite's start, pg-boss's queues, the Fastify app). What a file then shares
 * with the files before it in the process is what files already share on PostgreSQL (one database for
 * every file): the companies, users and jobs other files made. Every test makes its own companies and
 * reads only what belongs to them, and `npm test` on PostgreSQL checks that a file does not depend on
 * an empty database. Before a kept server is handed out again, the sign-in failures of the previous file
 * are removed (they are counted per client address, and every test client is 127.0.0.1), as a new
 * database would have none. Servers with a clock, a rate limiter, an environment or `own` (the pipeline
 * tests, test/pipeline/helpers.ts) are never kept. {@link closeServerPool} closes the kept servers.
 * Not on PostgreSQL (TEST_DATABASE_URL): there every server works the one shared database, and the
 * workers of a kept server would take the jobs of the next files' servers (with another clock and
 * other settings).
 */
export function enableServerPool(): void {
  if (process.env.TEST_DATABASE_URL) return;
  pool ??= new Map();
}

/** Closes the servers the pool keeps and stops pooling (after the last file of the process). */
export async function closeServerPool(): Promise<void> {
  const kept = [...(pool?.values() ?? [])].flat();
  pool = undefined;
  for (const s of kept) await s.close();
}

/**
 * Starts a server for one test file (or test); in a process that pools servers (enableServerPool), a
 * server with default options may be one an earlier file closed.
 */
export async function startTestServer(opts: StartOptions = {}): Promise<TestServer> {
  const role = opts.role ?? 'all';
  if (!pool || opts.clock || opts.rateLimiter || opts.env || opts.own || opts.logger || role === 'worker') return startServer(opts);
  const kept = pool.get(role)?.pop();
  if (kept) {
    await kept.service.deps.database.db.deleteFrom('console_login_failures').execute();
    return lend(kept, role);
  }
  return lend(await startServer(opts), role);
}

/** `server` with a `close()` that gives it back to the pool (once) instead of closing it. */
function lend(server: TestServer, role: string): TestServer {
  let returned = false;
  return {
    ...server,
    async close() {
      if (returned) return;
      returned = true;
      if (!pool) return server.close();
      pool.set(role, [...(pool.get(role) ?? []), server]);
    },
  };
}

/** Starts a new server (startTestServer without the pool). */
async function startServer(opts: StartOptions): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-test-'));
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl && !opts.env?.DATABASE_URL) await seedDataDir(dataDir);
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    SECRETS_KEY: 'test-secrets-key-8Hm3Tq6Yk1Pd9Wf2',
    // Tests deliver to receivers on this machine.
    PROVIDER_ALLOWED_HOSTS: '127.0.0.1,localhost',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...(pgUrl ? { DATABASE_URL: pgUrl } : {}),
    // `DB_DRIVER_TRICKS=off npm test` runs the suite on the plain path (db/driver-tricks.ts).
    ...(process.env.DB_DRIVER_TRICKS ? { DB_DRIVER_TRICKS: process.env.DB_DRIVER_TRICKS } : {}),
    ...opts.env,
  });
  const service = await startService(config, {
    role: opts.role ?? 'all',
    clock: opts.clock,
    rateLimiter: opts.rateLimiter,
    logger: opts.logger ?? pino({ level: config.logLevel }),
    compiledSchemas: COMPILED_SCHEMAS,
    passwordHashing: TEST_PASSWORDS,
  });
  const url = await service.app.listen({ port: 0, host: '127.0.0.1' });

  const admin = async (method: string, p: string, body?: unknown, expectStatus?: number) => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const ok = expectStatus !== undefined ? res.status === expectStatus : res.status < 300;
    if (!ok) throw new Error(`${method} ${p} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const api = async (p: string, o: Parameters<TestServer['api']>[1] = {}): Promise<ApiAnswer> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key !== undefined) headers['service-api-key'] = o.key;
    if (o.contentType !== null) headers['content-type'] = o.contentType ?? 'application/json';
    const res = await fetch(url + p, { method: 'POST', headers, body: (o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body))) as BodyInit | undefined });
    const text = await res.text();
    let json: unknown;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: res.status, headers: res.headers, text, json };
  };

  return {
    url,
    service,
    kind: service.deps.database.kind,
    admin,
    api,
    async company(overrides = {}) {
      const c = await admin('POST', '/admin/companies', { name: 'Test Co', subscription_active: true, ...overrides });
      const k = await admin('POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'test' });
      return { companyId: c.company_id, key: k.api_key, keyId: k.key_id };
    },
    async close() {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A clock the test moves by hand (milliseconds since the epoch). */
export class FakeClock implements Clock {
  #now: number;
  constructor(start = Date.parse('2026-01-05T10:00:00Z')) { this.#now = start; }
  now(): number { return this.#now; }
  advance(ms: number): void { this.#now += ms; }
  set(ms: number): void { this.#now = ms; }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
