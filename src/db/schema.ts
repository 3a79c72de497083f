/**
 * Kysely table types for the schema that `migrations/*.sql` creates (one source of truth: the SQL;
 * these types mirror it). Timestamps come back as Date, jsonb as parsed JSON, int8 as number.
 */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = Date;
type Json<T = unknown> = ColumnType<T, string, string>;

/** Delivery window of a company, times as HH:MM in an IANA timezone (docs/operator-api.md). */
export interface DeliveryHours { start: string; end: string; timezone: string }

/** 029: a company's frequency cap: at most `messages` campaign messages per contact within `per` (`7d`; docs/audience.md). */
export interface FrequencyCap { messages: number; per: string }

export interface CompaniesTable {
  company_id: Generated<number>;
  name: string;
  subscription_active: Generated<boolean>;
  default_country: Generated<string>;
  delivery_hours: Json<DeliveryHours | null> | null;
  connector_connected: Generated<boolean>;
  connector_provider: string | null;
  channel: ColumnType<Record<string, unknown>, string | undefined, string>;
  segment_count: Generated<number>;
  created_at: Generated<Timestamp>;
  /** 008: inbound texts that opt a contact out of / back into campaigns (docs/decisions.md#9-whatsapp-webhooks-in). */
  opt_out_keywords: Generated<string[]>;
  opt_in_keywords: Generated<string[]>;
  /** 029: the frequency cap of campaign messages, or null (none). */
  frequency_cap: Json<FrequencyCap | null> | null;
}

export interface ApiKeysTable {
  key_id: Generated<number>;
  company_id: number;
  key_hash: Uint8Array;
  prefix: string;
  label: string | null;
  created_at: Generated<Timestamp>;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface ContactsTable {
  contact_id: Generated<number>;
  company_id: number;
  phone: string;
  sha256_plus: Uint8Array;
  sha256_bare: Uint8Array;
  first_name: string | null;
  last_name: string | null;
  variables: ColumnType<Record<string, unknown>, string | undefined, string>;
  opted_out: Generated<boolean>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
  /** 008: where the current opt-out state came from ('keyword', 'operator', 'import', 'console'). */
  opt_out_source: string | null;
  /** 008: when `opted_out` last changed. */
  opt_out_at: Timestamp | null;
  /** 017: the last inbound message's time (the customer-service window is open 24 h after it). */
  last_inbound_at: Timestamp | null;
  /** 026: the contact's tags, distinct and sorted. */
  tags: Generated<string[]>;
  /** 026: ISO 3166 alpha-2 of the number; '' when it has none; null when not computed yet. */
  country: string | null;
  /** 029: what proves the current opt-out state (copied into the consent ledger with each change). */
  opt_out_evidence: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

export interface SegmentsTable {
  segment_id: Generated<number>;
  company_id: number;
  name: string;
  created_at: Generated<Timestamp>;
  /** 026: a dynamic segment's filter (docs/segments.md); null for a static segment. */
  filter: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface SegmentMembersTable {
  segment_id: number;
  contact_id: number;
  added_at: Generated<Timestamp>;
}

export interface AutomationsTable {
  automation_id: Generated<number>;
  company_id: number;
  name: string;
  type: string;
  active: boolean;
  template: Json<Record<string, unknown>>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
  /** 017: a duration (`24h`) after which a message of this source is no longer sent, or null. */
  expire_after: string | null;
  /** 034: when it was archived (hidden from lists, cannot be triggered); null: not archived. */
  archived_at: Timestamp | null;
}

export interface CampaignsTable {
  campaign_id: Generated<number>;
  company_id: number;
  name: string;
  template: Json<Record<string, unknown>>;
  created_at: Generated<Timestamp>;
  /** 017: a duration (default `24h`) after which a message of this campaign is no longer sent, or null. */
  expire_after: Generated<string | null>;
  /** 029: this campaign's messages are not held to the company's frequency cap. */
  ignore_frequency_cap: Generated<boolean>;
  /** 034: when it was archived (hidden from lists, cannot be sent); null: not archived. */
  archived_at: Timestamp | null;
}

export type BatchKind = 'automation' | 'campaign';
export type BatchStatus = 'accepted' | 'processing' | 'completed';

export interface BatchesTable {
  batch_id: string;
  company_id: number;
  kind: BatchKind;
  source_id: number;
  status: Generated<BatchStatus>;
  total: number;
  ignored_contacts: Generated<number>;
  /** JSON text of the batch's distinct items (migration 007), parsed by the worker. */
  items: string;
  overrides: ColumnType<Record<string, unknown>, string | undefined, string>;
  template: Json<Record<string, unknown>>;
  created_at: Generated<Timestamp>;
  completed_at: Timestamp | null;
  /** 027: items whose message row is written (the fan-out's progress; total when done). */
  fanned_out: Generated<number>;
  /** 027: when an operator paused the batch (null: not paused). */
  paused_at: Timestamp | null;
  /** 027: when the batch was cancelled (null: not cancelled). */
  cancelled_at: Timestamp | null;
}

export type MessageStatus = 'pending' | 'sent' | 'delivered' | 'read' | 'failed' | 'skipped';

export interface MessagesTable {
  message_id: string;
  batch_id: string;
  company_id: number;
  seq: number;
  contact_id: number | null;
  phone: string;
  status: Generated<MessageStatus>;
  reason: string | null;
  error: string | null;
  attempts: Generated<number>;
  scheduled_for: Timestamp | null;
  sent_at: Timestamp | null;
  rendered: Json<Record<string, unknown> | null> | null;
  updated_at: Generated<Timestamp>;
  /** 002: a delivery run's claim on a pending message (database time). */
  lease_until: Timestamp | null;
  /** 002: a held campaign message waits for its delivery window (or, 008, its next retry) until this time. */
  held_until: Timestamp | null;
  /** 008: the provider's id (WhatsApp wamid; the webhook provider's webhook-id). */
  provider_message_id: string | null;
  delivered_at: Timestamp | null;
  read_at: Timestamp | null;
  failed_at: Timestamp | null;
  /** 008: the provider's error code of a failure (e.g. WhatsApp 131026). */
  error_code: string | null;
  /** 008: a transient failure's next attempt (the injectable clock's time). */
  next_attempt_at: Timestamp | null;
  /** 017: not handed to the provider by then, the message ends skipped with reason `expired`. */
  expires_at: Timestamp | null;
  /** 017: the provider's error as given: `{code, title, message, details}`. */
  provider_error: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** 019: attempts that ended in a wait not counted against DELIVERY_RETRY_SCHEDULE (of `attempts`). */
  uncounted_attempts: Generated<number>;
}

/** 008: a message a contact sent to the company (docs/decisions.md#9-whatsapp-webhooks-in). */
export interface InboundMessagesTable {
  inbound_id: Generated<number>;
  company_id: number;
  contact_id: number;
  provider_message_id: string;
  type: string;
  text: string | null;
  payload: string | null;
  received_at: Timestamp;
  created_at: Generated<Timestamp>;
  /** 018: the provider id of the message this one answers (context.id, or the message reacted to). */
  reply_to_provider_message_id: string | null;
  /** 018: {emoji, provider_message_id} of a reaction. */
  reaction: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** 018: {id, mime_type, sha256?, filename?} of a media message. */
  media: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** 018: {latitude, longitude, name?, address?, url?} of a location. */
  location: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

/** 008: a company's event endpoint (docs/events.md). */
export interface EventEndpointsTable {
  endpoint_id: Generated<number>;
  company_id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: Generated<boolean>;
  secret_sealed: string;
  disabled_reason: string | null;
  failing_since: Timestamp | null;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

/** 008: one event of the transactional outbox; `payload` is the whole body sent. Written by triggers. */
export interface EventsTable {
  event_id: string;
  company_id: number;
  type: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  created_at: Generated<Timestamp>;
}

export type EventDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** 008: one event to one endpoint; NULL `next_attempt_at` is due now. */
export interface EventDeliveriesTable {
  event_id: string;
  endpoint_id: number;
  status: Generated<EventDeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  lease_until: Timestamp | null;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
  /** 018: creation order (deliveries are claimed oldest first). */
  seq: Generated<string>;
}

/** 008: one attempt to deliver an event to an endpoint. */
export interface EventAttemptsTable {
  attempt_id: Generated<number>;
  event_id: string;
  endpoint_id: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  at: Timestamp;
}

/** 013: what a console user may do: `owner`, `developer` or `marketer` (src/domain/users/roles.ts ROLES). */
export type ConsoleRole = 'owner' | 'developer' | 'marketer';

/** 004: a person of one company who signs in to the console. */
export interface ConsoleUsersTable {
  user_id: Generated<number>;
  company_id: number;
  /** Lowercased; unique across companies. */
  email: string;
  /** argon2id PHC string. */
  password_hash: string;
  created_at: Generated<Timestamp>;
  password_changed_at: Generated<Timestamp>;
  /** 013: what the user may do in the console. */
  role: ConsoleRole;
}

/** 004: an operator's one-time invitation link (only the SHA-256 of its token is stored). */
export interface ConsoleInvitationsTable {
  invitation_id: Generated<number>;
  company_id: number;
  email: string;
  token_hash: Uint8Array;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** 013: the role the person gets on accepting. */
  role: ConsoleRole;
  /** 013: audit actor who invited (`admin` or `console:<email>`). */
  invited_by: string;
}

/** 013: a one-time password reset link of a console user (only the SHA-256 of its token is stored). */
export interface ConsolePasswordResetsTable {
  reset_id: Generated<number>;
  user_id: number;
  token_hash: Uint8Array;
  /** Audit actor who made the link (`admin` or `console:<email>`). */
  created_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

/** 004: a console session (only the SHA-256 of the cookie value is stored). */
export interface ConsoleSessionsTable {
  session_hash: Uint8Array;
  user_id: number;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
}

/** 004: failed sign-in attempts of one bucket (email or client address) in the current window. */
export interface ConsoleLoginFailuresTable {
  bucket: string;
  failures: number;
  window_start: Timestamp;
}

/** 004: installation-wide secrets the console generates once (e.g. the cookie-signing key). */
export interface ConsoleSecretsTable {
  name: string;
  value: string;
}

/** 029: one change of a number's opt-out state, kept under the SHA-256 of its E.164 form (docs/audience.md). */
export interface ConsentLedgerTable {
  entry_id: Generated<number>;
  company_id: number;
  phone_sha256: Uint8Array;
  at: Timestamp;
  opted_out: boolean;
  source: string;
  category: Generated<string>;
  evidence: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The number's contact was erased (the entry stays, without personal data). */
  erased: Generated<boolean>;
}

/** The whole database, as Kysely sees it. */
export interface DB {
  companies: CompaniesTable;
  api_keys: ApiKeysTable;
  contacts: ContactsTable;
  consent_ledger: ConsentLedgerTable;
  segments: SegmentsTable;
  segment_members: SegmentMembersTable;
  automations: AutomationsTable;
  campaigns: CampaignsTable;
  batches: BatchesTable;
  messages: MessagesTable;
  console_users: ConsoleUsersTable;
  console_invitations: ConsoleInvitationsTable;
  console_sessions: ConsoleSessionsTable;
  console_login_failures: ConsoleLoginFailuresTable;
  console_password_resets: ConsolePasswordResetsTable;
  console_secrets: ConsoleSecretsTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_log: AuditLogTable;
  inbound_messages: InboundMessagesTable;
  event_endpoints: EventEndpointsTable;
  events: EventsTable;
  event_deliveries: EventDeliveriesTable;
  event_attempts: EventAttemptsTable;
  whatsapp_templates: WhatsappTemplatesTable;
  whatsapp_channel_state: WhatsappChannelStateTable;
  whatsapp_pairs: WhatsappPairsTable;
  whatsapp_limit_counts: WhatsappLimitCountsTable;
  whatsapp_rate_card: WhatsappRateCardTable;
  whatsapp_rates: WhatsappRatesTable;
}

/** 039: the WhatsApp rate card's one row (absent before the first load; docs/whatsapp.md "Pricing and the rate card"). */
export interface WhatsappRateCardTable {
  card: Generated<boolean>;
  /** ISO 4217; null when the card is empty. */
  currency: string | null;
  updated_at: Timestamp;
}

/** 039: one rate of the card: price (numeric, read as decimal text) of a delivered template message by country and category. */
export interface WhatsappRatesTable {
  country: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  price: ColumnType<string, string, string>;
}

/** 017: the synced copy of a company's WhatsApp templates (docs/whatsapp.md, the catalogue). */
export interface WhatsappTemplatesTable {
  company_id: number;
  template_id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  quality_score: string | null;
  rejected_reason: string | null;
  /** `{header: 0 | 1 | 'image' | 'video' | 'document', body: n, buttons: n[]}` */
  parameters: Json<WhatsappTemplateParameters>;
  components: Json<unknown[]>;
  synced_at: Timestamp;
}

/** How many `{{n}}` placeholders a WhatsApp template has, per component. */
export interface WhatsappTemplateParameters {
  header: 0 | 1 | 'image' | 'video' | 'document';
  body: number;
  buttons: number[];
}

/** 017: a WhatsApp channel's state (no row: active). `next_slot_at`, `slowed_until`: database time. */
export interface WhatsappChannelStateTable {
  company_id: number;
  state: Generated<'active' | 'paused'>;
  reason: string | null;
  changed_at: Timestamp | null;
  quality_rating: string | null;
  next_slot_at: Timestamp | null;
  slowed_until: Timestamp | null;
  updated_at: Generated<Timestamp>;
}

/** 017: pair rate, the earliest next send from a company's number to a recipient (E.164). */
export interface WhatsappPairsTable {
  company_id: number;
  recipient: string;
  next_at: Timestamp;
  /** 021: the admitted message whose request has not started yet (its claim), or NULL. */
  claimed_by: string | null;
}

/** 017: messaging limit, people counted once per moving 24 h. */
export interface WhatsappLimitCountsTable {
  company_id: number;
  recipient: string;
  counted_at: Timestamp;
}

export interface IdempotencyKeysTable {
  company_id: number;
  idempotency_key: string;
  request_hash: Uint8Array;
  locked_until: Date | null;
  response_status: number | null;
  response_body: string | null;
  created_at: Generated<Date>;
}

export interface AuditLogTable {
  entry_id: Generated<number>;
  at: Generated<Date>;
  actor: string;
  action: string;
  target: string;
  company_id: number | null;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
}
