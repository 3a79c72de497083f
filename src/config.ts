/**
 * Configuration: the only module that reads `process.env`. Parsed once, returned frozen.
 *
 * Variables: PORT (default 8000), HOST (default 127.0.0.1), DATA_DIR (default ./data,
 * the embedded PGlite database and the generated admin token), DATABASE_URL (PostgreSQL; when set,
 * PGlite is not used), ADMIN_TOKEN (operator bearer token; generated into DATA_DIR when unset; a weak
 * value is refused, see checkSecretStrength),
 * LOG_LEVEL (pino level, default info), SECRETS_KEY (key that encrypts provider secrets at rest;
 * generated into DATA_DIR when unset), DB_POOL_MAX (PostgreSQL pool size, default 10),
 * WORKER_CONCURRENCY (message chunks processed at once per worker process, default 4),
 * WORKER_SEMI_SPACE_MB (the V8 young generation of a `--role worker` process, default 32; 0 keeps
 * Node's flags; docs/operations.md "Sizing"),
 * WHATSAPP_RATE_PER_SECOND (messages per second per WhatsApp number when its channel has no
 * throughput_per_second, default 80), WHATSAPP_PAIR_INTERVAL (least time between two sends to one
 * recipient from one WhatsApp number, a duration from `0ms` to `1h`, default `6s`), WHATSAPP_PACING_MARGIN (allowance
 * for the way of a request to Meta in the throughput pacing, a duration from `0ms` to `1s`, default
 * `40ms`; docs/whatsapp.md "Pacing and limits"), PROVIDER_ALLOWED_HOSTS
 * (hosts and CIDR ranges of private networks that webhook/WhatsApp URLs may point at; default none).
 *
 * The delivery loop (docs/decisions.md#8-retries, docs/events.md), durations as a number and a unit (`ms`, `s`, `m`,
 * `h`, `d`), parsed by the `ms` library: DELIVERY_RETRY_SCHEDULE (waits after the 1st, 2nd, ... failed
 * attempt of a message, default `5s,30s,2m,10m,30m,1h,2h,4h,8h,8h`), DELIVERY_TIMEOUT (one attempt's
 * limit, default `15s`, from `100ms` to `10m`, also for event deliveries), EVENT_RETRY_SCHEDULE (default
 * `5s,5m,30m,2h,5h,10h,10h`; each schedule 1 to 100 waits of `1ms` to `7d`), EVENT_RETENTION (events
 * and attempts kept, default `30d`, from `1d` to `36500d`),
 * EVENT_CONCURRENCY (event deliveries in flight per endpoint and process, default 8).
 * WHATSAPP_TEMPLATE_SYNC (default `1h`, from `1m` to `7d`): how often the workers sync each WhatsApp company's template
 * catalogue with Meta (docs/whatsapp.md "Template catalogue").
 * MESSAGE_RETENTION (default `400d`, from `1d` to `36500d`): finished batches, their messages and
 * inbound messages older than this are deleted (docs/operations.md "Retention").
 * PGLITE_VACUUM_INTERVAL (default `5s`, from `100ms` to `1d`; `0s` turns it off): how often the workers VACUUM the tables a
 * send rewrites on the embedded database, which has no autovacuum (docs/operations.md).
 *
 * Mail (docs/console.md#email): SMTP_URL (`smtp://user:pass@host:587` or `smtps://…:465`; unset: no mail is
 * sent and the console works as without it) and MAIL_FROM (the sender, `Name <address>` or an address;
 * required with SMTP_URL).
 *
 * DB_DRIVER_TRICKS (`on` or `off`, default `on`): the node-postgres and pg-boss tricks of the accept
 * path (db/driver-tricks.ts); `off` runs on the libraries' documented APIs only.
 *
 * Statement time limits on PostgreSQL (docs/operations.md "Statement time limits", docs/security.md
 * "Statement time limits and pages"): DB_STATEMENT_TIMEOUT (default `10s`, from `100ms` to `10m`) for
 * every statement that serves a request, DB_BACKGROUND_STATEMENT_TIMEOUT (default `5m`, from `1s` to
 * `24h`) for the workers' and pg-boss's statements. Not applied on the embedded database.
 */
import path from 'node:path';
import ms from 'ms';

export type Role = 'api' | 'worker' | 'all';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly adminToken: string | undefined;
  readonly logLevel: string;
  readonly secretsKey: string | undefined;
  readonly dbPoolMax: number;
  readonly workerConcurrency: number;
  /**
   * WORKER_SEMI_SPACE_MB: the V8 young generation's semi-space (MB) a `--role worker` process runs
   * with (src/cli/worker-heap.ts); 0 leaves Node's flags as given.
   */
  readonly workerSemiSpaceMb: number;
  readonly whatsappRatePerSecond: number;
  /** WHATSAPP_PAIR_INTERVAL (ms): least time between two sends to one recipient from one number. */
  readonly whatsappPairIntervalMs: number;
  /** WHATSAPP_PACING_MARGIN (ms): allowance for a request's way to Meta in the throughput pacing. */
  readonly whatsappPacingMarginMs: number;
  /** Hosts and CIDR ranges providers may reach although private (PROVIDER_ALLOWED_HOSTS). */
  readonly providerAllowedHosts: string | undefined;
  /** Waits (ms) after the 1st, 2nd, ... failed delivery attempt of a message; after the last, failed. */
  readonly deliveryRetrySchedule: readonly number[];
  /** One delivery attempt's limit (ms), connect to last byte; messages and events. */
  readonly deliveryTimeoutMs: number;
  /** Waits (ms) after the 1st, 2nd, ... failed attempt of an event delivery. */
  readonly eventRetrySchedule: readonly number[];
  /** How long events and their attempts are kept (ms). */
  readonly eventRetentionMs: number;
  /** Event deliveries in flight at once per endpoint, per worker process. */
  readonly eventConcurrency: number;
  /** How often (ms) the workers sync each WhatsApp company's template catalogue (WHATSAPP_TEMPLATE_SYNC). */
  readonly whatsappTemplateSyncMs: number;
  /** SMTP_URL: where invitations and password resets are emailed; undefined: no mail. */
  readonly smtpUrl: string | undefined;
  /** MAIL_FROM: the sender of those emails (set whenever smtpUrl is). */
  readonly mailFrom: string | undefined;
  /** DB_DRIVER_TRICKS: the tricks of db/driver-tricks.ts on (default) or off. */
  readonly driverTricks: boolean;
  /** MESSAGE_RETENTION (ms): how long finished batches, their messages and inbound messages are kept. */
  readonly messageRetentionMs: number;
  /** PGLITE_VACUUM_INTERVAL (ms; 0 = off): the embedded database's VACUUM period (src/db/embedded-vacuum.ts). */
  readonly pgliteVacuumIntervalMs: number;
  /** DB_STATEMENT_TIMEOUT (ms): PostgreSQL's `statement_timeout` of every statement serving a request. */
  readonly dbStatementTimeoutMs: number;
  /** DB_BACKGROUND_STATEMENT_TIMEOUT (ms): PostgreSQL's `statement_timeout` of background work (workers, pg-boss). */
  readonly dbBackgroundStatementTimeoutMs: number;
}

/** Thrown when an environment variable has a value that cannot be used; the message names it. */
export class ConfigError extends Error {}

/** pino's levels, and `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** `LOG_LEVEL` (default `info`); ConfigError naming the setting for anything but a pino level. */
function logLevel(value: string | undefined): string {
  if (value === undefined) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(value)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(value.slice(0, 40))}`);
  return value;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

const DURATION = /^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)\s*$/;

/** A duration with its unit (`15s`, `2m`, `30d`) in ms; ConfigError names the variable otherwise. */
export function parseDuration(name: string, raw: string): number {
  const value = DURATION.test(raw) ? ms(raw.trim().replace(/\s+/g, '') as ms.StringValue) : undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`${name} must be a duration such as 500ms, 15s, 2m, 1h or 30d, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function duration(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const raw = env[name];
  return parseDuration(name, raw === undefined || raw === '' ? fallback : raw);
}

/** WHATSAPP_PACING_MARGIN: 0 to 1 s (a larger allowance would leave most of a second's slots unused). */
function pacingMargin(env: NodeJS.ProcessEnv): number {
  const value = duration(env, 'WHATSAPP_PACING_MARGIN', '40ms');
  if (value < 0 || value > 1000) {
    throw new ConfigError(`WHATSAPP_PACING_MARGIN must be a duration from 0ms to 1s (such as 40ms), got ${JSON.stringify(env.WHATSAPP_PACING_MARGIN)}`);
  }
  return value;
}

/** MESSAGE_RETENTION's bounds: a day (less would delete what operators still look at) to 100 years. */
const RETENTION_MIN_MS = 86_400_000;
const RETENTION_MAX_MS = 36_500 * 86_400_000;

function retention(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const value = duration(env, name, fallback);
  if (value < RETENTION_MIN_MS || value > RETENTION_MAX_MS) {
    throw new ConfigError(`${name} must be a duration from 1d to 36500d (such as 90d or 400d), got ${JSON.stringify(env[name])}`);
  }
  return value;
}

/**
 * A statement time limit (DB_STATEMENT_TIMEOUT, DB_BACKGROUND_STATEMENT_TIMEOUT) in whole ms, from
 * `min` to `max` (given as text for the message); ConfigError naming the variable otherwise. There is
 * no "off": every statement on PostgreSQL has a limit.
 */
function statementTimeout(env: NodeJS.ProcessEnv, name: string, fallback: string, min: string, max: string): number {
  const value = Math.round(duration(env, name, fallback));
  if (value < parseDuration(name, min) || value > parseDuration(name, max)) {
    throw new ConfigError(`${name} must be a duration from ${min} to ${max} (such as ${fallback}), got ${JSON.stringify(env[name])}`);
  }
  return value;
}

/**
 * A duration setting in ms from `min` to `max` (durations as text, also for the message), or exactly
 * 0 when `zeroOff` (the setting's "off"); ConfigError naming the variable otherwise
 * (docs/security.md "Durations and times").
 */
function durationIn(env: NodeJS.ProcessEnv, name: string, fallback: string, min: string, max: string, zeroOff = false): number {
  const value = duration(env, name, fallback);
  if (zeroOff && value === 0) return 0;
  if (value < parseDuration(name, min) || value > parseDuration(name, max)) {
    throw new ConfigError(`${name} must be a duration from ${min} to ${max}${zeroOff ? ' (or 0s: off)' : ''}, such as ${fallback}; got ${JSON.stringify(env[name])}`);
  }
  return value;
}

/** Most waits a retry schedule may list (DELIVERY_RETRY_SCHEDULE, EVENT_RETRY_SCHEDULE). */
const SCHEDULE_MAX_WAITS = 100;

/**
 * A retry schedule: 1 to 100 comma-separated waits, each a duration from 1ms to 7d; ConfigError
 * naming the variable otherwise (docs/security.md "Durations and times").
 */
function schedule(env: NodeJS.ProcessEnv, name: string, fallback: string): readonly number[] {
  const raw = env[name];
  const list = (raw === undefined || raw === '' ? fallback : raw).split(',');
  if (list.length > SCHEDULE_MAX_WAITS) throw new ConfigError(`${name} must list at most ${SCHEDULE_MAX_WAITS} waits, got ${list.length}`);
  return Object.freeze(list.map((item) => {
    const value = parseDuration(name, item);
    if (value < 1 || value > 7 * 86_400_000) throw new ConfigError(`${name} must list waits from 1ms to 7d each, such as ${fallback}; got ${JSON.stringify(item.trim())}`);
    return value;
  }));
}

function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got ${JSON.stringify(env[name])}`);
}

/** Words that mark a value copied from an example rather than generated (compared without case or punctuation). */
const PLACEHOLDERS = ['changeme', 'changethis', 'replaceme', 'placeholder', 'yoursecret', 'yourtoken', 'yourkey', 'password', 'example', 'xxxxxxxx', '12345678', 'qwerty'];

/** The one command the refusal suggests. */
export const GENERATE_SECRET_COMMAND = 'openssl rand -base64 32';

/**
 * Refuses a weak ADMIN_TOKEN or SECRETS_KEY: fewer than 32 characters (what
 * `openssl rand -base64 32` prints has 44; a 32-byte key in hex has 64), fewer than 8 different
 * characters (`aaaa...`, `abab...`), or a placeholder from an example (`changeme`, `your-secret`,
 * `password`, `xxxxxxxx` ...). A heuristic against the usual mistakes, not an entropy measurement: a
 * value from the generating command always passes. Throws ConfigError naming the variable and the
 * command; an unset value is fine (the service generates one into DATA_DIR).
 */
export function checkSecretStrength(name: string, value: string | undefined): void {
  if (value === undefined) return;
  const folded = value.toLowerCase().replace(/[^a-z0-9]/g, '');
  const placeholder = PLACEHOLDERS.find((p) => folded.includes(p));
  const problem = placeholder !== undefined
    ? `looks like a placeholder (it contains "${placeholder}")`
    : value.length < 32
      ? `is too short (${value.length} characters; at least 32 random characters are needed)`
      : new Set(value).size < 8
        ? `is not random enough (only ${new Set(value).size} different characters)`
        : undefined;
  if (problem) {
    throw new ConfigError(`${name} ${problem}. Generate a good one with: ${GENERATE_SECRET_COMMAND}  (or: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64'))")`);
  }
}

/**
 * Reads the configuration from `env` (default `process.env`). Throws ConfigError on an unusable value,
 * including a weak ADMIN_TOKEN or SECRETS_KEY (checkSecretStrength).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const blank = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
  checkSecretStrength('ADMIN_TOKEN', blank(env.ADMIN_TOKEN));
  checkSecretStrength('SECRETS_KEY', blank(env.SECRETS_KEY));
  return Object.freeze({
    port: int(env, 'PORT', 8000, 0, 65535),
    host: blank(env.HOST) ?? '127.0.0.1',
    dataDir: path.resolve(blank(env.DATA_DIR) ?? './data'),
    databaseUrl: blank(env.DATABASE_URL),
    adminToken: blank(env.ADMIN_TOKEN),
    logLevel: logLevel(blank(env.LOG_LEVEL)),
    secretsKey: blank(env.SECRETS_KEY),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 4, 1, 256),
    workerSemiSpaceMb: int(env, 'WORKER_SEMI_SPACE_MB', 32, 0, 1024),
    whatsappRatePerSecond: int(env, 'WHATSAPP_RATE_PER_SECOND', 80, 1, 100000),
    whatsappPairIntervalMs: durationIn(env, 'WHATSAPP_PAIR_INTERVAL', '6s', '0ms', '1h'),
    whatsappPacingMarginMs: pacingMargin(env),
    providerAllowedHosts: blank(env.PROVIDER_ALLOWED_HOSTS),
    deliveryRetrySchedule: schedule(env, 'DELIVERY_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,2h,4h,8h,8h'),
    deliveryTimeoutMs: durationIn(env, 'DELIVERY_TIMEOUT', '15s', '100ms', '10m'),
    eventRetrySchedule: schedule(env, 'EVENT_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
    eventRetentionMs: retention(env, 'EVENT_RETENTION', '30d'),
    eventConcurrency: int(env, 'EVENT_CONCURRENCY', 8, 1, 256),
    whatsappTemplateSyncMs: durationIn(env, 'WHATSAPP_TEMPLATE_SYNC', '1h', '1m', '7d'),
    driverTricks: onOff(env, 'DB_DRIVER_TRICKS', true),
    messageRetentionMs: retention(env, 'MESSAGE_RETENTION', '400d'),
    pgliteVacuumIntervalMs: durationIn(env, 'PGLITE_VACUUM_INTERVAL', '5s', '100ms', '1d', true),
    dbStatementTimeoutMs: statementTimeout(env, 'DB_STATEMENT_TIMEOUT', '10s', '100ms', '10m'),
    dbBackgroundStatementTimeoutMs: statementTimeout(env, 'DB_BACKGROUND_STATEMENT_TIMEOUT', '5m', '1s', '24h'),
    ...mail(blank(env.SMTP_URL), blank(env.MAIL_FROM)),
  });
}

/** SMTP_URL and MAIL_FROM, checked together: an smtp(s) URL, and a sender whenever it is set. */
function mail(url: string | undefined, from: string | undefined): { smtpUrl: string | undefined; mailFrom: string | undefined } {
  if (url === undefined) return { smtpUrl: undefined, mailFrom: from };
  let parsed: URL;
  try { parsed = new URL(url); } catch { throw new ConfigError('SMTP_URL must be a URL such as smtp://user:password@mail.example.com:587'); }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got ${parsed.protocol}//`);
  if (from === undefined) throw new ConfigError('MAIL_FROM must be set when SMTP_URL is (the sender of invitations and password resets, e.g. "Shop <no-reply@shop.example>")');
  if (!/^[^<>@\s]+@[^<>@\s]+$|<[^<>@\s]+@[^<>@\s]+>\s*$/.test(from)) throw new ConfigError(`MAIL_FROM must be an email address or "Name <address>", got ${JSON.stringify(from)}`);
  return { smtpUrl: url, mailFrom: from };
}
