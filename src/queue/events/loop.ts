/**
 * The event delivery loop of one worker process (docs/events.md), separate from message
 * delivery (its own claims on `event_deliveries`, its own connection pools of the service's outbound
 * client (delivery/client.ts, use `events`), bounded concurrency), so
 * event receivers never slow message delivery down. It wires four parts, each documented in its file:
 *
 * - the claimer (claimer.ts): claims due deliveries under a lease of LEASE_MS (database time), at
 *   once again when a claim came back full or the gate has room, otherwise every IDLE_MS;
 * - the per-endpoint concurrency gate (lanes.ts): at most EVENT_CONCURRENCY requests in flight per
 *   endpoint, at most MAX_IN_FLIGHT deliveries in hand; each attempt is one signed POST (send.ts,
 *   through delivery/post.ts);
 * - the result writer (writer.ts): outcomes written set-based every FLUSH_MS or FLUSH_ROWS; retries on
 *   EVENT_RETRY_SCHEDULE (delivery/schedule.ts), 410 and 5 days of failures disable the endpoint; held
 *   leases renewed every RENEW_MS in the writer's chain, so a killed process's claims are taken over
 *   within LEASE_MS;
 * - the retention sweep (retention.ts): events and attempts older than EVENT_RETENTION deleted.
 *
 * stop(): no new claims or attempts; waits for attempts in flight and writes their outcomes; what was
 * claimed but not started is left to its lease (claimed again once it runs out).
 */
import type { Logger } from 'pino';
import type { Webhook } from 'standardwebhooks';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { ClaimedDelivery } from '../../db/events.ts';
import type { DeliveryClient } from '../../delivery/client.ts';
import { createSigner } from '../../delivery/sign.ts';
import type { SecretBox } from '../../domain/secrets.ts';
import { Claimer } from './claimer.ts';
import { EndpointLanes } from './lanes.ts';
import { RetentionSweep } from './retention.ts';
import { sendEvent, type AttemptOutcome } from './send.ts';
import { FLUSH_MS, OutcomeWriter } from './writer.ts';

/** Lease of a claimed delivery (database time) and how often held leases are renewed (ms). */
export const LEASE_MS = 15_000;
export const RENEW_MS = 5_000;
/** Signers kept per process (by sealed secret); the cache starts over beyond this. */
const MAX_SIGNERS = 1000;

export interface EventLoopDeps {
  database: Database;
  logger: Logger;
  clock: Clock;
  secrets: SecretBox;
  config: Config;
  /** The service's one outbound client (delivery/client.ts); attempts use its `events` pools. */
  delivery: DeliveryClient;
}

export interface EventLoop { stop(): Promise<void> }

/** Starts the loop (roles worker and all). */
export function startEventLoop(deps: EventLoopDeps): EventLoop {
  const { database, clock, config } = deps;
  const db = database.db;
  const log = deps.logger.child({ component: 'events' });
  const client = deps.delivery;
  const timeoutMs = client.timeoutMs;
  const leaseMs = Math.max(LEASE_MS, timeoutMs + RENEW_MS);
  const stopping = new AbortController();

  const signers = new Map<string, Webhook>();
  /** The signer of an endpoint's sealed secret, opened once. */
  function signer(sealed: string): Webhook {
    let s = signers.get(sealed);
    if (!s) {
      if (signers.size > MAX_SIGNERS) signers.clear();
      s = createSigner(deps.secrets.open(sealed));
      signers.set(sealed, s);
    }
    return s;
  }

  /** One attempt of `d`; its outcome goes to the writer (not when it was cut short by stop()). */
  async function attempt(d: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      outcome = await sendEvent({ client, use: 'events', url: d.url, id: d.event_id, body: d.payload, signer: signer(d.secret_sealed), signal: stopping.signal });
    } catch (err) {
      outcome = { ok: false, status_code: null, error: `delivery error: ${(err as Error).message}`.slice(0, 200), response_excerpt: null, duration_ms: 0 };
    }
    if (stopping.signal.aborted && outcome.error === 'delivery interrupted') return;
    lanes.settle(d);
    writer.record(d, outcome);
  }

  const lanes: EndpointLanes = new EndpointLanes({ perEndpoint: config.eventConcurrency, attempt, onRoom: () => claimer.nudge() });
  const writer = new OutcomeWriter({ db, clock, log, schedule: config.eventRetrySchedule, leaseMs, onDisabled: (ids) => lanes.dropQueued(ids) });
  const retention = new RetentionSweep(db, clock, log, config.eventRetentionMs);
  const claimer: Claimer = new Claimer({ db, clock, log, lanes, retention, leaseMs, signal: stopping.signal });

  const flusher = setInterval(() => { if (writer.buffered) void writer.flush(); }, FLUSH_MS);
  const renewer = setInterval(() => void writer.renew(() => lanes.holding()), RENEW_MS);
  const running = claimer.run();
  return {
    async stop() {
      stopping.abort();
      lanes.close();
      claimer.nudge();
      await running;
      const deadline = Date.now() + timeoutMs + 1000;
      while (lanes.busy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      clearInterval(flusher);
      clearInterval(renewer);
      await writer.flush();
    },
  };
}
