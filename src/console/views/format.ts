/** Display helpers shared by the console views: times, statuses, channel names. */
import { html, type SafeHtml } from './html.ts';

/** `2026-01-05 10:00:03 UTC` inside `<time datetime="ISO">`; `fallback` (default "—") when absent. */
export function time(d: Date | string | null | undefined, fallback = '—'): SafeHtml | string {
  if (!d) return fallback;
  const date = d instanceof Date ? d : new Date(d);
  const iso = date.toISOString();
  return html`<time datetime="${iso}"><span>${iso.slice(0, 10)}</span> <span>${iso.slice(11, 19)} UTC</span></time>`;
}

/** A status word as a badge (`not_connected` reads "not connected"); the word carries the meaning, colour only repeats it. */
export function badge(status: string): SafeHtml {
  return html`<span class="badge badge-${status.replace(/[^a-z_]/g, '')}">${status.replace(/_/g, ' ')}</span>`;
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
