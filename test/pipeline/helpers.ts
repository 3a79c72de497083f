/**
 * Helpers of the send-pipeline tests: shortcuts over the operator API (batch status and messages,
 * distinct phone numbers), a server with a database of its own on PostgreSQL, and a pipeline context for
 * driving the job handlers directly. The webhook receiver is the shared one (test/helpers/receiver.ts).
 */
import pg from 'pg';
import pino from 'pino';
import type { Clock } from '../../src/clock.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import { createProviderRegistry } from '../../src/providers/index.ts';
import type { PipelineContext } from '../../src/queue/handlers/context.ts';
import { eventually, startTestServer, type StartOptions, type TestServer } from '../helpers/server.ts';

export interface BatchAnswer {
  batch_id: string;
  kind: string;
  status: 'accepted' | 'processing' | 'completed';
  counts: { total: number; sent: number; delivered: number; read: number; failed: number; skipped: number; pending: number };
  ignored_contacts: number;
  created_at: string;
  completed_at: string | null;
}

/** GET /admin/batches/{id}, checking on every read that the counts add up to the total. */
export async function batchStatus(s: TestServer, batchId: string): Promise<BatchAnswer> {
  const b = await s.admin<BatchAnswer>('GET', `/admin/batches/${batchId}`);
  const c = b.counts;
  if (c.sent + c.failed + c.skipped + c.pending !== c.total) throw new Error(`counts do not add up: ${JSON.stringify(c)}`);
  return b;
}

/** Waits until the batch is completed; returns its status. */
export async function completed(s: TestServer, batchId: string, timeoutMs = 45_000): Promise<BatchAnswer> {
  return eventually(async () => {
    const b = await batchStatus(s, batchId);
    return b.status === 'completed' ? b : undefined;
  }, timeoutMs);
}

/** GET /admin/batches/{id}/messages. */
export async function messagesOf(s: TestServer, batchId: string): Promise<any[]> {
  return (await s.admin<{ messages: any[] }>('GET', `/admin/batches/${batchId}/messages`)).messages;
}

/** A distinct valid German mobile number for test item `i` of run `run`. */
export function phone(run: number, i: number): string {
  return `+49151${String(run % 1000).padStart(3, '0')}${String(i).padStart(5, '0')}`;
}


/**
 * Starts the test server for one pipeline test file, never one another file used (StartOptions `own`).
 * On PostgreSQL (TEST_DATABASE_URL) it gets a fresh database of its own, `<test database>_<name>`,
 * dropped again by close(): the workers of a test server
 * take every job in their database, so a shared database with another run's backlog (or another
 * engineer's) would make waits and exact counts depend on it. Without the right to create databases
 * it falls back to the shared one.
 */
export async function startPipelineServer(name: string, opts: StartOptions = {}): Promise<TestServer> {
  const shared = process.env.TEST_DATABASE_URL;
  if (!shared) return startTestServer({ ...opts, own: true });
  const url = new URL(shared);
  const dbName = `${url.pathname.slice(1)}_${name}`.replace(/[^a-z0-9_]/gi, '_').toLowerCase();
  const admin = new pg.Client({ connectionString: shared });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${dbName}`);
  } catch {
    await admin.end();
    return startTestServer({ ...opts, own: true });
  }
  await admin.end();
  url.pathname = '/' + dbName;
  const server = await startTestServer({ ...opts, env: { ...opts.env, DATABASE_URL: url.toString() } });
  const close = server.close.bind(server);
  server.close = async () => {
    await close();
    const c = new pg.Client({ connectionString: shared });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await c.end();
  };
  return server;
}

/**
 * A pipeline context over a test server's database and queue, for tests that drive the job handlers
 * directly (no workers): its own provider registry (close it with `ctx.providers.close()`), 4
 * deliveries in flight, one 5 s retry wait, a 5 s attempt timeout, and `clock`.
 */
export function directContext(s: TestServer, clock: Clock): PipelineContext {
  return {
    db: s.service.deps.database.db,
    boss: s.service.deps.boss,
    clock,
    logger: pino({ level: 'silent' }),
    providers: createProviderRegistry({ secrets: s.service.secrets, whatsappRatePerSecond: 80, whatsappPairIntervalMs: 6_000, db: s.service.deps.database.db, clock, addressPolicy: parseAddressPolicy('127.0.0.1'), deliveryTimeoutMs: 5_000 }),
    drain: new AbortController().signal,
    deliveryConcurrency: 4,
    retrySchedule: [5_000],
  };
}
