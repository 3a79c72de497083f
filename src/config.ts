/**
 * Configuration: the only module that reads `process.env`. Parsed once, returned frozen.
 *
 * Variables (issue 2, item 1): PORT (default 8000), HOST (default 127.0.0.1), DATA_DIR (default ./data,
 * the embedded PGlite database and the generated admin token), DATABASE_URL (PostgreSQL; when set,
 * PGlite is not used), ADMIN_TOKEN (operator bearer token; generated into DATA_DIR when unset),
 * LOG_LEVEL (pino level, default info), SECRETS_KEY (key that encrypts provider secrets at rest;
 * generated into DATA_DIR when unset), DB_POOL_MAX (PostgreSQL pool size, default 10),
 * WORKER_CONCURRENCY (message chunks processed at once per worker process, default 4),
 * WHATSAPP_RATE_PER_SECOND (messages per second per WhatsApp number, default 80), PROVIDER_ALLOWED_HOSTS
 * (hosts and CIDR ranges of private networks that webhook/WhatsApp URLs may point at; default none).
 */
import path from 'node:path';

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
  readonly whatsappRatePerSecond: number;
  /** Hosts and CIDR ranges providers may reach although private (PROVIDER_ALLOWED_HOSTS). */
  readonly providerAllowedHosts: string | undefined;
}

/** Thrown when an environment variable has a value that cannot be used; the message names it. */
export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Reads the configuration from `env` (default `process.env`). Throws ConfigError on an unusable value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const blank = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
  return Object.freeze({
    port: int(env, 'PORT', 8000, 0, 65535),
    host: blank(env.HOST) ?? '127.0.0.1',
    dataDir: path.resolve(blank(env.DATA_DIR) ?? './data'),
    databaseUrl: blank(env.DATABASE_URL),
    adminToken: blank(env.ADMIN_TOKEN),
    logLevel: blank(env.LOG_LEVEL) ?? 'info',
    secretsKey: blank(env.SECRETS_KEY),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 4, 1, 256),
    whatsappRatePerSecond: int(env, 'WHATSAPP_RATE_PER_SECOND', 80, 1, 100000),
    providerAllowedHosts: blank(env.PROVIDER_ALLOWED_HOSTS),
  });
}
