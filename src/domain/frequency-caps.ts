/**
 * Frequency caps (docs/audience.md "Frequency caps"): a company may cap how many campaign messages one
 * contact gets, `{messages: N, per: DURATION}` (`per` a number and a unit, m, h or d, as the audience's
 * durations). A campaign message to a contact who already got N campaign messages that reached `sent`
 * (or `delivered`, `read`) within `per` before the send fans out ends `skipped` with reason
 * `frequency_cap`. Automations are never capped (and their messages never count); a campaign with
 * `ignore_frequency_cap` is not capped (its messages still count for the others). Messages skipped,
 * failed or still pending do not count.
 *
 * {@link cappedRecipients} is the one check: the fan-out (src/queue/handlers/batch-process.ts) and the
 * plans of a send (dry run, console review; src/domain/campaign-sends.ts) both call it, so a plan
 * counts what the send then does.
 */
import type { Db } from '../db/database.ts';
import { selectCappedPhones, selectCapPolicy } from '../db/frequency-caps.ts';
import type { FrequencyCap } from '../db/schema.ts';
import { durationMs } from './segment-filter.ts';

export type { FrequencyCap };

/** Most messages a cap may allow. */
export const CAP_MESSAGES_MAX = 1000;
/** Longest window a cap may have (ms): 366 days. */
export const CAP_PER_MAX_MS = 366 * 86_400_000;
/** The JSON Schema pattern of `per`. */
export const CAP_PER_PATTERN = '^[1-9][0-9]{0,5}[mhd]$';

/** The window of a cap in ms (undefined when `per` is malformed). */
export function capWindowMs(cap: FrequencyCap): number | undefined {
  return durationMs(cap.per);
}

/** Why a cap is not valid, with the field at fault, or undefined when it is (null, no cap, is valid). */
export function frequencyCapProblem(cap: FrequencyCap | null): { field: 'messages' | 'per'; msg: string } | undefined {
  if (cap === null) return undefined;
  if (!Number.isInteger(cap.messages) || cap.messages < 1 || cap.messages > CAP_MESSAGES_MAX) {
    return { field: 'messages', msg: `frequency_cap.messages must be a whole number from 1 to ${CAP_MESSAGES_MAX}` };
  }
  const ms = capWindowMs(cap);
  if (ms === undefined || ms > CAP_PER_MAX_MS) {
    return { field: 'per', msg: `frequency_cap.per must be a number and a unit (m, h or d), at most 366d, such as 7d or 12h; got ${JSON.stringify(cap.per)}` };
  }
  return undefined;
}

/** The source of a send: a campaign of the company (automations are never capped). */
export interface CapSubject { companyId: number; kind: 'automation' | 'campaign'; campaignId: number }

/** The cap that applies to a send of `subject`: null without a cap, for automations and for a campaign that ignores it. */
export async function capFor(db: Db, subject: CapSubject): Promise<{ messages: number; windowMs: number } | null> {
  if (subject.kind !== 'campaign') return null;
  const policy = await selectCapPolicy(db, subject.companyId, subject.campaignId);
  if (!policy?.cap || policy.ignore) return null;
  const windowMs = capWindowMs(policy.cap);
  return windowMs === undefined ? null : { messages: policy.cap.messages, windowMs };
}

/**
 * Of the E.164 numbers `phones` (recipients that would otherwise be sent: valid, not opted out), those
 * a message of `subject` would skip with reason `frequency_cap` when it fans out at `now` (ms).
 * Empty without a cap (see {@link capFor}); costs one small query then, and one more (an index probe
 * per number) when a cap applies.
 */
export async function cappedRecipients(db: Db, subject: CapSubject, phones: readonly string[], now: number): Promise<Set<string>> {
  if (subject.kind !== 'campaign' || phones.length === 0) return new Set();
  const cap = await capFor(db, subject);
  if (!cap) return new Set();
  return new Set(await selectCappedPhones(db, subject.companyId, [...phones], cap.messages, now - cap.windowMs));
}
