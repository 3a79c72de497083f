/**
 * Chooses a company's provider from `companies.channel` (docs/operator-api.md PUT .../channel):
 * `{provider:'outbox'}` | `{provider:'webhook', url, secret_sealed}` |
 * `{provider:'whatsapp', phone_number_id, api_base_url, access_token_sealed}`.
 *
 * Sealed secrets are opened here, once per distinct channel value (an LRU keyed by the stored JSON,
 * so a changed channel takes effect on the next chunk), and live only inside the provider closures.
 * One keep-alive HTTP agent and one WhatsappPacing (whatsapp/pacing.ts: throughput slots, pair rate and
 * messaging limit, shared with the other processes through the database) serve every company of the
 * process; a WhatsApp channel's `throughput_per_second` is its rate (WHATSAPP_RATE_PER_SECOND when unset). The agent
 * connects only to addresses the network guard allows (checked per connection, after DNS); a URL
 * with a literal private address fails its messages without a request.
 */
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { createDeliveryAgent } from '../delivery/agent.ts';
import { isAllowedAddress, type AddressPolicy } from '../domain/network-guard.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { outboxProvider } from './outbox.ts';
import type { Provider, ProviderName } from './types.ts';
import { WEBHOOK_CONNECTIONS_PER_ORIGIN, webhookProvider } from './webhook.ts';
import { whatsappProvider } from './whatsapp.ts';
import { WhatsappPacing } from './whatsapp/pacing.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { messagingLimitOf, type PacingPort, type TemplateAvailability, type WhatsappRoom } from './whatsapp/room.ts';
import { templateAvailability } from '../domain/whatsapp-templates.ts';

export type { Provider, ProviderName, SendResult } from './types.ts';

/** A provider that cannot be built (corrupt channel, secret sealed under another key): fails each message. */
function brokenProvider(name: ProviderName, error: string): Provider {
  return { name, async send() { return { status: 'failed', retryable: false, error }; } };
}

export interface ProviderRegistry {
  /** The provider for a stored channel value. Never throws: an unusable channel fails its messages. */
  forChannel(channel: Record<string, unknown> | null | undefined): Provider;
  /** The process's WhatsApp pacing (admit() for the pair rate and messaging limit; prune() for the sweep). */
  readonly whatsappPacing: WhatsappPacing;
  close(): Promise<void>;
}

export interface ProviderRegistryOptions {
  secrets: SecretBox;
  /** WhatsApp throughput per phone number (messages per second) when the channel has no throughput_per_second. */
  whatsappRatePerSecond: number;
  /** WHATSAPP_PAIR_INTERVAL (ms). */
  whatsappPairIntervalMs: number;
  /** WHATSAPP_PACING_MARGIN (ms; default the pacing's own, 40). */
  whatsappPacingMarginMs?: number;
  /** The database and clock of the WhatsApp pacing and send-time rules (providers/whatsapp/room.ts). */
  db: Db;
  clock: Clock;
  /** Which addresses deliveries may connect to (domain/network-guard.ts). */
  addressPolicy: AddressPolicy;
  /** One delivery attempt's bound, connect to last byte (ms; DELIVERY_TIMEOUT, docs/decisions.md#8-retries). */
  deliveryTimeoutMs: number;
  /**
   * The catalogue's send-time answer (default: the catalogue's templateAvailability; null: every
   * template counts as approved) and the pacing (default: the registry's WhatsappPacing; null: everything admitted).
   */
  whatsapp?: { templateAvailability?: TemplateAvailability | null; pacing?: PacingPort | null };
}

/** A problem with a provider URL's literal IP address (names are checked at connect time), or null. */
function literalAddressProblem(url: string, policy: AddressPolicy): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return 'the provider URL is not a URL';
  }
  if (isIP(host) && !policy.hosts.has(host) && !isAllowedAddress(host, policy)) {
    return `refused to connect to ${host}: private or reserved address`;
  }
  return null;
}

/** Creates the process's provider registry. */
export function createProviderRegistry(opts: ProviderRegistryOptions): ProviderRegistry {
  const agent = createDeliveryAgent(opts.addressPolicy, { timeoutMs: opts.deliveryTimeoutMs, connections: WEBHOOK_CONNECTIONS_PER_ORIGIN });
  const whatsappPacing = new WhatsappPacing(opts.db, opts.clock, { pairIntervalMs: opts.whatsappPairIntervalMs, marginMs: opts.whatsappPacingMarginMs });
  const cache = new LRUCache<string, Provider>({ max: 1_000 });
  const room: WhatsappRoom = {
    db: opts.db, clock: opts.clock,
    templateAvailability: opts.whatsapp?.templateAvailability === undefined ? templateAvailability : opts.whatsapp.templateAvailability,
    pacing: opts.whatsapp?.pacing === undefined ? whatsappPacing : opts.whatsapp.pacing,
  };

  function build(channel: Record<string, unknown>): Provider {
    const str = (key: string) => (typeof channel[key] === 'string' ? (channel[key] as string) : '');
    switch (channel.provider) {
      case 'webhook': {
        let secret: string;
        try {
          secret = opts.secrets.open(str('secret_sealed'));
        } catch {
          return brokenProvider('webhook', 'the webhook secret cannot be opened (was SECRETS_KEY changed?)');
        }
        const problem = literalAddressProblem(str('url'), opts.addressPolicy);
        if (problem) return brokenProvider('webhook', problem);
        return webhookProvider({ url: str('url'), secret, agent, timeoutMs: opts.deliveryTimeoutMs });
      }
      case 'whatsapp': {
        let accessToken: string;
        try {
          accessToken = opts.secrets.open(str('access_token_sealed'));
        } catch {
          return brokenProvider('whatsapp', 'the whatsapp access token cannot be opened (was SECRETS_KEY changed?)');
        }
        const apiBaseUrl = str('api_base_url') || 'https://graph.facebook.com/v21.0';
        const problem = literalAddressProblem(apiBaseUrl, opts.addressPolicy);
        if (problem) return brokenProvider('whatsapp', problem);
        return whatsappProvider({
          apiBaseUrl,
          phoneNumberId: str('phone_number_id'),
          accessToken,
          agent,
          pacing: whatsappPacing,
          ratePerSecond: typeof channel.throughput_per_second === 'number' && channel.throughput_per_second > 0
            ? channel.throughput_per_second : opts.whatsappRatePerSecond,
          timeoutMs: opts.deliveryTimeoutMs,
          room,
          messagingLimit: messagingLimitOf(channel),
        });
      }
      default:
        return outboxProvider;
    }
  }

  return {
    whatsappPacing,
    forChannel(channel) {
      if (!channel || channel.provider === 'outbox' || channel.provider === undefined) return outboxProvider;
      const key = JSON.stringify(channel);
      let provider = cache.get(key);
      if (!provider) {
        provider = build(channel);
        cache.set(key, provider);
      }
      return provider;
    },
    async close() {
      cache.clear();
      await whatsappPacing.flush();
      await agent.close();
    },
  };
}
