/**
 * A company's channel state, whatever its provider (docs/whatsapp.md "The channel"): `active`, or
 * `paused` with a reason, while nothing more is sent (the provider's `prepare` makes its messages wait
 * `channel_paused`) until an operator resumes it. A provider asks for a pause with the generic outcome
 * effect `pause_channel` (providers/types.ts SendEffect); the delivery run carries it out with
 * {@link pauseChannel}, in the transaction that commits the outcome. Stored in the table
 * `whatsapp_channel_state` (src/db/whatsapp-channel.ts; its trigger writes `channel.paused`).
 */
import type { Db } from '../db/database.ts';
import { pauseChannel as pauseChannelRow } from '../db/whatsapp-channel.ts';

/**
 * Pauses the company's channel with `reason` at `at` (ms of the injectable clock). True when this
 * call paused it; an already paused channel keeps its first reason.
 */
export function pauseChannel(db: Db, companyId: number, reason: string, at: number): Promise<boolean> {
  return pauseChannelRow(db, companyId, reason, at);
}
