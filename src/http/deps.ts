/**
 * What the HTTP app needs from the outside, passed to `buildApp` (fastify/demo style: no DI container,
 * no globals). Side effects sit behind these small interfaces so tests can swap them.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { BatchAcceptor } from '../domain/accept-writer.ts';
import type { AutomationLookups } from '../domain/automations.ts';
import type { CatalogueDeps } from '../domain/whatsapp-templates.ts';
import type { JobQueue } from '../domain/job-queue.ts';
import type { PasswordHashing } from '../domain/users.ts';
import type { DeliveryClient } from '../delivery/client.ts';
import type { AddressPolicy } from '../delivery/network-guard.ts';
import type { Mailer } from '../providers/mail.ts';
import type { Boss } from '../queue/boss.ts';
import type { ApiKeyAuthenticator } from './auth.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { CompiledSchemas } from './lazy-compilers.ts';

export interface AppDeps {
  readonly config: Config;
  readonly database: Database;
  readonly boss: Boss;
  /** Durable accept of sends (4.3, 4.4), the group-commit store of db/accept-store.ts: one per service. */
  readonly acceptor: BatchAcceptor;
  /** The job queue as the domain sees it (domain/job-queue.ts), for jobs the domain starts. */
  readonly jobs: JobQueue;
  /** The 4.3 automation lookups with their short-lived cache: one per service. */
  readonly automationLookups: AutomationLookups;
  readonly rateLimiter: RateLimiter;
  readonly auth: ApiKeyAuthenticator;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The admin bearer token (from ADMIN_TOKEN or the generated file). */
  readonly adminToken: string;
  /** Seals provider secrets before they are stored. */
  readonly sealSecret: (plaintext: string) => string;
  /** Opens a sealed secret (webhook signature checks of docs/decisions.md#9-whatsapp-webhooks-in, #10-gateway-receipts); throws when it cannot. */
  readonly openSecret: (sealed: string) => string;
  /** Which addresses provider URLs may point at. */
  readonly addressPolicy: AddressPolicy;
  /**
   * The one outbound HTTP client (delivery/client.ts), built once by src/service.ts: test events and
   * Meta's template endpoints go through it (and the workers' providers and events).
   */
  readonly delivery: DeliveryClient;
  /** The WhatsApp template catalogue's outside (Meta's template endpoints over `delivery`, the secret opener, the clock). */
  readonly catalogue: CatalogueDeps;
  /** Hashing and checking of console passwords (domain/users.ts): one per service. */
  readonly passwords: PasswordHashing;
  /** Email of invitations and password resets (SMTP_URL); undefined: none is sent. */
  readonly mailer?: Mailer | undefined;
  /** Compiled schemas shared with the other apps of this process, if it builds several (http/lazy-compilers.ts). */
  readonly compiledSchemas?: CompiledSchemas | undefined;
}
