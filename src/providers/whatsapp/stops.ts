/**
 * A WhatsApp number's and its templates' stops in this process (docs/whatsapp.md "A pause stops at
 * once"): the in-process side of a paused channel or a refused template, set synchronously by the code
 * that reads the pausing answer, looked at right before each request is put on the wire (after any
 * wait for a throughput slot), so that from that instant no new request starts for the number (or the
 * template). One instance per worker process, owned by its WhatsappPacing (pacing.ts), which wakes the
 * lanes waiting for a slot of a stopped number at once.
 *
 * The stored state stays the truth across processes: the channel's `whatsapp_channel_state` row (a
 * paused channel) and the catalogue's status (a marked template). This registry follows it:
 * - a stop read from an answer (131048, 131031, 368, 190; 132000-132016) is set at once, before the
 *   pause or the mark is stored, and held until the stored state confirms it;
 * - every look at the stored state (the send path's look before sending, room.ts; every throughput
 *   reservation, pacing.ts, for the channel) is reported with {@link seenChannel} / {@link seenTemplate}:
 *   a stored pause (e.g. from another process or an `account_update` webhook) stops the number here
 *   too; an active channel (an approved template) ends the stop once the stored state had confirmed it,
 *   or when the channel was resumed at or after the stop (`changed_at`), or when the stop was never
 *   stored within UNCONFIRMED_MS of the clock (its write was lost: the refused message, tried again,
 *   asks Meta again).
 * Times: `at` in ms of the injectable clock; `mono` in ms of the process's monotonic clock (when the
 * stop was set, for logs and tests).
 */
import type { Clock } from '../../clock.ts';

/** One stop: why, when (clock ms and monotonic ms), and whether the stored state has confirmed it. */
export interface Stop {
  reason: string;
  at: number;
  mono: number;
  confirmed: boolean;
}

/** A template's stop: the catalogue status the refusal implies (`PAUSED`, `DELETED`, `DISABLED`, `MISMATCHED`). */
export interface TemplateStop extends Stop {
  status: string;
}

/** How long a stop that the stored state never confirmed is kept (clock ms). */
export const UNCONFIRMED_MS = 60_000;

const templateKey = (companyId: number, name: string, language: string) => `${companyId}\0${name}\0${language}`;

/** The stops of this process (see the module comment). */
export class SendStops {
  readonly #clock: Clock;
  readonly #mono: () => number;
  readonly #numbers = new Map<number, Stop>();
  readonly #templates = new Map<string, TemplateStop>();
  readonly #listeners: ((companyId: number) => void)[] = [];

  /** `mono`: the process's monotonic clock (ms, default performance.now). */
  constructor(clock: Clock, mono: () => number = () => performance.now()) {
    this.#clock = clock;
    this.#mono = mono;
  }

  /** Calls `fn(companyId)` synchronously whenever a number becomes stopped (pacing wakes its lanes). */
  onNumberStopped(fn: (companyId: number) => void): void {
    this.#listeners.push(fn);
  }

  /**
   * Stops the company's number now with `reason` (a first stop's reason is kept). `confirmed`: read
   * from the stored state (not only from an answer).
   */
  stopNumber(companyId: number, reason: string, confirmed = false): void {
    const old = this.#numbers.get(companyId);
    if (old) {
      old.confirmed ||= confirmed;
      return;
    }
    this.#numbers.set(companyId, { reason, at: this.#clock.now(), mono: this.#mono(), confirmed });
    for (const fn of this.#listeners) fn(companyId);
  }

  /** The number's stop, or undefined when it may send. */
  numberStop(companyId: number): Stop | undefined {
    return this.#numbers.get(companyId);
  }

  /** Stops the company's template `name` / `language` now; `status`: the catalogue status the refusal implies. */
  stopTemplate(companyId: number, name: string, language: string, status: string, confirmed = false): void {
    const key = templateKey(companyId, name, language);
    const old = this.#templates.get(key);
    if (old) {
      old.confirmed ||= confirmed;
      return;
    }
    this.#templates.set(key, { reason: `template ${name} (${language}) ${status}`, status, at: this.#clock.now(), mono: this.#mono(), confirmed });
  }

  /** The template's stop, or undefined. */
  templateStop(companyId: number, name: string, language: string): TemplateStop | undefined {
    return this.#templates.get(templateKey(companyId, name, language));
  }

  /**
   * Reports the channel's stored state: `paused` stops the number (confirmed); `active` with
   * `changedAt` (clock ms of its last change, null when never) ends the stop when the module
   * comment says so.
   */
  seenChannel(companyId: number, state: 'active' | 'paused', reason: string | null, changedAt: number | null): void {
    if (state === 'paused') {
      this.stopNumber(companyId, reason ?? 'paused', true);
      return;
    }
    const stop = this.#numbers.get(companyId);
    if (stop && this.#ends(stop, changedAt)) this.#numbers.delete(companyId);
  }

  /**
   * Reports a template's status in the catalogue: `approved` ends its stop when the module comment
   * says so; any other confirms it.
   */
  seenTemplate(companyId: number, name: string, language: string, approved: boolean): void {
    const key = templateKey(companyId, name, language);
    const stop = this.#templates.get(key);
    if (!stop) return;
    if (!approved) stop.confirmed = true;
    else if (this.#ends(stop, null)) this.#templates.delete(key);
  }

  #ends(stop: Stop, changedAt: number | null): boolean {
    return stop.confirmed || (changedAt !== null && changedAt >= stop.at) || this.#clock.now() - stop.at > UNCONFIRMED_MS;
  }
}
