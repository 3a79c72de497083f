/** Shapes of the operator API's event-endpoint answers (receipts-and-events.md §5), as the CLI reads them. */

/** An event endpoint (never its secret). */
export interface EventEndpoint {
  endpoint_id: number;
  company_id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
}

/** POST /admin/companies/{id}/event-endpoints: the endpoint and its secret (shown once). */
export interface EventEndpointCreated extends EventEndpoint { secret: string }

/** One line of GET /admin/event-endpoints/{id}/attempts. */
export interface EventAttempt {
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  at: string;
}

/** The event types an endpoint may subscribe to. */
export const EVENT_TYPE_NAMES = [
  'message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.skipped',
  'batch.completed', 'contact.opted_out', 'contact.opted_in', 'message.received',
] as const;
