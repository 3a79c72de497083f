/**
 * The one outbound HTTP client of the service (docs/decisions.md#8-retries, docs/events.md): every
 * request the service makes to the outside goes through it — message webhooks (providers/webhook.ts),
 * WhatsApp message sends (providers/whatsapp/send.ts), Meta's template endpoints
 * (providers/whatsapp/templates-api.ts), event deliveries (queue/events/send.ts) and test events
 * (queue/events/test-event.ts). Built ONCE per process by the service's wiring (src/service.ts) and
 * handed out (AppDeps.delivery, the workers' and the event loop's deps).
 *
 * What it holds, built once:
 * - the network guard (network-guard.ts): the address policy (PROVIDER_ALLOWED_HOSTS), checked per
 *   connection after DNS by each agent's lookup, and before any connection for literal addresses
 *   (`literalProblem`);
 * - the guarded keep-alive agents (agent.ts `createDeliveryAgent`, called here and nowhere else), one
 *   per use so that each use keeps its own connection count per receiving origin: `messages` 128
 *   (webhook and WhatsApp sends: up to 128 requests of a worker's chunks in flight to one receiver),
 *   `events` max(EVENT_CONCURRENCY, 16), `templates` 16 (people and the periodic sync call Meta one
 *   request at a time), `tests` 16 (test events, one per click). An agent is made on its first use,
 *   so an API process never opens the workers' pools;
 * - the bound of one attempt, connect to last byte (`timeoutMs`, DELIVERY_TIMEOUT);
 * - size-capped answers (exchange.ts: 64 KiB, 4 MiB for Meta's template pages; a larger answer is cut
 *   off and is a retryable failure);
 * - the failure classifier and Retry-After (failure.ts), applied by exchange.ts to network errors and
 *   by `postSigned` (post.ts) to statuses; providers with their own error tables classify statuses
 *   themselves, calling `isRetryableStatus` for answers their table does not know.
 *
 * close(): closes every agent made (after the workers and the event loop stopped).
 */
import type { Agent } from 'undici';
import { createDeliveryAgent } from './agent.ts';
import { exchange, type Exchange, type OutboundRequest } from './exchange.ts';
import { literalAddressProblem, type AddressPolicy } from './network-guard.ts';
import { postSigned, type PostOutcome, type SignedPost } from './post.ts';

/** What a request is for: each use has its own connection pools (see the module comment). */
export type DeliveryUse = 'messages' | 'events' | 'templates' | 'tests';

/** Connections kept per receiving origin, by use (see the module comment); `events` is raised to EVENT_CONCURRENCY. */
export const DEFAULT_CONNECTIONS: Readonly<Record<DeliveryUse, number>> = { messages: 128, events: 16, templates: 16, tests: 16 };

export interface DeliveryClientOptions {
  /** Which addresses requests may connect to (PROVIDER_ALLOWED_HOSTS, network-guard.ts). */
  policy: AddressPolicy;
  /** One attempt's bound, connect to last byte (ms; DELIVERY_TIMEOUT). */
  timeoutMs: number;
  /** Connections per origin by use (defaults: DEFAULT_CONNECTIONS). */
  connections?: Partial<Record<DeliveryUse, number>>;
}

/** The client (see the module comment). */
export interface DeliveryClient {
  /** The address policy of the guard. */
  readonly policy: AddressPolicy;
  /** One attempt's bound (ms; DELIVERY_TIMEOUT). */
  readonly timeoutMs: number;
  /**
   * One request for `use` (exchange.ts): guarded, bounded by `timeoutMs`, its answer read up to
   * `req.cap` bytes (default 64 KiB). Never throws.
   */
  request(use: DeliveryUse, req: OutboundRequest): Promise<Exchange>;
  /** One signed POST for `use` (post.ts: Standard Webhooks headers, 64 KiB cap, classified). Never throws. */
  postSigned(use: DeliveryUse, req: Omit<SignedPost, 'agent' | 'timeoutMs'>): Promise<PostOutcome>;
  /**
   * The refusal of a URL whose host is a literal private or reserved address (checked before any
   * connection; names are checked when connecting), `the provider URL is not a URL`, or null.
   */
  literalProblem(url: string): string | null;
  /** Closes the agents made so far; the client is not used afterwards. */
  close(): Promise<void>;
}

/** Builds the client (see the module comment); agents are made on first use. */
export function createDeliveryClient(opts: DeliveryClientOptions): DeliveryClient {
  const connections = { ...DEFAULT_CONNECTIONS, ...opts.connections };
  const agents = new Map<DeliveryUse, Agent>();
  const agentFor = (use: DeliveryUse): Agent => {
    let agent = agents.get(use);
    if (!agent) {
      agent = createDeliveryAgent(opts.policy, { timeoutMs: opts.timeoutMs, connections: connections[use] });
      agents.set(use, agent);
    }
    return agent;
  };
  return {
    policy: opts.policy,
    timeoutMs: opts.timeoutMs,
    request: (use, req) => exchange(agentFor(use), opts.timeoutMs, req),
    postSigned: (use, req) => postSigned({ ...req, agent: agentFor(use), timeoutMs: opts.timeoutMs }),
    literalProblem: (url) => literalAddressProblem(url, opts.policy),
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((a) => a.close().catch(() => {})));
    },
  };
}
