/**
 * The WhatsApp provider's room as it plugs in (providers/types.ts ProviderPlugin; docs/whatsapp.md):
 *
 * - sending (send.ts) with its error table (errors.ts), its look before sending and its side effects
 *   of refusals (room.ts), and its pacing (pacing.ts: throughput slots, pair rate and messaging
 *   limit, shared with the other processes through the database): a channel
 *   `{provider:'whatsapp', phone_number_id, api_base_url, access_token_sealed, throughput_per_second?,
 *   messaging_limit?}` becomes a whatsappProvider; its `throughput_per_second` is its rate
 *   (WHATSAPP_RATE_PER_SECOND when unset); an access token that cannot be opened or an API base whose
 *   literal address the guard refuses fails its messages;
 * - Meta's template endpoints (templates-api.ts) for the catalogue (src/domain/whatsapp-templates.ts);
 * - Meta's account-level webhook fields (webhooks.ts);
 * - its periodic tasks, run by the workers' sweep: `whatsapp template sync` every
 *   TEMPLATE_SYNC_EVERY_MS (and on every on-demand sweep) syncs the catalogues older than
 *   WHATSAPP_TEMPLATE_SYNC by the injectable clock (errors logged, never fatal); `whatsapp pacing
 *   prune` every PACING_PRUNE_EVERY_MS deletes the pacing rows that hold nothing back any more (pairs
 *   whose time has passed, limit counts older than 24 h; bounded steps, pacing.ts prune()).
 *
 * One WhatsappPacing and one templates client serve every company of the process; requests go
 * through the service's one outbound client (delivery/client.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { DeliveryClient } from '../../delivery/client.ts';
import type { SecretBox } from '../../domain/secrets.ts';
import { syncDueCatalogues, templateAvailability, type CatalogueDeps } from '../../domain/whatsapp-templates.ts';
import { brokenProvider } from '../broken.ts';
import type { PeriodicTask, ProviderPlugin } from '../types.ts';
import { WhatsappPacing } from './pacing.ts';
import { messagingLimitOf, type PacingPort, type TemplateAvailability, type WhatsappRoom } from './room.ts';
import { whatsappProvider } from './send.ts';
import { createTemplatesApi } from './templates-api.ts';

/** The Cloud API base when a channel names none. */
export const DEFAULT_API_BASE_URL = 'https://graph.facebook.com/v21.0';

/** How often the template sync task runs (ms of real time; it syncs only the catalogues that are due). */
export const TEMPLATE_SYNC_EVERY_MS = 30_000;

/** How often the pacing prune task runs (ms of real time). */
export const PACING_PRUNE_EVERY_MS = 300_000;

export interface WhatsappPluginOptions {
  secrets: SecretBox;
  client: DeliveryClient;
  /** The database and clock of the pacing, the send-time rules and the catalogue. */
  db: Db;
  clock: Clock;
  /** WhatsApp throughput per phone number (messages per second) when the channel has no throughput_per_second. */
  ratePerSecond: number;
  /** WHATSAPP_PAIR_INTERVAL (ms). */
  pairIntervalMs: number;
  /** WHATSAPP_PACING_MARGIN (ms; default the pacing's own). */
  pacingMarginMs?: number;
  /** WHATSAPP_TEMPLATE_SYNC (ms): a catalogue older than this is synced; absent: no periodic sync task. */
  templateSyncMs?: number;
  /**
   * The catalogue's send-time answer (default: the catalogue's templateAvailability; null: every
   * template counts as approved) and the pacing (default: the plugin's WhatsappPacing; null: everything admitted).
   */
  templateAvailability?: TemplateAvailability | null;
  pacing?: PacingPort | null;
}

/** The plugin, with the process's pacing (for the registry's callers). */
export interface WhatsappPlugin extends ProviderPlugin {
  readonly pacing: WhatsappPacing;
}

/** Builds the WhatsApp plugin (see the module comment). */
export function whatsappPlugin(opts: WhatsappPluginOptions): WhatsappPlugin {
  const pacing = new WhatsappPacing(opts.db, opts.clock, { pairIntervalMs: opts.pairIntervalMs, marginMs: opts.pacingMarginMs });
  const room: WhatsappRoom = {
    db: opts.db, clock: opts.clock,
    templateAvailability: opts.templateAvailability === undefined ? templateAvailability : opts.templateAvailability,
    pacing: opts.pacing === undefined ? pacing : opts.pacing,
    stops: pacing.stops,
  };
  const catalogue: CatalogueDeps = {
    api: createTemplatesApi({ client: opts.client }),
    openSecret: (sealed) => opts.secrets.open(sealed),
    clock: opts.clock,
  };

  const tasks: PeriodicTask[] = [{
    name: 'whatsapp pacing prune', everyMs: PACING_PRUNE_EVERY_MS,
    async run() { await pacing.prune(); },
  }];
  const syncMs = opts.templateSyncMs;
  if (syncMs !== undefined) {
    tasks.unshift({
      name: 'whatsapp template sync', everyMs: TEMPLATE_SYNC_EVERY_MS, onSweepNow: true,
      async run({ log }) {
        const round = await syncDueCatalogues(opts.db, catalogue, syncMs);
        if (round.synced.length) log.info({ companies: round.synced }, 'whatsapp template catalogues synced');
        for (const f of round.failed) log.warn({ company_id: f.company_id, err: f.error }, 'whatsapp template sync failed; tried again later');
      },
    });
  }

  return {
    name: 'whatsapp',
    refusesEmptyParameters: true,
    pacing,
    forChannel(channel) {
      const str = (key: string) => (typeof channel[key] === 'string' ? (channel[key] as string) : '');
      let accessToken: string;
      try {
        accessToken = opts.secrets.open(str('access_token_sealed'));
      } catch {
        return brokenProvider('whatsapp', 'the whatsapp access token cannot be opened (was SECRETS_KEY changed?)');
      }
      const apiBaseUrl = str('api_base_url') || DEFAULT_API_BASE_URL;
      const problem = opts.client.literalProblem(apiBaseUrl);
      if (problem) return brokenProvider('whatsapp', problem);
      return whatsappProvider({
        apiBaseUrl,
        phoneNumberId: str('phone_number_id'),
        accessToken,
        client: opts.client,
        pacing,
        ratePerSecond: typeof channel.throughput_per_second === 'number' && channel.throughput_per_second > 0
          ? channel.throughput_per_second : opts.ratePerSecond,
        room,
        messagingLimit: messagingLimitOf(channel),
      });
    },
    periodicTasks: () => tasks,
    async close() {
      await pacing.flush();
    },
  };
}
