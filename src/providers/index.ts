/**
 * The provider registry: the providers that plug in (providers/types.ts ProviderPlugin) and the choice
 * of a company's provider from `companies.channel` (docs/operator-api.md PUT .../channel):
 * `{provider:'outbox'}` | `{provider:'webhook', url, secret_sealed}` (webhook.ts) |
 * `{provider:'whatsapp', phone_number_id, api_base_url, access_token_sealed}` (whatsapp/index.ts).
 *
 * Sealed secrets are opened by the plugins, once per distinct channel value (an LRU keyed by the stored
 * JSON, so a changed channel takes effect on the next chunk), and live only inside the provider
 * closures. Every request goes through the service's one outbound client (delivery/client.ts), which
 * connects only to addresses the network guard allows (checked per connection, after DNS); a URL with
 * a literal private address fails its messages without a request.
 *
 * The queue sees the registry only: `forChannel` for a chunk's provider, `periodicTasks` for its
 * sweep, `close` when it stops; it names no provider.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { createDeliveryClient, type DeliveryClient } from '../delivery/client.ts';
import type { AddressPolicy } from '../delivery/network-guard.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { outboxProvider } from './outbox.ts';
import type { PeriodicTask, Provider, ProviderPlugin } from './types.ts';
import { webhookPlugin } from './webhook.ts';
import { whatsappPlugin } from './whatsapp/index.ts';
import type { WhatsappPacing } from './whatsapp/pacing.ts';
import type { PacingPort, TemplateAvailability } from './whatsapp/room.ts';

export type { PeriodicTask, Provider, ProviderName, ProviderPlugin, SendResult } from './types.ts';

export interface ProviderRegistry {
  /** The provider for a stored channel value. Never throws: an unusable channel fails its messages. */
  forChannel(channel: Record<string, unknown> | null | undefined): Provider;
  /** Every plugin's periodic tasks, for the workers' sweep. */
  periodicTasks(): PeriodicTask[];
  /** Whether the provider named `provider` (a channel's `provider`; null: the outbox) refuses empty template parameters. */
  refusesEmptyParameters(provider: string | null | undefined): boolean;
  /** The process's WhatsApp pacing (whatsapp/pacing.ts), for tests and tools that look at it. */
  readonly whatsappPacing: WhatsappPacing;
  /** Closes the plugins (and the outbound client when the registry made its own). */
  close(): Promise<void>;
}

export interface ProviderRegistryOptions {
  secrets: SecretBox;
  /**
   * The service's one outbound client (delivery/client.ts), built by src/service.ts. Absent (tests):
   * the registry builds one from `addressPolicy` and `deliveryTimeoutMs` and closes it with itself.
   */
  client?: DeliveryClient;
  /** Which addresses deliveries may connect to (delivery/network-guard.ts); used only without `client`. */
  addressPolicy?: AddressPolicy;
  /** One delivery attempt's bound (ms; DELIVERY_TIMEOUT); used only without `client`. */
  deliveryTimeoutMs?: number;
  /** WhatsApp throughput per phone number (messages per second) when the channel has no throughput_per_second. */
  whatsappRatePerSecond: number;
  /** WHATSAPP_PAIR_INTERVAL (ms). */
  whatsappPairIntervalMs: number;
  /** WHATSAPP_PACING_MARGIN (ms; default the pacing's own, 40). */
  whatsappPacingMarginMs?: number;
  /** WHATSAPP_TEMPLATE_SYNC (ms); absent: no periodic template sync. */
  whatsappTemplateSyncMs?: number;
  /** The database and clock of the WhatsApp pacing, send-time rules and catalogue (providers/whatsapp/room.ts). */
  db: Db;
  clock: Clock;
  /**
   * The catalogue's send-time answer (default: the catalogue's templateAvailability; null: every
   * template counts as approved) and the pacing (default: the registry's WhatsappPacing; null: everything admitted).
   */
  whatsapp?: { templateAvailability?: TemplateAvailability | null; pacing?: PacingPort | null };
}

/** The providers' settings of the configuration (WHATSAPP_*), for {@link createProviderRegistry}. */
export function providerSettings(config: Config): Pick<ProviderRegistryOptions, 'whatsappRatePerSecond' | 'whatsappPairIntervalMs' | 'whatsappPacingMarginMs' | 'whatsappTemplateSyncMs'> {
  return {
    whatsappRatePerSecond: config.whatsappRatePerSecond,
    whatsappPairIntervalMs: config.whatsappPairIntervalMs,
    whatsappPacingMarginMs: config.whatsappPacingMarginMs,
    whatsappTemplateSyncMs: config.whatsappTemplateSyncMs,
  };
}

/** Creates the process's provider registry. */
export function createProviderRegistry(opts: ProviderRegistryOptions): ProviderRegistry {
  const owned = opts.client ? undefined : createDeliveryClient({ policy: opts.addressPolicy ?? { hosts: new Set(), ranges: [] }, timeoutMs: opts.deliveryTimeoutMs ?? 15_000 });
  const client = opts.client ?? owned!;
  const whatsapp = whatsappPlugin({
    secrets: opts.secrets, client, db: opts.db, clock: opts.clock,
    ratePerSecond: opts.whatsappRatePerSecond, pairIntervalMs: opts.whatsappPairIntervalMs, pacingMarginMs: opts.whatsappPacingMarginMs,
    templateSyncMs: opts.whatsappTemplateSyncMs,
    templateAvailability: opts.whatsapp?.templateAvailability, pacing: opts.whatsapp?.pacing,
  });
  const plugins = new Map<string, ProviderPlugin>([
    ['webhook', webhookPlugin({ secrets: opts.secrets, client })],
    ['whatsapp', whatsapp],
  ]);
  const cache = new LRUCache<string, Provider>({ max: 1_000 });

  return {
    whatsappPacing: whatsapp.pacing,
    forChannel(channel) {
      if (!channel || channel.provider === 'outbox' || channel.provider === undefined) return outboxProvider;
      const key = JSON.stringify(channel);
      let provider = cache.get(key);
      if (!provider) {
        const plugin = plugins.get(String(channel.provider));
        provider = plugin ? plugin.forChannel(channel) : outboxProvider;
        cache.set(key, provider);
      }
      return provider;
    },
    periodicTasks: () => [...plugins.values()].flatMap((p) => p.periodicTasks?.() ?? []),
    refusesEmptyParameters: (provider) => (provider ? plugins.get(provider)?.refusesEmptyParameters : false) ?? false,
    async close() {
      cache.clear();
      for (const p of plugins.values()) await p.close?.();
      await owned?.close();
    },
  };
}
