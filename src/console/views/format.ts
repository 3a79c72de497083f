/**
 * Display helpers shared by the console views: times in the company's time zone (named), numbers with
 * thousands separators, statuses as words with their meaning on hover, channel names.
 *
 * Times: a page is rendered inside {@link inTimeZone} with the company's zone (the time zone of its
 * delivery hours, UTC without them; context.ts `sendPage` does this for every signed-in page), and
 * {@link time} formats in that zone and names it. Rendering is synchronous, so the zone of one page
 * never leaks into another.
 */
import { html, type SafeHtml } from './html.ts';

let displayZone = 'UTC';

/** Runs `render` with times shown in `timeZone` (an IANA name; an unknown one falls back to UTC). */
export function inTimeZone<T>(timeZone: string, render: () => T): T {
  const before = displayZone;
  displayZone = validZone(timeZone) ? timeZone : 'UTC';
  try {
    return render();
  } finally {
    displayZone = before;
  }
}

/** The zone times are shown in now (see {@link inTimeZone}). */
export function displayTimeZone(): string {
  return displayZone;
}

function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string, seconds: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${seconds}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}), hourCycle: 'h23' });
    formatters.set(key, f);
  }
  return f;
}

/** `27 Nov 2026, 14:05` of `d` in `timeZone` (default: the page's zone), without the zone's name. */
export function localDateTime(d: Date | number, timeZone = displayZone, o: { seconds?: boolean } = {}): string {
  const parts = formatter(timeZone, o.seconds ?? false).formatToParts(d);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('day')} ${get('month')} ${get('year')}, ${get('hour')}:${get('minute')}${o.seconds ? `:${get('second')}` : ''}`;
}

/** The UTC offset of `timeZone` at instant `ms`: `UTC+02:00` (`UTC` at offset zero). */
export function utcOffset(ms: number, timeZone = displayZone): string {
  const name = new Intl.DateTimeFormat('en', { timeZone, timeZoneName: 'longOffset' }).formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  return name.replace(/^GMT/, 'UTC');
}

/**
 * `27 Nov 2026, 14:05:03 Europe/Berlin` inside `<time datetime="ISO">` (the page's zone, see the module
 * comment); `fallback` (default "—") when absent.
 */
export function time(d: Date | string | null | undefined, fallback = '—'): SafeHtml | string {
  if (!d) return fallback;
  const date = d instanceof Date ? d : new Date(d);
  if (Number.isNaN(date.getTime())) return fallback;
  return html`<time datetime="${date.toISOString()}"><span>${localDateTime(date, displayZone, { seconds: true })}</span> <span class="zone">${displayZone}</span></time>`;
}

const numberFormat = new Intl.NumberFormat('en');
const percentFormat = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 });

/** A count with thousands separators: `100,000`. */
export function num(n: number | bigint): string {
  return numberFormat.format(n);
}

/** A share 0..1 as a percentage: `12.5%`. */
export function percent(x: number): string {
  return percentFormat.format(x);
}

/** `1 recipient` / `1,000 recipients`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** What each status word means (the badge's hover text and its screen-reader description). */
export const STATUS_MEANING: Record<string, string> = {
  // sends (batches)
  accepted: 'Accepted: its messages are being prepared.',
  processing: 'Its messages are being handed to the provider.',
  scheduled: 'Waiting for its scheduled time; nothing has been sent yet.',
  paused: 'Paused: nothing more is handed to the provider until it is resumed.',
  completed: 'Finished: every message was sent, failed or skipped.',
  cancelled: 'Cancelled: the messages not yet handed to the provider were skipped.',
  // messages
  pending: 'Not sent yet: waiting for its turn, a retry or the delivery hours.',
  sent: 'Handed to the provider; no delivery receipt yet.',
  delivered: 'Delivered to the phone.',
  read: 'Read by the recipient.',
  failed: 'Could not be delivered (see the reason).',
  skipped: 'Not sent (see the reason), for example opted out or cancelled.',
  // contacts
  opted_out: 'Gets no campaigns (automations still reach them).',
  subscribed: 'Gets campaigns.',
  // keys, endpoints, connections
  active: 'In use.',
  inactive: 'Not in use.',
  revoked: 'Revoked: requests with it are refused.',
  enabled: 'Events are delivered to it.',
  disabled: 'No events are delivered to it.',
  connected: 'Connected.',
  not_connected: 'Not connected.',
  // imports
  running: 'Being imported; this page refreshes itself.',
  // WhatsApp templates
  approved: 'Approved by WhatsApp: it can be sent.',
  rejected: 'Rejected by WhatsApp: it cannot be sent.',
  in_appeal: 'Its rejection is being appealed.',
  deleted: 'Removed from the catalogue: it cannot be sent.',
};

/**
 * A status word as a badge (`not_connected` reads "not connected") with its meaning on hover (`title`)
 * and for screen readers (visually hidden text); the word carries the meaning, colour only repeats it.
 * `meaning` overrides {@link STATUS_MEANING}.
 */
export function badge(status: string, meaning = STATUS_MEANING[status]): SafeHtml {
  const word = status.replace(/_/g, ' ');
  const cls = status.replace(/[^a-z_]/g, '');
  if (!meaning) return html`<span class="badge badge-${cls}">${word}</span>`;
  return html`<span class="badge badge-${cls}" title="${meaning}">${word}<span class="visually-hidden"> (${meaning})</span></span>`;
}

const CHANNELS: Record<string, string> = {
  outbox: 'Outbox (messages are recorded, nothing leaves the service)',
  webhook: 'Webhook (signed HTTP delivery)',
  whatsapp: 'WhatsApp Cloud API',
};

/** Human name of a delivery channel provider (never its settings or secrets). */
export function channelName(provider: string): string {
  return CHANNELS[provider] ?? provider;
}

/**
 * The note a role sees instead of buttons and forms it may not use (src/console/permissions.ts; pages
 * leave those out with `can` of context.ts). `things` in the plural, e.g. `segments`.
 */
export function readOnlyNote(things: string): SafeHtml {
  return html`<p class="muted" data-read-only>Your role can view ${things} but not change them.</p>`;
}
