/**
 * The provider interface (docs/operator-api.md "Providers"): ONE delivery attempt of a
 * rendered message, and optionally a look at a claimed chunk before any of it is sent. A provider only
 * classifies; what happens next (a retry on the schedule, a wait, a final failure) is decided by
 * `delivery/retry.ts` (docs/decisions.md#8-retries) and carried out by the delivery run, which applies the
 * outcome's effects generically. Providers never log or return their secrets.
 *
 * The vocabulary is generic: provider-specific rules (WhatsApp's error codes, its channel pause, its
 * template catalogue, its pacing) stay inside the provider's own room (src/providers/<name>/) and answer
 * in these terms.
 *
 * A provider plugs in as a {@link ProviderPlugin}: it builds the {@link Provider} of a stored channel,
 * hands the workers its {@link PeriodicTask}s and releases what it holds on close. The provider
 * registry (index.ts) lists the plugins; the queue only sees the registry and these shapes, never a
 * provider by name.
 */
import type { Rendered } from '../domain/render.ts';

/** The provider's error as it gave it (WhatsApp: Meta's `code`, `title`, `message`, `error_data.details`). */
export interface ProviderError {
  code: string;
  title?: string | null;
  message?: string | null;
  details?: string | null;
}

/**
 * What the delivery run does besides recording the message's outcome, in the transaction that
 * commits it:
 * - `opt_out`: the message's contact becomes opted out, `opt_out_source` = `source`, with `evidence`
 *   (and the message's ids) as the consent ledger's proof (the contacts trigger writes the
 *   `contact.opted_out` event and the ledger entry);
 * - `pause_channel`: the company's channel is paused with `reason` (the channel-state trigger writes
 *   `channel.paused`); nothing more is sent until it is resumed.
 */
export type SendEffect =
  | { kind: 'opt_out'; source: string; evidence?: Record<string, unknown> }
  | { kind: 'pause_channel'; reason: string };

/**
 * Outcome of one attempt.
 * - `sent`: the provider took the message; `providerMessageId` is its id for it (WhatsApp's wamid, the
 *   webhook provider's `webhook-id`), used later to apply receipts (§1).
 * - `failed`: `retryable` says whether the failure is transient (§2): retried on DELIVERY_RETRY_SCHEDULE,
 *   and `failed` after its last wait; `code` is the provider's error code as text (WhatsApp's numeric
 *   code, the HTTP status of a webhook answer), when there is one; `retryAfterMs`: the provider asked to
 *   wait at least this long (Retry-After); `reason`: what a retryable message waits for meanwhile
 *   (shown as the pending message's `reason`, e.g. `pair_rate`).
 * - `wait`: the message stays `pending` with `reason` until `until` (ms, the injectable clock; never past
 *   its expiry), then is tried again. It does NOT count against the retry schedule. `error`/`code` keep
 *   the provider's answer when there was one.
 * Any outcome but `sent` may carry `providerError` (stored in `messages.provider_error`), `effects`
 * (applied with the result) and `recheck`: the provider's situation changed (a paused channel, a
 * template marked unavailable), so the run asks {@link Provider.prepare} again about its messages not
 * yet started before sending more. `unsent`: no request was made after all (the provider's situation
 * changed while the message waited for its turn, e.g. its channel was paused meanwhile): not counted
 * as an attempt; with `recheck`, the run puts the message back and asks `prepare` about it again.
 */
export type SendResult =
  | { status: 'sent'; providerMessageId?: string }
  | ({ status: 'failed'; retryable: boolean; error: string; code?: string; retryAfterMs?: number; reason?: string } & Consequences)
  | ({ status: 'wait'; reason: string; until: number; error?: string; code?: string } & Consequences);

/** What a non-sent outcome may carry besides its status (see SendResult). */
export interface Consequences {
  providerError?: ProviderError;
  effects?: SendEffect[];
  recheck?: boolean;
  unsent?: boolean;
}

/** A claimed message as {@link Provider.prepare} sees it. */
export interface PrepareItem { message_id: string; rendered: Rendered }

/** The run a prepare call is about: the company, the injectable clock's now (ms), and whether it is a recheck. */
export interface PrepareRun {
  companyId: number;
  now: number;
  /**
   * false: the first look at a freshly claimed chunk (admissions such as pacing are taken now); true: a
   * recheck after an outcome asked for one (only the provider's state is looked at again).
   */
  again: boolean;
}

/**
 * A provider's decision about a claimed message before sending: `send` it (also the meaning of a
 * message left out of the answer), make it `wait` (pending with `reason` until `until`, ms), `fail` it
 * without an attempt (`error`, `code`), or `skip` it (`reason`).
 */
export type PrepareDecision =
  | { action: 'send' }
  | { action: 'wait'; reason: string; until: number }
  | { action: 'fail'; error: string; code?: string; providerError?: ProviderError }
  | { action: 'skip'; reason: string };

export type ProviderName = 'outbox' | 'webhook' | 'whatsapp';

export interface Provider {
  readonly name: ProviderName;
  /**
   * true: nothing leaves the machine (the outbox): the delivery run records a chunk's deliverable
   * messages as sent in one statement, without `send`.
   */
  readonly sendsNothing?: boolean;
  /**
   * Hands `rendered` to the provider once. Resolves (never rejects) with the outcome; `signal` aborts
   * a request in flight (the outcome is then a retryable failure).
   */
  send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult>;
  /**
   * Optional look at claimed messages before any is sent (see PrepareDecision): the answer maps
   * message ids to decisions; messages it leaves out are sent. May reject (the run then fails and its
   * messages are claimed again after their lease).
   */
  prepare?(run: PrepareRun, items: PrepareItem[]): Promise<Map<string, PrepareDecision>>;
}

/**
 * A provider's periodic work, run by the workers' sweep (queue/workers.ts), which knows it only by
 * these fields: `run` about every `everyMs` of real time (rounded to whole sweeps of SWEEP_INTERVAL_MS),
 * after the sweep's own steps and one task after the other; also on every on-demand sweep
 * (Workers.sweepNow) when `onSweepNow`. Not run once the workers are stopping. `run` may reject: the
 * workers log `<name> failed` and go on; `log` is the workers' logger for what a round did.
 */
export interface PeriodicTask {
  /** What the task does, in the log (e.g. `whatsapp template sync`). */
  readonly name: string;
  readonly everyMs: number;
  readonly onSweepNow?: boolean;
  run(ctx: { signal: AbortSignal; log: PeriodicTaskLog }): Promise<void>;
}

/** The part of a logger a periodic task writes to (pino's shape). */
export interface PeriodicTaskLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * One provider as it plugs into the service (see the module comment). `forChannel` gets a stored
 * channel value whose `provider` is `name`, and never throws (an unusable channel yields a provider
 * that fails its messages); the registry caches its answers per distinct channel value.
 */
export interface ProviderPlugin {
  readonly name: ProviderName;
  forChannel(channel: Record<string, unknown>): Provider;
  /**
   * The provider refuses a message whose template parameter renders empty (WhatsApp: Meta refuses an
   * empty parameter), so the fan-out skips it as `empty_parameter` (docs/whatsapp.md "Empty
   * parameters"). Absent: false (the mapping is sent as data).
   */
  readonly refusesEmptyParameters?: boolean;
  /** The provider's periodic tasks (none when absent). */
  periodicTasks?(): PeriodicTask[];
  /** Releases what the plugin holds (flushes its state); the registry calls it once on close. */
  close?(): Promise<void>;
}
