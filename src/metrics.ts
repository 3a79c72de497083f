/**
 * Prometheus metrics: one prom-client registry for the process, served as text at
 * GET /metrics (see http/metrics-route.ts). Metric objects are module singletons; labels stay
 * low-cardinality (route patterns, never raw paths; no company ids).
 *
 * | export              | name                                      | labels                     |
 * |---------------------|-------------------------------------------|----------------------------|
 * | httpRequests        | cms_http_requests_total                   | method, route, code        |
 * | httpDuration        | cms_http_request_duration_seconds         | method, route              |
 * | rateLimitRefusals   | cms_rate_limit_refusals_total             | operation                  |
 * | batchesAccepted     | cms_batches_accepted_total                | kind                       |
 * | messagesFinal       | cms_messages_final_total                  | status, provider           |
 * | queueDepth          | cms_queue_jobs                            | queue, state               |
 * | heldMessages        | cms_messages_held                         |                            |
 * | providerLatency     | cms_provider_request_duration_seconds     | provider, outcome          |
 * | receiptsTotal       | cms_receipts_total                        | source, outcome            |
 * | whatsappWebhookChanges | cms_whatsapp_webhook_changes_total     | field, handling            |
 * | eventAttempts       | cms_event_attempts_total                  | outcome                    |
 * plus prom-client's default process metrics under their standard names (process_*, nodejs_*: what
 * the usual Node.js dashboards and alerts read), without its gauges named `*_total`
 * (nodejs_active_{handles,requests,resources}_total: use `sum()` of the labelled gauge).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The registry /metrics serves. */
export const registry = new Registry();
// No prefix: the process and runtime metrics keep the names every Node.js exporter gives them.
collectDefaultMetrics({ register: registry });
// Prometheus naming (promtool check metrics): `_total` is for counters only. prom-client's
// defaults include three gauges named like counters, nodejs_active_{handles,requests,resources}_total;
// each is the sum of its labelled gauge (nodejs_active_handles{type} ...), so they are dropped:
// `sum(nodejs_active_handles)` gives the same number.
for (const metric of registry.getMetricsAsArray()) {
  if (metric instanceof Gauge && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name);
}

/**
 * HTTP requests answered, by method, route pattern (`unmatched` for 404s of unknown paths) and status
 * code (label `code`, as Prometheus's own HTTP metrics and client_golang's promhttp name it).
 */
export const httpRequests = new Counter({
  name: 'cms_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status code',
  labelNames: ['method', 'route', 'code'] as const,
  registers: [registry],
});

/** Time to answer an HTTP request, in seconds. */
export const httpDuration = new Histogram({
  name: 'cms_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method and route pattern',
  labelNames: ['method', 'route'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** Requests refused by a rate limit (429), by operation (e.g. `trigger_automation`). */
export const rateLimitRefusals = new Counter({
  name: 'cms_rate_limit_refusals_total',
  help: 'Requests refused with 429 by a rate limit, by operation',
  labelNames: ['operation'] as const,
  registers: [registry],
});

/** Send batches accepted, by kind (`automation` | `campaign`). */
export const batchesAccepted = new Counter({
  name: 'cms_batches_accepted_total',
  help: 'Send batches accepted, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/**
 * Messages that reached a final status, by status (`sent` | `failed` | `skipped`) and provider
 * (`outbox` | `webhook` | `whatsapp`; `none` for messages never handed to one: skipped, or failed
 * because the template did not render). Counted once, when the final status commits.
 */
export const messagesFinal = new Counter({
  name: 'cms_messages_final_total',
  help: 'Messages that reached a final status, by status and provider',
  labelNames: ['status', 'provider'] as const,
  registers: [registry],
});

/** Latency of one provider request (one attempt), by provider and outcome (`sent` | `failed` | `wait`). */
export const providerLatency = new Histogram({
  name: 'cms_provider_request_duration_seconds',
  help: 'Duration of one provider delivery attempt, by provider and outcome',
  labelNames: ['provider', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/**
 * Receipts and inbound messages taken from providers' webhooks (docs/decisions.md#9-whatsapp-webhooks-in, #10-gateway-receipts), by source
 * (`whatsapp` | `gateway`) and outcome: `applied` (a message moved forward), `ignored` (known message,
 * nothing to change: duplicate, late or final), `retried` (id not known yet, tried again shortly),
 * `unknown` (id never known: ignored), `inbound` (an inbound message stored).
 */
export const receiptsTotal = new Counter({
  name: 'cms_receipts_total',
  help: 'Receipts and inbound messages from provider webhooks, by source and outcome',
  labelNames: ['source', 'outcome'] as const,
  registers: [registry],
});

/**
 * Changes (`entry[].changes[]`) of accepted WhatsApp webhooks, by Meta's field (a field Meta does not
 * document is counted as `other`, so the label stays bounded) and handling: `applied` (messages,
 * template, quality and account changes the service acts on) or `ignored` (any other field or event).
 */
export const whatsappWebhookChanges = new Counter({
  name: 'cms_whatsapp_webhook_changes_total',
  help: 'Changes of accepted WhatsApp webhooks, by field and handling (applied or ignored)',
  labelNames: ['field', 'handling'] as const,
  registers: [registry],
});

/**
 * Event delivery attempts to companies' endpoints (docs/events.md), by outcome:
 * `delivered` (2xx), `retry` (failed, due again later), `failed` (schedule run out or 410).
 */
export const eventAttempts = new Counter({
  name: 'cms_event_attempts_total',
  help: 'Event delivery attempts to company endpoints, by outcome',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** What the queue-depth gauges read when scraped; set by the workers of this process. */
export interface QueueDepthSource {
  jobs(): Promise<{ queue: string; state: string; count: number }[]>;
  heldMessages(): Promise<number>;
}

let depthSource: QueueDepthSource | undefined;

/** Installs (or, with undefined, removes) what the queue-depth gauges read. */
export function setQueueDepthSource(source: QueueDepthSource | undefined): void {
  depthSource = source;
}

/** Background jobs per queue and state (`queued`, `deferred`, `active`), read from pg-boss when scraped. */
export const queueDepth = new Gauge({
  name: 'cms_queue_jobs',
  help: 'Background jobs per queue and state (queued: ready now; deferred: waiting for startAfter; active: running)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    if (!depthSource) return;
    try {
      for (const row of await depthSource.jobs()) this.set({ queue: row.queue, state: row.state }, row.count);
    } catch {
      // A scrape must not fail because the database is briefly unavailable.
    }
  },
});

/** Campaign messages held outside delivery hours, waiting for their window. */
export const heldMessages = new Gauge({
  name: 'cms_messages_held',
  help: 'Campaign messages held outside delivery hours, waiting for their window to open',
  registers: [registry],
  async collect() {
    this.reset();
    if (!depthSource) return;
    try {
      this.set(await depthSource.heldMessages());
    } catch {
      // see queueDepth
    }
  },
});
