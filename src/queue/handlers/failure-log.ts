/**
 * Failed messages in the service's log (failures must not be silent). Every line
 * carries `company_id`, `batch_id`, `message_id` and the error, so an operator can go from a log line
 * to `cms batch show <batch_id> --messages`.
 *
 * A whole batch can fail at once (a receiver down, a template error in every message): one run (a
 * delivery chunk, a fan-out) logs its first LINES_PER_RUN failures one line each and then one summary
 * line counting the rest by error, so a failed batch of 100 000 messages writes a handful of lines.
 */
import type { Logger } from 'pino';

/** Failures logged one line each per run; the rest are counted in the summary line. */
export const LINES_PER_RUN = 5;

export interface MessageFailure {
  message_id: string;
  /** The message's error text as stored (`http 400: ...`, `template error: ...`). */
  error: string | null;
  /** `error` when the message ended `failed`, `warn` when it waits for another attempt. */
  level: 'warn' | 'error';
  [field: string]: unknown;
}

/** Collects one run's failures for `ids` (company_id, batch_id); logs as they come, then `summary()`. */
export class FailureLog {
  private logged = 0;
  private readonly rest = new Map<string, { count: number; level: 'warn' | 'error' }>();
  private readonly logger: Logger;
  private readonly ids: { company_id: number; batch_id: string };
  private readonly msg: string;

  /** `msg`: the lines' message, e.g. `message delivery failed`. */
  constructor(logger: Logger, ids: { company_id: number; batch_id: string }, msg: string) {
    this.logger = logger;
    this.ids = ids;
    this.msg = msg;
  }

  /** Logs `f` (or counts it once LINES_PER_RUN lines were written). */
  add(f: MessageFailure): void {
    const { level, ...fields } = f;
    if (this.logged < LINES_PER_RUN) {
      this.logged++;
      this.logger[level]({ ...this.ids, ...fields }, this.msg);
      return;
    }
    const key = f.error ?? 'unknown error';
    const seen = this.rest.get(key) ?? { count: 0, level };
    seen.count++;
    if (level === 'error') seen.level = 'error';
    this.rest.set(key, seen);
  }

  /** One line per distinct error of the failures not logged one by one (none when there were none). */
  summary(): void {
    for (const [error, { count, level }] of this.rest) {
      this.logger[level]({ ...this.ids, error, more_messages: count }, `${this.msg}: ${count} more message(s) with the same error`);
    }
    this.rest.clear();
  }
}
