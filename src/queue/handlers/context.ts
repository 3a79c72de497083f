/**
 * What every job handler gets: the database, the queue (to enqueue follow-up jobs), the injectable
 * clock (delivery-hours decisions, scheduled_for, sent_at, completed_at, next_attempt_at), the providers,
 * the retry schedule, a logger, `drain`, aborted when the workers stop (no new delivery attempt starts after that),
 * and `idle`, the turn requests leave to background work.
 */
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import type { ProviderRegistry } from '../../providers/index.ts';
import type { Boss } from '../boss.ts';
import type { ResultWriter } from './result-writer.ts';

export interface PipelineContext {
  readonly db: Db;
  readonly boss: Boss;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly providers: ProviderRegistry;
  readonly drain: AbortSignal;
  /** Deliveries in flight at once per chunk (providers that send). */
  readonly deliveryConcurrency: number;
  /** DELIVERY_RETRY_SCHEDULE (ms): the waits after the 1st, 2nd, ... failed attempt (docs/decisions.md#8-retries). */
  readonly retrySchedule: readonly number[];
  /**
   * Resolves when background work may go on: no request in flight (db/foreground-gate.ts `idle`).
   * Long handlers await it between steps, before a step's CPU work. Absent: at once.
   */
  readonly idle?: () => Promise<void>;
  /**
   * The process's result writer: the delivery runs' result flushes share its statements
   * (result-writer.ts). Absent: each run writes its own.
   */
  readonly resultWriter?: ResultWriter;
  /** Items per fan-out step (batch-process.ts); absent: FAN_OUT_STEP. */
  readonly fanOutStep?: number;
}
