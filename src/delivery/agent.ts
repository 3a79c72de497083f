/**
 * The one HTTP agent factory of outbound delivery: a keep-alive undici Agent that connects only to
 * addresses the network guard allows (delivery/network-guard.ts `guardedLookup`, checked per connection
 * after DNS, so a changed DNS answer cannot redirect a delivery). The service's one outbound client
 * (client.ts) makes them, one per use (messages, events, templates, test events); nothing else does.
 */
import { Agent } from 'undici';
import { guardedLookup, type AddressPolicy } from './network-guard.ts';

export interface DeliveryAgentOptions {
  /** Bound (ms; DELIVERY_TIMEOUT) of connecting and of each wait for headers or body data. */
  timeoutMs: number;
  /** Connections kept per receiving origin. */
  connections: number;
}

/** A guarded keep-alive agent (see the module comment); close it when its user stops. */
export function createDeliveryAgent(policy: AddressPolicy, opts: DeliveryAgentOptions): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy), timeout: opts.timeoutMs },
    connections: opts.connections,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
}
