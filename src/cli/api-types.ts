/**
 * Request and response shapes of the operator API (`/admin/...`), as fixed by
 * `shared/spec/operator-api.md`. Servers may add fields; these types list the
 * fixed ones and allow extra keys where the CLI passes answers through.
 */

/** Delivery window of a company: local times `HH:MM` in an IANA time zone. */
export interface DeliveryHours {
  start: string;
  end: string;
  timezone: string;
}

/** Body of POST /admin/companies; every field but `name` is optional. */
export interface CompanyCreate {
  name: string;
  subscription_active?: boolean;
  default_country?: string;
  delivery_hours?: DeliveryHours | null;
}

/** Body of PATCH /admin/companies/{company_id}: any subset of the create fields. */
export type CompanyUpdate = Partial<CompanyCreate>;

/** A company as the server returns it (201 on create, 200 on update). */
export interface Company {
  company_id: number | string;
  name: string;
  subscription_active: boolean;
  default_country: string | null;
  delivery_hours: DeliveryHours | null;
  [extra: string]: unknown;
}

/** Answer of POST /admin/companies/{id}/api-keys; `api_key` is only ever shown here. */
export interface ApiKeyCreated {
  key_id: number | string;
  api_key: string;
  label: string | null;
  [extra: string]: unknown;
}

/** One contact in PUT /admin/companies/{id}/contacts. */
export interface ContactInput {
  phone: string;
  first_name?: string;
  last_name?: string;
  variables?: Record<string, string>;
  opted_out?: boolean;
}

/** Answer of PUT /admin/companies/{id}/contacts (counts of contacts in the request). */
export interface ContactsResult {
  created: number;
  updated: number;
  invalid: number;
}

/** Message template of automations and campaigns (operator-api.md, "template"). */
export interface Template {
  header: { type: 'none' | 'text' | 'image' | 'video'; text?: string; url?: string };
  body: string;
  buttons: { type: 'url'; text: string; url: string }[];
  whatsapp?: { name: string; language: string };
  [extra: string]: unknown;
}

/** Body of POST /admin/companies/{id}/automations. */
export interface AutomationCreate {
  name: string;
  type: string;
  active: boolean;
  template: unknown;
}

/** Body of PATCH /admin/automations/{automation_id}. */
export interface AutomationUpdate {
  name?: string;
  active?: boolean;
  template?: unknown;
}

/** An automation as returned by the server (at least its id). */
export interface Automation {
  automation_id: number | string;
  [extra: string]: unknown;
}

/** Body of POST /admin/companies/{id}/campaigns. */
export interface CampaignCreate {
  name: string;
  template: unknown;
}

/** A campaign as returned by the server (at least its id). */
export interface Campaign {
  campaign_id: number | string;
  [extra: string]: unknown;
}

/** Body of PUT /admin/companies/{id}/connector. */
export interface ConnectorSettings {
  connected: boolean;
  provider?: string;
}

/** Body of PUT /admin/companies/{id}/channel, one shape per provider. */
export type ChannelSettings =
  | { provider: 'outbox' }
  | { provider: 'webhook'; url: string; secret: string }
  | { provider: 'whatsapp'; phone_number_id: string; access_token: string; api_base_url?: string };

/**
 * Answer of GET /admin/batches/{batch_id}. `counts` is the funnel (receipts-and-events.md §1): a read
 * message counts in sent, delivered and read; total = sent + failed + skipped + pending.
 */
export interface Batch {
  batch_id: string;
  kind: 'automation' | 'campaign';
  status: 'accepted' | 'processing' | 'completed';
  counts: { total: number; sent: number; delivered?: number; read?: number; failed: number; skipped: number; pending: number };
  ignored_contacts: number;
  created_at: string;
  completed_at: string | null;
  [extra: string]: unknown;
}

/** One message of GET /admin/batches/{batch_id}/messages. */
export interface BatchMessage {
  message_id: string;
  phone: string;
  status: string;
  reason?: string | null;
  error?: string | null;
  error_code?: string | null;
  attempts: number;
  scheduled_for?: string | null;
  /** A pending message waiting for a retry: when it is attempted again. */
  next_attempt_at?: string | null;
  provider_message_id?: string | null;
  sent_at?: string | null;
  delivered_at?: string | null;
  read_at?: string | null;
  failed_at?: string | null;
  rendered: unknown;
  [extra: string]: unknown;
}

/** One entry of GET /admin/audit. */
export interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  target: string;
  details: unknown;
  [extra: string]: unknown;
}

/** Item of a 422 validation error body (api.md part 7). */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: unknown;
  input?: unknown;
}
