/**
 * A WhatsApp channel as the operator API shows and changes it (docs/whatsapp.md "The channel"): its
 * configuration in `companies.channel` (`waba_id`, `throughput_per_second`, `messaging_limit`), its
 * state (src/db/whatsapp-channel.ts), and the messaging limit's budget in use.
 */
import type { Db } from '../db/database.ts';
import { channelState, resumeChannel } from '../db/whatsapp-channel.ts';
import { limitUsage } from '../db/whatsapp-pacing.ts';
import { companyChannel } from '../db/channels.ts';
import { DomainError, isRowId } from './errors.ts';

/** The Cloud API's default throughput per number (messages per second). */
export const DEFAULT_THROUGHPUT_PER_SECOND = 80;
/** A new number's messaging limit (new people per moving 24 h). */
export const DEFAULT_MESSAGING_LIMIT = 250;
/** The messaging limits Meta grants (null: unlimited). */
export const MESSAGING_LIMITS = [250, 2000, 10000, 100000] as const;

/** The WhatsApp fields of a channel's view (never secrets). */
export interface WhatsappChannelView {
  phone_number_id: string;
  api_base_url: string;
  waba_id: string | null;
  throughput_per_second: number;
  messaging_limit: number | null;
  state: 'active' | 'paused';
  paused_reason: string | null;
  quality_rating: string | null;
  messaging_limit_used: number;
  /** RFC 3339, or null when nobody is counted. */
  messaging_limit_resets_at: string | null;
}

/** The configured throughput and messaging limit of a stored channel (defaults when absent). */
export function whatsappLimits(channel: Record<string, unknown>): { throughput_per_second: number; messaging_limit: number | null } {
  const t = channel.throughput_per_second;
  const l = channel.messaging_limit;
  return {
    throughput_per_second: typeof t === 'number' && Number.isInteger(t) && t >= 1 ? t : DEFAULT_THROUGHPUT_PER_SECOND,
    messaging_limit: l === null ? null : typeof l === 'number' ? l : DEFAULT_MESSAGING_LIMIT,
  };
}

/**
 * The view of a company's WhatsApp channel at `now` (ms of the injectable clock), or null when its
 * channel is not WhatsApp. 404 for an unknown company.
 */
export async function whatsappChannelView(db: Db, companyId: number, now: number): Promise<WhatsappChannelView | null> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const channel = await companyChannel(db, companyId);
  if (!channel) throw new DomainError(404, 'Company not found');
  if (channel.provider !== 'whatsapp') return null;
  const state = await channelState(db, companyId);
  const usage = await limitUsage(db, companyId, now);
  return {
    phone_number_id: String(channel.phone_number_id ?? ''),
    api_base_url: String(channel.api_base_url ?? 'https://graph.facebook.com/v21.0'),
    waba_id: typeof channel.waba_id === 'string' && channel.waba_id ? channel.waba_id : null,
    ...whatsappLimits(channel),
    state: state.state,
    paused_reason: state.state === 'paused' ? state.reason : null,
    quality_rating: state.quality_rating,
    messaging_limit_used: usage.used,
    messaging_limit_resets_at: usage.resets_at === null ? null : new Date(usage.resets_at).toISOString(),
  };
}

/**
 * Sets a paused WhatsApp channel active at `now` (a `channel.resumed` event; the messages that waited
 * for it are released). An active channel stays as it is. 404 unknown company; 409 when the channel
 * is not WhatsApp. Returns true when it was paused.
 */
export async function resumeWhatsappChannel(db: Db, companyId: number, now: number): Promise<boolean> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const channel = await companyChannel(db, companyId);
  if (!channel) throw new DomainError(404, 'Company not found');
  if (channel.provider !== 'whatsapp') throw new DomainError(409, "the company's channel is not WhatsApp: there is nothing to resume");
  return resumeChannel(db, companyId, 'resumed by an operator', now);
}
