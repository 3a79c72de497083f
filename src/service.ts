/**
 * Assembles the service from a configuration: database (migrated), queue, authenticator, rate limiter,
 * HTTP app and, for the worker role, the background workers. `main.ts` runs it; tests start it on a
 * fresh database and talk to it over HTTP.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config, Role } from './config.ts';
import { openPglite, openPostgres, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { createDeliveryClient } from './delivery/client.ts';
import { parseAddressPolicy } from './delivery/network-guard.ts';
import { secretBox, type SecretBox } from './domain/secrets.ts';
import { argon2Hashing, type PasswordHashing } from './domain/users.ts';
import { buildApp } from './http/app.ts';
import { ApiKeyAuthenticator } from './http/auth.ts';
import { systemClock, type Clock } from './clock.ts';
import type { AppDeps } from './http/deps.ts';
import { AcceptStore } from './db/accept-store.ts';
import { AutomationLookups } from './domain/automations.ts';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { PgRateLimiter } from './http/rate-limit-pg.ts';
import { smtpMailer } from './providers/mail.ts';
import { createTemplatesApi } from './providers/whatsapp/templates-api.ts';
import { batchProcessJobs, jobQueue, startBoss, type Boss } from './queue/boss.ts';
// The workers and the event loop (job handlers, schedulers, the events-out loop) are imported only by
// the roles that run them: an API process never loads their modules.
import type { Workers } from './queue/workers.ts';
import type { CompiledSchemas } from './http/lazy-compilers.ts';
import type { EventLoop } from './queue/events/loop.ts';

export interface Service {
  readonly app: FastifyInstance;
  readonly deps: AppDeps;
  readonly secrets: SecretBox;
  /** The background workers (roles worker and all; undefined for the api role). */
  readonly workers: Workers | undefined;
  /** Stops taking requests, lets workers finish what they hold, closes the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  role?: Role;
  clock?: Clock;
  logger?: Logger;
  /** Overrides the rate limiter (the PostgreSQL one is chosen by default when DATABASE_URL is set). */
  rateLimiter?: RateLimiter;
  /**
   * Compiled request validators and response serializers to share with other services this process
   * starts (the tests start many); by default each service compiles its own.
   */
  compiledSchemas?: CompiledSchemas;
  /**
   * How console passwords are hashed; by default argon2id at the library's defaults (domain/users.ts
   * argon2Hashing). Tests give a cheaper cost (TEST_PASSWORD_HASH_COST).
   */
  passwordHashing?: PasswordHashing;
}

/** Reads a secret from `file` in the data directory, creating it (mode 0600) when missing. */
function fileSecret(dataDir: string, file: string, make: () => string, logger: Logger, what: string): string {
  const full = path.join(dataDir, file);
  try {
    return fs.readFileSync(full, 'utf8').trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const value = make();
    fs.writeFileSync(full, value + '\n', { mode: 0o600, flag: 'wx' });
    logger.warn({ path: full }, `${what} was not set; generated one and stored it at ${full}`);
    return value;
  }
}

/** Opens the database, waiting for PostgreSQL when it is not reachable yet (up to `waitMs`). */
async function openDatabase(config: Config, logger: Logger, waitMs = 60_000): Promise<Database> {
  const driverTricks = config.driverTricks;
  if (!config.databaseUrl) return openPglite(config.dataDir, { driverTricks });
  // Statement time limits (docs/operations.md "Statement time limits"): requests and background work each their own.
  const database = await openPostgres(config.databaseUrl, config.dbPoolMax, {
    driverTricks, statementTimeoutMs: config.dbStatementTimeoutMs, backgroundStatementTimeoutMs: config.dbBackgroundStatementTimeoutMs,
  });
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await database.ping();
      return database;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      logger.warn({ attempt, err: (err as Error).message }, 'database not reachable yet; retrying');
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * attempt)));
    }
  }
}

/** Starts the service for the configuration; the HTTP app is built but not listening. */
export async function startService(config: Config, opts: ServiceOptions = {}): Promise<Service> {
  const role = opts.role ?? 'all';
  const logger = opts.logger ?? pino({
    level: config.logLevel,
    base: { service: 'cms', role },
    redact: ['req.headers.authorization', 'req.headers["service-api-key"]', '*.access_token', '*.secret'],
  });
  const database = await openDatabase(config, logger);
  const applied = await migrate(database);
  if (applied.length) logger.info({ versions: applied }, 'migrations applied');

  const adminToken = config.adminToken ?? fileSecret(config.dataDir, 'admin-token', () => 'cms_admin_' + randomBytes(24).toString('base64url'), logger, 'ADMIN_TOKEN');
  const secrets = secretBox(config.secretsKey ?? fileSecret(config.dataDir, 'secrets-key', () => randomBytes(32).toString('base64url'), logger, 'SECRETS_KEY'));
  // pg-boss's own timers (supervision, maintenance) are background work too.
  const boss: Boss = await database.runInBackground(() => startBoss(database, { poolMax: Math.max(2, Math.ceil(config.dbPoolMax / 2)), statementTimeoutMs: config.dbBackgroundStatementTimeoutMs }));
  const clock = opts.clock ?? systemClock;
  const auth = new ApiKeyAuthenticator(database.db, { clock });
  // One process owns an embedded database, so an in-memory log is exact there; on PostgreSQL the log
  // is shared by every API process.
  const rateLimiter: RateLimiter = opts.rateLimiter ?? (database.kind === 'postgres' ? new PgRateLimiter(database) : new MemoryRateLimiter());
  const addressPolicy = parseAddressPolicy(config.providerAllowedHosts);
  // The one outbound HTTP client (delivery/client.ts): guard, agents, answer caps, classifier; every
  // request to the outside (providers, events, test events, Meta's template endpoints) goes through it.
  const delivery = createDeliveryClient({ policy: addressPolicy, timeoutMs: config.deliveryTimeoutMs, connections: { events: Math.max(config.eventConcurrency, 16) } });
  // The durable accept and the domain's job queue: the queue's side is handed in, the domain never imports it.
  const acceptor = new AcceptStore(database, batchProcessJobs(boss));
  const jobs = jobQueue(boss);
  const automationLookups = new AutomationLookups(database.db, clock);
  const mailer = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom!) : undefined;
  const passwords = opts.passwordHashing ?? argon2Hashing();
  const catalogue = { api: createTemplatesApi({ client: delivery }), openSecret: (s: string) => secrets.open(s), clock };
  const deps: AppDeps = { config, database, boss, acceptor, jobs, automationLookups, rateLimiter, auth, clock, logger, adminToken, passwords, sealSecret: (s) => secrets.seal(s), openSecret: (s) => secrets.open(s), addressPolicy, delivery, catalogue, mailer, compiledSchemas: opts.compiledSchemas };
  const app = await buildApp(deps);
  // Requests before background work (db/foreground-gate.ts): the gate knows which requests are in flight.
  app.server.prependListener('request', (_req, res) => { res.once('close', database.gate.requestStarted()); });
  let workers: Workers | undefined;
  let eventLoop: EventLoop | undefined;
  if (role === 'worker' || role === 'all') {
    const [{ startWorkers }, { startEventLoop }] = await Promise.all([import('./queue/workers.ts'), import('./queue/events/loop.ts')]);
    // Background work: on the embedded database its statements give way to requests' (db/foreground-gate.ts).
    workers = await database.runInBackground(() => startWorkers({ database, boss, logger, clock, secrets, config, delivery }));
    // Events out to companies (docs/events.md): their own loop, apart from message delivery.
    eventLoop = database.runInBackground(() => startEventLoop({ database, logger, clock, secrets, config, delivery }));
  }
  let closed = false;
  return {
    app,
    deps,
    secrets,
    workers,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await workers?.stop();
      await eventLoop?.stop();
      await delivery.close();
      await boss.stop({ graceful: true, timeout: 10_000 }).catch((err) => logger.warn({ err }, 'queue stop'));
      await auth.close();
      mailer?.close();
      await rateLimiter.close?.();
      await database.close();
    },
  };
}
