/**
 * The `whatsapp` provider (docs/operator-api.md): a WhatsApp Cloud API template message,
 * `POST {api_base_url}/{phone_number_id}/messages` with `Authorization: Bearer <access token>` and
 *
 *   {"messaging_product":"whatsapp","recipient_type":"individual","to":"4915112345678","type":"template",
 *    "template":{"name":"order_shipped","language":{"code":"en"},"components":[
 *      {"type":"header","parameters":[{"type":"image","image":{"link":"https://..."}}]},
 *      {"type":"body","parameters":[{"type":"text","text":"Ada"},{"type":"text","text":"A-1"}]},
 *      {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"/A-1"}]}]}}
 *
 * built from `rendered.whatsapp` (see domain/render.ts): header media (image/video link) or text
 * parameters, body parameters, and a URL-button parameter for each button whose destination was
 * replaced. A template without a `whatsapp` mapping fails at once.
 *
 * Outcomes: 2xx is sent, with the `wamid` of the answer (`{"messages":[{"id":"wamid..."}]}`) as the
 * provider's message id (receipts name it). Graph API errors (`{"error":{"code":..,"message":..}}`)
 * follow the code table of errors.ts (docs/whatsapp.md "What each error code does"): retry
 * on the schedule, wait (marketing held, channel paused, template paused), fail, opt the contact out,
 * pause the channel, mark the catalogue entry; Meta's code, title, message and details are kept.
 * Answers without a known code: 408, 429 and 5xx, timeouts and connection errors are retryable (the
 * shared classifier in delivery/failure.ts), anything else fails at once. A retryable answer's
 * Retry-After is passed on (docs/decisions.md#8-retries). One attempt is bounded by `timeoutMs`
 * (DELIVERY_TIMEOUT, connect to last byte). The access token never appears in an error.
 *
 * Before a claimed chunk is sent, `prepare` (room.ts) looks at the channel's state, the
 * templates' status in the catalogue and pacing's admission, so that paused channels and templates,
 * unavailable templates and messages over the pair rate or messaging limit do not reach Meta; before
 * that, a message with an empty parameter is skipped, `empty_parameter` (parameters.ts).
 *
 * Throughput: each request waits for a slot of the company's number from the process's
 * WhatsappPacing (pacing.ts): at most `ratePerSecond` requests in any 1-s window across every
 * worker process, retries included.
 *
 * Stops (stops.ts; docs/whatsapp.md "A pause stops at once"): an answer that pauses the channel
 * (131048, 131031, 368, 190) stops the number, and a template code (132000-132016) the template, in
 * this process synchronously as the answer is read. Right before a request is put on the wire (after
 * its wait for a slot, with nothing awaited in between) the stops are looked at: a stopped number or
 * template sends nothing, and the outcome is `unsent` with `recheck` (the run asks `prepare` again,
 * which makes the message wait or fail as the stored state and the stops say, without an attempt).
 */
import type { DeliveryClient } from '../../delivery/client.ts';
import type { Rendered } from '../../domain/render.ts';
import type { WhatsappPacing } from './pacing.ts';
import type { PrepareItem, PrepareRun, Provider, SendResult } from '../types.ts';
import { classifyAnswer, ERROR_CODES, PAUSE_HOLD_MS } from './errors.ts';
import { afterRefusal, prepareWhatsapp, type WhatsappRoom } from './room.ts';
import { skipEmptyParameters } from './parameters.ts';
import { WAIT_REASONS } from '../../db/whatsapp-channel.ts';
import type { SendStops } from './stops.ts';

/**
 * The outcome of a message whose number or template is stopped in this process (stops.ts), at `now`
 * (clock ms): `unsent` with `recheck`, waiting `channel_paused` / `template_paused` or failing
 * `template_unavailable` as `prepare` would decide it; null when it may be sent.
 */
export function stoppedOutcome(stops: SendStops | undefined, rendered: Rendered, now: number): SendResult | null {
  if (!stops) return null;
  const number = stops.numberStop(rendered.company_id);
  if (number) {
    return { status: 'wait', reason: WAIT_REASONS.channelPaused, until: now + PAUSE_HOLD_MS, error: `not sent: the channel is paused (${number.reason})`, unsent: true, recheck: true };
  }
  const wa = rendered.whatsapp;
  const template = wa ? stops.templateStop(rendered.company_id, wa.name, wa.language) : undefined;
  if (!wa || !template) return null;
  return template.status === 'PAUSED'
    ? { status: 'wait', reason: WAIT_REASONS.templatePaused, until: now + PAUSE_HOLD_MS, error: `not sent: ${template.reason}`, unsent: true, recheck: true }
    : { status: 'failed', retryable: false, code: 'template_unavailable', error: `the template ${wa.name} (${wa.language}) is not approved in the WhatsApp catalogue`, unsent: true, recheck: true };
}

/** Graph / Cloud API error codes retried on the schedule (errors.ts has the whole table). */
export const RETRYABLE_CODES: ReadonlySet<number> = new Set([...ERROR_CODES].filter(([, r]) => r.action === 'retry' || r.action === 'slow_down' || r.action === 'pair').map(([c]) => c));

/** The Cloud API request body for a rendered message (see the module comment); null without a mapping. */
export function templateMessage(rendered: Rendered): Record<string, unknown> | null {
  const wa = rendered.whatsapp;
  if (!wa) return null;
  const components: Record<string, unknown>[] = [];
  const h = rendered.header;
  if (h.type === 'image') components.push({ type: 'header', parameters: [{ type: 'image', image: { link: h.url } }] });
  else if (h.type === 'video') components.push({ type: 'header', parameters: [{ type: 'video', video: { link: h.url } }] });
  else if (h.type === 'text' && wa.header_parameters.length) {
    components.push({ type: 'header', parameters: wa.header_parameters.map((text) => ({ type: 'text', text })) });
  }
  if (wa.body_parameters.length) {
    components.push({ type: 'body', parameters: wa.body_parameters.map((text) => ({ type: 'text', text })) });
  }
  wa.button_parameters.forEach((text, index) => {
    if (text !== null) components.push({ type: 'button', sub_type: 'url', index: String(index), parameters: [{ type: 'text', text }] });
  });
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: rendered.to.replace(/^\+/, ''),
    type: 'template',
    template: { name: wa.name, language: { code: wa.language }, ...(components.length ? { components } : {}) },
  };
}

/** The wamid of a Graph API success answer, or undefined when the answer does not carry one. */
export function wamidOf(text: string): string | undefined {
  try {
    const id = (JSON.parse(text) as { messages?: { id?: unknown }[] }).messages?.[0]?.id;
    return typeof id === 'string' && id.length > 0 && id.length <= 256 ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps a Graph API answer that is not 2xx to its outcome by the code table (errors.ts), at
 * `now` (ms); `retryAfter` is the answer's Retry-After header, honoured when the failure is retryable.
 */
export function classifyError(status: number, text: string, retryAfter?: string | string[], now = Date.now()): SendResult {
  return classifyAnswer(status, text, retryAfter, now).result;
}

export interface WhatsAppOptions {
  apiBaseUrl: string;
  phoneNumberId: string;
  /** The access token, already opened; kept only inside this closure. */
  accessToken: string;
  /** The service's outbound client (delivery/client.ts): guarded, bounded, answers capped at 64 KiB. */
  client: DeliveryClient;
  /** The process's pacing; requests wait for a slot of `ratePerSecond` (the channel's throughput_per_second). */
  pacing: WhatsappPacing;
  ratePerSecond: number;
  /** The send-time rules' dependencies (room.ts); absent: no look before sending, no side effects of refusals. */
  room?: WhatsappRoom;
  /** The channel's messaging limit (people per moving 24 h; null: unlimited). */
  messagingLimit?: number | null;
}

/** A WhatsApp Cloud API provider for one company's phone number. */
export function whatsappProvider(opts: WhatsAppOptions): Provider {
  const url = `${opts.apiBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(opts.phoneNumberId)}/messages`;
  const authorization = `Bearer ${opts.accessToken}`;
  const room = opts.room;
  const limit = opts.messagingLimit === undefined ? 250 : opts.messagingLimit;
  return {
    name: 'whatsapp',
    // Empty parameters are skipped first (parameters.ts), then the room's looks decide about the rest.
    prepare: (run: PrepareRun, items: PrepareItem[]) => skipEmptyParameters(items, (rest) => (room ? prepareWhatsapp(room, limit, run, rest) : Promise.resolve(new Map()))),
    async send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult> {
      const message = templateMessage(rendered);
      if (!message) return { status: 'failed', retryable: false, error: 'the template has no whatsapp mapping' };
      // A stand-in pacing (tests) may have no stops: then nothing is stopped in the process.
      const stops: SendStops | undefined = opts.pacing.stops;
      const now = () => room?.clock.now() ?? Date.now();
      const early = stoppedOutcome(stops, rendered, now());
      if (early) return early;
      const ok = await opts.pacing.slot(rendered.company_id, opts.ratePerSecond, signal, rendered.to);
      // After the wait, right before the request (nothing awaited in between): a stop set meanwhile holds it.
      const stopped = stoppedOutcome(stops, rendered, now());
      if (stopped) return stopped;
      if (!ok || signal?.aborted) {
        return { status: 'failed', retryable: true, error: 'delivery interrupted' };
      }
      const x = await opts.client.request('messages', {
        method: 'POST', url, headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(message), signal,
      });
      // No whole answer (network error, timeout, interrupted, larger than 64 KiB): the shared classifier's failure.
      if (!x.answered) return x.failure;
      const text = x.body.toString('utf8');
      if (x.statusCode >= 200 && x.statusCode < 300) return { status: 'sent', providerMessageId: wamidOf(text) };
      const classified = classifyAnswer(x.statusCode, text, x.headers['retry-after'], now());
      // The answer is read: a pausing answer stops the number, a template code the template, now.
      const rule = classified.rule;
      if (rule?.action === 'pause') {
        const pause = classified.result.effects?.find((e) => e.kind === 'pause_channel');
        stops?.stopNumber(rendered.company_id, pause?.kind === 'pause_channel' ? pause.reason : `${classified.code}`);
      } else if (rule?.action === 'template' && rule.templateStatus && rendered.whatsapp) {
        stops?.stopTemplate(rendered.company_id, rendered.whatsapp.name, rendered.whatsapp.language, rule.templateStatus);
      }
      // Shared state (pacing, the catalogue) follows the refusal; the message's outcome stands even
      // when that write fails (the next refusal tries again).
      if (room) await afterRefusal(room, rendered, classified).catch(() => {});
      return classified.result;
    },
  };
}
