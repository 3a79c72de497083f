/**
 * The WhatsApp provider's send-time rules around Meta (docs/whatsapp.md): what it looks at before a
 * claimed chunk is sent (`prepareWhatsapp`) and what it does to shared state after Meta refused a
 * message (`afterRefusal`). The generic delivery run only sees the outcomes of providers/types.ts.
 *
 * Before sending, per claimed chunk of one company:
 * 1. the channel paused (whatsapp_channel_state), or its number stopped in this process (stops.ts: a
 *    pausing answer read and not stored yet): every message waits `channel_paused` (PAUSE_HOLD_MS,
 *    released at once by resume);
 * 2. the template's status in the catalogue (`templateAvailability`), or its stop in this process
 *    (a refusal read and not stored yet): `approved` is sent, `paused` waits `template_paused`
 *    (PAUSE_HOLD_MS, released when approved again), anything else fails with error code
 *    `template_unavailable` without a request to Meta;
 * 3. only on the first look at a chunk: pacing's admission (pair rate and messaging limit); a message
 *    not admitted waits `pair_rate` / `messaging_limit` until the time pacing names.
 * A wait never outlasts the message's expiry (the delivery run holds it until the earlier of the two).
 * Every stored state read here is reported to the process's stops (stops.ts `seenChannel`,
 * `seenTemplate`), which follow it.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { channelState, WAIT_REASONS } from '../../db/whatsapp-channel.ts';
import { markTemplateStatus } from '../../db/whatsapp-send.ts';
import type { Rendered } from '../../domain/render.ts';
import type { PrepareDecision, PrepareItem, PrepareRun } from '../types.ts';
import { PAIR_BACKOFF_MS, PAUSE_HOLD_MS, SLOW_DOWN_MS, type Classified } from './errors.ts';
import type { SendStops } from './stops.ts';

/** A template's usability at send time, as the catalogue answers it (src/domain/whatsapp-templates.ts). */
export type TemplateAvailability = (db: Db, companyId: number, name: string, language: string) => Promise<'approved' | 'paused' | 'unavailable'>;

/** The part of the pacing module (providers/whatsapp/pacing.ts, WhatsappPacing) the send path uses. Times: the injectable clock's ms. */
export interface PacingPort {
  admit(companyId: number, limit: number | null, items: { message_id: string; recipient: string }[]):
    Promise<Map<string, { admitted: true } | { admitted: false; reason: 'pair_rate' | 'messaging_limit'; until: number }>>;
  slowDown(companyId: number, forMs: number): Promise<void>;
  backOffPair(companyId: number, recipient: string, until: number): Promise<void>;
}

/** What the WhatsApp send-time rules need; built once per process (index.ts, the WhatsApp plugin). */
export interface WhatsappRoom {
  db: Db;
  clock: Clock;
  /** The catalogue's answer; null: every template counts as approved. */
  templateAvailability: TemplateAvailability | null;
  /** Pair rate, messaging limit and slow-downs; null: everything is admitted. */
  pacing: PacingPort | null;
  /** The process's stops (stops.ts; the WhatsappPacing's); absent: only the stored state counts. */
  stops?: SendStops;
}

/** The channel's messaging limit as stored in companies.channel (absent: 250; null: unlimited). */
export function messagingLimitOf(channel: Record<string, unknown>): number | null {
  const v = channel.messaging_limit;
  if (v === null) return null;
  return typeof v === 'number' && Number.isFinite(v) ? v : 250;
}

/** The decisions about `items` of one company's chunk (see the module comment); messages left out are sent. */
export async function prepareWhatsapp(room: WhatsappRoom, limit: number | null, run: PrepareRun, items: PrepareItem[]): Promise<Map<string, PrepareDecision>> {
  const out = new Map<string, PrepareDecision>();
  const hold = run.now + PAUSE_HOLD_MS;
  const state = await channelState(room.db, run.companyId);
  room.stops?.seenChannel(run.companyId, state.state, state.reason, state.changed_at === null ? null : new Date(state.changed_at).getTime());
  if (state.state === 'paused' || room.stops?.numberStop(run.companyId)) {
    for (const m of items) out.set(m.message_id, { action: 'wait', reason: WAIT_REASONS.channelPaused, until: hold });
    return out;
  }
  let rest = items;
  const availability = room.templateAvailability;
  if (availability || room.stops) {
    const byTemplate = new Map<string, 'approved' | 'paused' | 'unavailable'>();
    for (const m of items) {
      const wa = m.rendered.whatsapp;
      if (!wa) continue; // send() fails a message without a mapping
      const key = JSON.stringify([wa.name, wa.language]);
      if (byTemplate.has(key)) continue;
      let status: 'approved' | 'paused' | 'unavailable' = availability ? await availability(room.db, run.companyId, wa.name, wa.language) : 'approved';
      if (availability) room.stops?.seenTemplate(run.companyId, wa.name, wa.language, status === 'approved');
      const stop = room.stops?.templateStop(run.companyId, wa.name, wa.language);
      if (status === 'approved' && stop) status = stop.status === 'PAUSED' ? 'paused' : 'unavailable';
      byTemplate.set(key, status);
    }
    rest = [];
    for (const m of items) {
      const wa = m.rendered.whatsapp;
      const status = wa ? byTemplate.get(JSON.stringify([wa.name, wa.language])) : 'approved';
      if (status === 'paused') out.set(m.message_id, { action: 'wait', reason: WAIT_REASONS.templatePaused, until: hold });
      else if (status === 'unavailable') {
        out.set(m.message_id, {
          action: 'fail', code: 'template_unavailable',
          error: `the template ${wa!.name} (${wa!.language}) is not approved in the WhatsApp catalogue`,
        });
      } else rest.push(m);
    }
  }
  if (!run.again && room.pacing && rest.length) {
    const admitted = await room.pacing.admit(run.companyId, limit, rest.map((m) => ({ message_id: m.message_id, recipient: m.rendered.to })));
    for (const m of rest) {
      const a = admitted.get(m.message_id);
      if (a && !a.admitted) out.set(m.message_id, { action: 'wait', reason: a.reason, until: a.until });
    }
  }
  return out;
}

/**
 * What a refusal by Meta does to shared state (errors.ts): 130429 slows the number for Retry-After
 * (or SLOW_DOWN_MS), 131056 backs the pair off until the message's own retry, template codes mark
 * the catalogue entry. Errors here are not the message's: they are thrown to the caller, which keeps
 * the message's outcome.
 */
export async function afterRefusal(room: WhatsappRoom, rendered: Rendered, c: Classified): Promise<void> {
  const companyId = rendered.company_id;
  switch (c.rule?.action) {
    case 'slow_down':
      await room.pacing?.slowDown(companyId, c.retryAfterMs ?? SLOW_DOWN_MS);
      return;
    case 'pair':
      await room.pacing?.backOffPair(companyId, rendered.to, room.clock.now() + Math.max(c.retryAfterMs ?? 0, PAIR_BACKOFF_MS));
      return;
    case 'template':
      if (rendered.whatsapp && c.rule.templateStatus) {
        await markTemplateStatus(room.db, companyId, rendered.whatsapp.name, rendered.whatsapp.language, c.rule.templateStatus);
      }
      return;
    default:
  }
}
