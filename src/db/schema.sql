-- The schema as migrated (src/db/migrations), written by `npm run db:dump`; a test fails when it
-- differs from a freshly migrated database. Read it; change the schema with a new migration.

CREATE TABLE api_keys (
  key_id integer NOT NULL DEFAULT nextval('api_keys_key_id_seq'::regclass),
  company_id integer NOT NULL,
  key_hash bytea NOT NULL,
  prefix text NOT NULL,
  label text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_used_at timestamp with time zone,
  revoked_at timestamp with time zone
);

CREATE TABLE audit_log (
  entry_id bigint NOT NULL DEFAULT nextval('audit_log_entry_id_seq'::regclass),
  at timestamp with time zone NOT NULL DEFAULT now(),
  actor text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  company_id integer,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE TABLE automations (
  automation_id integer NOT NULL DEFAULT nextval('automations_automation_id_seq'::regclass),
  company_id integer NOT NULL,
  name text NOT NULL,
  type text NOT NULL,
  active boolean NOT NULL,
  template jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  expire_after text,
  archived_at timestamp with time zone
);

CREATE TABLE batch_status_counts (
  batch_id uuid NOT NULL,
  shard smallint NOT NULL,
  sent integer NOT NULL DEFAULT 0,
  delivered integer NOT NULL DEFAULT 0,
  read integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0
);

CREATE TABLE batches (
  batch_id uuid NOT NULL,
  company_id integer NOT NULL,
  kind text NOT NULL,
  source_id integer NOT NULL,
  status text NOT NULL DEFAULT 'accepted'::text,
  total integer NOT NULL,
  ignored_contacts integer NOT NULL DEFAULT 0,
  items text NOT NULL,
  overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  template jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  completed_at timestamp with time zone,
  fanned_out integer NOT NULL DEFAULT 0,
  paused_at timestamp with time zone,
  cancelled_at timestamp with time zone
);

CREATE TABLE campaigns (
  campaign_id integer NOT NULL DEFAULT nextval('campaigns_campaign_id_seq'::regclass),
  company_id integer NOT NULL,
  name text NOT NULL,
  template jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expire_after text DEFAULT '24h'::text,
  ignore_frequency_cap boolean NOT NULL DEFAULT false,
  archived_at timestamp with time zone
);

CREATE TABLE companies (
  company_id integer NOT NULL DEFAULT nextval('companies_company_id_seq'::regclass),
  name text NOT NULL,
  subscription_active boolean NOT NULL DEFAULT false,
  default_country text NOT NULL DEFAULT 'DE'::text,
  delivery_hours jsonb,
  connector_connected boolean NOT NULL DEFAULT false,
  connector_provider text,
  channel jsonb NOT NULL DEFAULT '{"provider": "outbox"}'::jsonb,
  segment_count integer NOT NULL DEFAULT 0,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  opt_out_keywords text[] NOT NULL DEFAULT ARRAY['STOP'::text, 'STOPP'::text, 'UNSUBSCRIBE'::text, 'CANCEL'::text, 'END'::text, 'QUIT'::text],
  opt_in_keywords text[] NOT NULL DEFAULT ARRAY['START'::text, 'UNSTOP'::text, 'SUBSCRIBE'::text],
  frequency_cap jsonb
);

CREATE TABLE consent_ledger (
  entry_id bigint NOT NULL DEFAULT nextval('consent_ledger_entry_id_seq'::regclass),
  company_id integer NOT NULL,
  phone_sha256 bytea NOT NULL,
  at timestamp with time zone NOT NULL,
  opted_out boolean NOT NULL,
  source text NOT NULL,
  category text NOT NULL DEFAULT 'marketing'::text,
  evidence jsonb,
  erased boolean NOT NULL DEFAULT false
);

CREATE TABLE console_invitations (
  invitation_id integer NOT NULL DEFAULT nextval('console_invitations_invitation_id_seq'::regclass),
  company_id integer NOT NULL,
  email text NOT NULL,
  token_hash bytea NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  accepted_at timestamp with time zone,
  revoked_at timestamp with time zone,
  role text NOT NULL,
  invited_by text NOT NULL
);

CREATE TABLE console_login_failures (
  bucket text NOT NULL,
  failures integer NOT NULL,
  window_start timestamp with time zone NOT NULL
);

CREATE TABLE console_password_resets (
  reset_id integer NOT NULL DEFAULT nextval('console_password_resets_reset_id_seq'::regclass),
  user_id integer NOT NULL,
  token_hash bytea NOT NULL,
  created_by text NOT NULL,
  created_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  used_at timestamp with time zone,
  revoked_at timestamp with time zone
);

CREATE TABLE console_secrets (
  name text NOT NULL,
  value text NOT NULL
);

CREATE TABLE console_sessions (
  session_hash bytea NOT NULL,
  user_id integer NOT NULL,
  created_at timestamp with time zone NOT NULL,
  last_seen_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL
);

CREATE TABLE console_users (
  user_id integer NOT NULL DEFAULT nextval('console_users_user_id_seq'::regclass),
  company_id integer NOT NULL,
  email text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  password_changed_at timestamp with time zone NOT NULL DEFAULT now(),
  role text NOT NULL
);

CREATE TABLE contact_imports (
  import_id bigint NOT NULL DEFAULT nextval('contact_imports_import_id_seq'::regclass),
  company_id integer NOT NULL,
  actor text NOT NULL,
  filename text,
  delimiter text NOT NULL,
  csv bytea,
  status text NOT NULL DEFAULT 'queued'::text,
  total integer NOT NULL,
  processed integer NOT NULL DEFAULT 0,
  created integer NOT NULL DEFAULT 0,
  updated integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  errors jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  finished_at timestamp with time zone
);

CREATE TABLE contacts (
  contact_id bigint NOT NULL DEFAULT nextval('contacts_contact_id_seq'::regclass),
  company_id integer NOT NULL,
  phone text NOT NULL,
  sha256_plus bytea NOT NULL,
  sha256_bare bytea NOT NULL,
  first_name text,
  last_name text,
  variables jsonb NOT NULL DEFAULT '{}'::jsonb,
  opted_out boolean NOT NULL DEFAULT false,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  opt_out_source text,
  opt_out_at timestamp with time zone,
  erased_at timestamp with time zone,
  last_inbound_at timestamp with time zone,
  tags text[] NOT NULL DEFAULT '{}'::text[],
  country text,
  opt_out_evidence jsonb
);

CREATE TABLE event_attempts (
  attempt_id bigint NOT NULL DEFAULT nextval('event_attempts_attempt_id_seq'::regclass),
  event_id text NOT NULL,
  endpoint_id integer NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  response_excerpt text,
  duration_ms integer NOT NULL,
  at timestamp with time zone NOT NULL
);

CREATE TABLE event_deliveries (
  event_id text NOT NULL,
  endpoint_id integer NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamp with time zone,
  lease_until timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  seq bigint NOT NULL DEFAULT nextval('event_deliveries_seq_seq'::regclass)
);

CREATE TABLE event_endpoints (
  endpoint_id integer NOT NULL DEFAULT nextval('event_endpoints_endpoint_id_seq'::regclass),
  company_id integer NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  secret_sealed text NOT NULL,
  disabled_reason text,
  failing_since timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE events (
  event_id text NOT NULL,
  company_id integer NOT NULL,
  type text NOT NULL,
  payload json NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE idempotency_keys (
  company_id integer NOT NULL,
  idempotency_key text NOT NULL,
  request_hash bytea NOT NULL,
  locked_until timestamp with time zone,
  response_status integer,
  response_body text,
  created_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE inbound_messages (
  inbound_id bigint NOT NULL DEFAULT nextval('inbound_messages_inbound_id_seq'::regclass),
  company_id integer NOT NULL,
  contact_id bigint NOT NULL,
  provider_message_id text NOT NULL,
  type text NOT NULL,
  text text,
  payload text,
  received_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  reply_to_provider_message_id text,
  reaction jsonb,
  media jsonb,
  location jsonb
);

CREATE TABLE message_counts (
  company_id integer NOT NULL,
  bucket timestamp with time zone NOT NULL,
  status text NOT NULL,
  code text NOT NULL,
  count bigint NOT NULL,
  example text,
  shard smallint NOT NULL DEFAULT 0
);

CREATE TABLE messages (
  message_id uuid NOT NULL,
  batch_id uuid NOT NULL,
  company_id integer NOT NULL,
  seq integer NOT NULL,
  contact_id bigint,
  phone text NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  reason text,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  scheduled_for timestamp with time zone,
  sent_at timestamp with time zone,
  rendered jsonb,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  lease_until timestamp with time zone,
  held_until timestamp with time zone,
  provider_message_id text,
  delivered_at timestamp with time zone,
  read_at timestamp with time zone,
  failed_at timestamp with time zone,
  error_code text,
  next_attempt_at timestamp with time zone,
  expires_at timestamp with time zone,
  provider_error jsonb,
  uncounted_attempts integer NOT NULL DEFAULT 0
);

CREATE TABLE rate_limit_logs (
  bucket text NOT NULL,
  hits bigint[] NOT NULL,
  decided_us bigint NOT NULL,
  admitted integer NOT NULL
);

CREATE TABLE rate_limits (
  bucket text NOT NULL,
  hits numeric[] NOT NULL
);

CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE segment_members (
  segment_id integer NOT NULL,
  contact_id bigint NOT NULL,
  added_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE segments (
  segment_id integer NOT NULL DEFAULT nextval('segments_segment_id_seq'::regclass),
  company_id integer NOT NULL,
  name text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  filter jsonb
);

CREATE TABLE whatsapp_channel_state (
  company_id integer NOT NULL,
  state text NOT NULL DEFAULT 'active'::text,
  reason text,
  changed_at timestamp with time zone,
  quality_rating text,
  next_slot_at timestamp with time zone,
  slowed_until timestamp with time zone,
  updated_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE whatsapp_limit_counts (
  company_id integer NOT NULL,
  recipient text NOT NULL,
  counted_at timestamp with time zone NOT NULL
);

CREATE TABLE whatsapp_pairs (
  company_id integer NOT NULL,
  recipient text NOT NULL,
  next_at timestamp with time zone NOT NULL,
  claimed_by text
);

CREATE TABLE whatsapp_rate_card (
  card boolean NOT NULL DEFAULT true,
  currency text,
  updated_at timestamp with time zone NOT NULL
);

CREATE TABLE whatsapp_rates (
  country text NOT NULL,
  category text NOT NULL,
  price numeric NOT NULL
);

CREATE TABLE whatsapp_template_syncs (
  company_id integer NOT NULL,
  synced_at timestamp with time zone NOT NULL
);

CREATE TABLE whatsapp_templates (
  company_id integer NOT NULL,
  template_id text NOT NULL,
  name text NOT NULL,
  language text NOT NULL,
  status text NOT NULL,
  category text,
  quality_score text,
  rejected_reason text,
  parameters jsonb NOT NULL,
  components jsonb NOT NULL,
  synced_at timestamp with time zone NOT NULL
);

-- Constraints
ALTER TABLE api_keys ADD CONSTRAINT api_keys_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_company_id_not_null NOT NULL company_id;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_created_at_not_null NOT NULL created_at;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_key_hash_not_null NOT NULL key_hash;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_key_id_not_null NOT NULL key_id;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_pkey PRIMARY KEY (key_id);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_prefix_not_null NOT NULL prefix;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_not_null NOT NULL action;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_not_null NOT NULL actor;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_at_not_null NOT NULL at;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_details_not_null NOT NULL details;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_entry_id_not_null NOT NULL entry_id;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_pkey PRIMARY KEY (entry_id);
ALTER TABLE audit_log ADD CONSTRAINT audit_log_target_not_null NOT NULL target;
ALTER TABLE automations ADD CONSTRAINT automations_active_not_null NOT NULL active;
ALTER TABLE automations ADD CONSTRAINT automations_automation_id_not_null NOT NULL automation_id;
ALTER TABLE automations ADD CONSTRAINT automations_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE automations ADD CONSTRAINT automations_company_id_not_null NOT NULL company_id;
ALTER TABLE automations ADD CONSTRAINT automations_created_at_not_null NOT NULL created_at;
ALTER TABLE automations ADD CONSTRAINT automations_name_not_null NOT NULL name;
ALTER TABLE automations ADD CONSTRAINT automations_pkey PRIMARY KEY (automation_id);
ALTER TABLE automations ADD CONSTRAINT automations_template_not_null NOT NULL template;
ALTER TABLE automations ADD CONSTRAINT automations_type_not_null NOT NULL type;
ALTER TABLE automations ADD CONSTRAINT automations_updated_at_not_null NOT NULL updated_at;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES batches(batch_id) ON DELETE CASCADE;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_batch_id_not_null NOT NULL batch_id;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_delivered_not_null NOT NULL delivered;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_failed_not_null NOT NULL failed;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_pkey PRIMARY KEY (batch_id, shard);
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_read_not_null NOT NULL read;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_sent_not_null NOT NULL sent;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_shard_not_null NOT NULL shard;
ALTER TABLE batch_status_counts ADD CONSTRAINT batch_status_counts_skipped_not_null NOT NULL skipped;
ALTER TABLE batches ADD CONSTRAINT batches_batch_id_not_null NOT NULL batch_id;
ALTER TABLE batches ADD CONSTRAINT batches_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE batches ADD CONSTRAINT batches_company_id_not_null NOT NULL company_id;
ALTER TABLE batches ADD CONSTRAINT batches_created_at_not_null NOT NULL created_at;
ALTER TABLE batches ADD CONSTRAINT batches_fanned_out_not_null NOT NULL fanned_out;
ALTER TABLE batches ADD CONSTRAINT batches_ignored_contacts_not_null NOT NULL ignored_contacts;
ALTER TABLE batches ADD CONSTRAINT batches_items_not_null NOT NULL items;
ALTER TABLE batches ADD CONSTRAINT batches_kind_check CHECK ((kind = ANY (ARRAY['automation'::text, 'campaign'::text])));
ALTER TABLE batches ADD CONSTRAINT batches_kind_not_null NOT NULL kind;
ALTER TABLE batches ADD CONSTRAINT batches_overrides_not_null NOT NULL overrides;
ALTER TABLE batches ADD CONSTRAINT batches_pkey PRIMARY KEY (batch_id);
ALTER TABLE batches ADD CONSTRAINT batches_source_id_not_null NOT NULL source_id;
ALTER TABLE batches ADD CONSTRAINT batches_status_check CHECK ((status = ANY (ARRAY['accepted'::text, 'processing'::text, 'completed'::text])));
ALTER TABLE batches ADD CONSTRAINT batches_status_not_null NOT NULL status;
ALTER TABLE batches ADD CONSTRAINT batches_template_not_null NOT NULL template;
ALTER TABLE batches ADD CONSTRAINT batches_total_not_null NOT NULL total;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_campaign_id_not_null NOT NULL campaign_id;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_company_id_not_null NOT NULL company_id;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_created_at_not_null NOT NULL created_at;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_ignore_frequency_cap_not_null NOT NULL ignore_frequency_cap;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_name_not_null NOT NULL name;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pkey PRIMARY KEY (campaign_id);
ALTER TABLE campaigns ADD CONSTRAINT campaigns_template_not_null NOT NULL template;
ALTER TABLE companies ADD CONSTRAINT companies_channel_not_null NOT NULL channel;
ALTER TABLE companies ADD CONSTRAINT companies_company_id_not_null NOT NULL company_id;
ALTER TABLE companies ADD CONSTRAINT companies_connector_connected_not_null NOT NULL connector_connected;
ALTER TABLE companies ADD CONSTRAINT companies_created_at_not_null NOT NULL created_at;
ALTER TABLE companies ADD CONSTRAINT companies_default_country_not_null NOT NULL default_country;
ALTER TABLE companies ADD CONSTRAINT companies_name_not_null NOT NULL name;
ALTER TABLE companies ADD CONSTRAINT companies_opt_in_keywords_not_null NOT NULL opt_in_keywords;
ALTER TABLE companies ADD CONSTRAINT companies_opt_out_keywords_not_null NOT NULL opt_out_keywords;
ALTER TABLE companies ADD CONSTRAINT companies_pkey PRIMARY KEY (company_id);
ALTER TABLE companies ADD CONSTRAINT companies_segment_count_not_null NOT NULL segment_count;
ALTER TABLE companies ADD CONSTRAINT companies_subscription_active_not_null NOT NULL subscription_active;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_at_not_null NOT NULL at;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_category_not_null NOT NULL category;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_company_id_not_null NOT NULL company_id;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_entry_id_not_null NOT NULL entry_id;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_erased_not_null NOT NULL erased;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_opted_out_not_null NOT NULL opted_out;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_phone_sha256_not_null NOT NULL phone_sha256;
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_pkey PRIMARY KEY (entry_id);
ALTER TABLE consent_ledger ADD CONSTRAINT consent_ledger_source_not_null NOT NULL source;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_company_id_not_null NOT NULL company_id;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_created_at_not_null NOT NULL created_at;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_email_not_null NOT NULL email;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_expires_at_not_null NOT NULL expires_at;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_invitation_id_not_null NOT NULL invitation_id;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_invited_by_not_null NOT NULL invited_by;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_pkey PRIMARY KEY (invitation_id);
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'developer'::text, 'marketer'::text])));
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_role_not_null NOT NULL role;
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_token_hash_key UNIQUE (token_hash);
ALTER TABLE console_invitations ADD CONSTRAINT console_invitations_token_hash_not_null NOT NULL token_hash;
ALTER TABLE console_login_failures ADD CONSTRAINT console_login_failures_bucket_not_null NOT NULL bucket;
ALTER TABLE console_login_failures ADD CONSTRAINT console_login_failures_failures_not_null NOT NULL failures;
ALTER TABLE console_login_failures ADD CONSTRAINT console_login_failures_pkey PRIMARY KEY (bucket);
ALTER TABLE console_login_failures ADD CONSTRAINT console_login_failures_window_start_not_null NOT NULL window_start;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_created_at_not_null NOT NULL created_at;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_created_by_not_null NOT NULL created_by;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_expires_at_not_null NOT NULL expires_at;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_pkey PRIMARY KEY (reset_id);
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_reset_id_not_null NOT NULL reset_id;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_token_hash_key UNIQUE (token_hash);
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_token_hash_not_null NOT NULL token_hash;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_user_id_fkey FOREIGN KEY (user_id) REFERENCES console_users(user_id) ON DELETE CASCADE;
ALTER TABLE console_password_resets ADD CONSTRAINT console_password_resets_user_id_not_null NOT NULL user_id;
ALTER TABLE console_secrets ADD CONSTRAINT console_secrets_name_not_null NOT NULL name;
ALTER TABLE console_secrets ADD CONSTRAINT console_secrets_pkey PRIMARY KEY (name);
ALTER TABLE console_secrets ADD CONSTRAINT console_secrets_value_not_null NOT NULL value;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_created_at_not_null NOT NULL created_at;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_expires_at_not_null NOT NULL expires_at;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_last_seen_at_not_null NOT NULL last_seen_at;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (session_hash);
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_session_hash_not_null NOT NULL session_hash;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES console_users(user_id) ON DELETE CASCADE;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_user_id_not_null NOT NULL user_id;
ALTER TABLE console_users ADD CONSTRAINT console_users_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE console_users ADD CONSTRAINT console_users_company_id_not_null NOT NULL company_id;
ALTER TABLE console_users ADD CONSTRAINT console_users_created_at_not_null NOT NULL created_at;
ALTER TABLE console_users ADD CONSTRAINT console_users_email_key UNIQUE (email);
ALTER TABLE console_users ADD CONSTRAINT console_users_email_not_null NOT NULL email;
ALTER TABLE console_users ADD CONSTRAINT console_users_password_changed_at_not_null NOT NULL password_changed_at;
ALTER TABLE console_users ADD CONSTRAINT console_users_password_hash_not_null NOT NULL password_hash;
ALTER TABLE console_users ADD CONSTRAINT console_users_pkey PRIMARY KEY (user_id);
ALTER TABLE console_users ADD CONSTRAINT console_users_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'developer'::text, 'marketer'::text])));
ALTER TABLE console_users ADD CONSTRAINT console_users_role_not_null NOT NULL role;
ALTER TABLE console_users ADD CONSTRAINT console_users_user_id_not_null NOT NULL user_id;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_actor_not_null NOT NULL actor;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_company_id_not_null NOT NULL company_id;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_created_at_not_null NOT NULL created_at;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_created_not_null NOT NULL created;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_delimiter_not_null NOT NULL delimiter;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_errors_not_null NOT NULL errors;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_failed_not_null NOT NULL failed;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_import_id_not_null NOT NULL import_id;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_pkey PRIMARY KEY (import_id);
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_processed_not_null NOT NULL processed;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text])));
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_status_not_null NOT NULL status;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_total_not_null NOT NULL total;
ALTER TABLE contact_imports ADD CONSTRAINT contact_imports_updated_not_null NOT NULL updated;
ALTER TABLE contacts ADD CONSTRAINT contacts_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE contacts ADD CONSTRAINT contacts_company_id_not_null NOT NULL company_id;
ALTER TABLE contacts ADD CONSTRAINT contacts_company_id_phone_key UNIQUE (company_id, phone);
ALTER TABLE contacts ADD CONSTRAINT contacts_contact_id_not_null NOT NULL contact_id;
ALTER TABLE contacts ADD CONSTRAINT contacts_created_at_not_null NOT NULL created_at;
ALTER TABLE contacts ADD CONSTRAINT contacts_opted_out_not_null NOT NULL opted_out;
ALTER TABLE contacts ADD CONSTRAINT contacts_phone_not_null NOT NULL phone;
ALTER TABLE contacts ADD CONSTRAINT contacts_pkey PRIMARY KEY (contact_id);
ALTER TABLE contacts ADD CONSTRAINT contacts_sha256_bare_not_null NOT NULL sha256_bare;
ALTER TABLE contacts ADD CONSTRAINT contacts_sha256_plus_not_null NOT NULL sha256_plus;
ALTER TABLE contacts ADD CONSTRAINT contacts_tags_not_null NOT NULL tags;
ALTER TABLE contacts ADD CONSTRAINT contacts_updated_at_not_null NOT NULL updated_at;
ALTER TABLE contacts ADD CONSTRAINT contacts_variables_not_null NOT NULL variables;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_at_not_null NOT NULL at;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_attempt_id_not_null NOT NULL attempt_id;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_attempt_not_null NOT NULL attempt;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_duration_ms_not_null NOT NULL duration_ms;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES event_endpoints(endpoint_id) ON DELETE CASCADE;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_endpoint_id_not_null NOT NULL endpoint_id;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(event_id) ON DELETE CASCADE;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_event_id_not_null NOT NULL event_id;
ALTER TABLE event_attempts ADD CONSTRAINT event_attempts_pkey PRIMARY KEY (attempt_id);
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_attempts_not_null NOT NULL attempts;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_created_at_not_null NOT NULL created_at;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES event_endpoints(endpoint_id) ON DELETE CASCADE;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_endpoint_id_not_null NOT NULL endpoint_id;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(event_id) ON DELETE CASCADE;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_event_id_not_null NOT NULL event_id;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_pkey PRIMARY KEY (event_id, endpoint_id);
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_seq_not_null NOT NULL seq;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text])));
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_status_not_null NOT NULL status;
ALTER TABLE event_deliveries ADD CONSTRAINT event_deliveries_updated_at_not_null NOT NULL updated_at;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_company_id_not_null NOT NULL company_id;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_created_at_not_null NOT NULL created_at;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_enabled_not_null NOT NULL enabled;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_endpoint_id_not_null NOT NULL endpoint_id;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_events_not_null NOT NULL events;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_pkey PRIMARY KEY (endpoint_id);
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_secret_sealed_not_null NOT NULL secret_sealed;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_updated_at_not_null NOT NULL updated_at;
ALTER TABLE event_endpoints ADD CONSTRAINT event_endpoints_url_not_null NOT NULL url;
ALTER TABLE events ADD CONSTRAINT events_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE events ADD CONSTRAINT events_company_id_not_null NOT NULL company_id;
ALTER TABLE events ADD CONSTRAINT events_created_at_not_null NOT NULL created_at;
ALTER TABLE events ADD CONSTRAINT events_event_id_not_null NOT NULL event_id;
ALTER TABLE events ADD CONSTRAINT events_payload_not_null NOT NULL payload;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (event_id);
ALTER TABLE events ADD CONSTRAINT events_type_not_null NOT NULL type;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_company_id_not_null NOT NULL company_id;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_created_at_not_null NOT NULL created_at;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_idempotency_key_not_null NOT NULL idempotency_key;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (company_id, idempotency_key);
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_request_hash_not_null NOT NULL request_hash;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_company_id_not_null NOT NULL company_id;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_company_id_provider_message_id_key UNIQUE (company_id, provider_message_id);
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_contact_id_fkey FOREIGN KEY (contact_id) REFERENCES contacts(contact_id) ON DELETE CASCADE;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_contact_id_not_null NOT NULL contact_id;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_created_at_not_null NOT NULL created_at;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_inbound_id_not_null NOT NULL inbound_id;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_pkey PRIMARY KEY (inbound_id);
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_provider_message_id_not_null NOT NULL provider_message_id;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_received_at_not_null NOT NULL received_at;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_type_not_null NOT NULL type;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_bucket_not_null NOT NULL bucket;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_code_not_null NOT NULL code;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_company_id_not_null NOT NULL company_id;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_count_not_null NOT NULL count;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_pkey PRIMARY KEY (company_id, bucket, status, code, shard);
ALTER TABLE message_counts ADD CONSTRAINT message_counts_shard_not_null NOT NULL shard;
ALTER TABLE message_counts ADD CONSTRAINT message_counts_status_not_null NOT NULL status;
ALTER TABLE messages ADD CONSTRAINT messages_attempts_not_null NOT NULL attempts;
ALTER TABLE messages ADD CONSTRAINT messages_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES batches(batch_id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_batch_id_not_null NOT NULL batch_id;
ALTER TABLE messages ADD CONSTRAINT messages_batch_id_seq_key UNIQUE (batch_id, seq);
ALTER TABLE messages ADD CONSTRAINT messages_company_id_not_null NOT NULL company_id;
ALTER TABLE messages ADD CONSTRAINT messages_message_id_not_null NOT NULL message_id;
ALTER TABLE messages ADD CONSTRAINT messages_phone_not_null NOT NULL phone;
ALTER TABLE messages ADD CONSTRAINT messages_pkey PRIMARY KEY (message_id);
ALTER TABLE messages ADD CONSTRAINT messages_seq_not_null NOT NULL seq;
ALTER TABLE messages ADD CONSTRAINT messages_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'delivered'::text, 'read'::text, 'failed'::text, 'skipped'::text])));
ALTER TABLE messages ADD CONSTRAINT messages_status_not_null NOT NULL status;
ALTER TABLE messages ADD CONSTRAINT messages_uncounted_attempts_not_null NOT NULL uncounted_attempts;
ALTER TABLE messages ADD CONSTRAINT messages_updated_at_not_null NOT NULL updated_at;
ALTER TABLE rate_limit_logs ADD CONSTRAINT rate_limit_logs_admitted_not_null NOT NULL admitted;
ALTER TABLE rate_limit_logs ADD CONSTRAINT rate_limit_logs_bucket_not_null NOT NULL bucket;
ALTER TABLE rate_limit_logs ADD CONSTRAINT rate_limit_logs_decided_us_not_null NOT NULL decided_us;
ALTER TABLE rate_limit_logs ADD CONSTRAINT rate_limit_logs_hits_not_null NOT NULL hits;
ALTER TABLE rate_limit_logs ADD CONSTRAINT rate_limit_logs_pkey PRIMARY KEY (bucket);
ALTER TABLE rate_limits ADD CONSTRAINT rate_limits_bucket_not_null NOT NULL bucket;
ALTER TABLE rate_limits ADD CONSTRAINT rate_limits_hits_not_null NOT NULL hits;
ALTER TABLE rate_limits ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket);
ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_applied_at_not_null NOT NULL applied_at;
ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_name_not_null NOT NULL name;
ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);
ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_version_not_null NOT NULL version;
ALTER TABLE segment_members ADD CONSTRAINT segment_members_added_at_not_null NOT NULL added_at;
ALTER TABLE segment_members ADD CONSTRAINT segment_members_contact_id_fkey FOREIGN KEY (contact_id) REFERENCES contacts(contact_id) ON DELETE CASCADE;
ALTER TABLE segment_members ADD CONSTRAINT segment_members_contact_id_not_null NOT NULL contact_id;
ALTER TABLE segment_members ADD CONSTRAINT segment_members_pkey PRIMARY KEY (segment_id, contact_id);
ALTER TABLE segment_members ADD CONSTRAINT segment_members_segment_id_fkey FOREIGN KEY (segment_id) REFERENCES segments(segment_id) ON DELETE CASCADE;
ALTER TABLE segment_members ADD CONSTRAINT segment_members_segment_id_not_null NOT NULL segment_id;
ALTER TABLE segments ADD CONSTRAINT segments_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE segments ADD CONSTRAINT segments_company_id_not_null NOT NULL company_id;
ALTER TABLE segments ADD CONSTRAINT segments_created_at_not_null NOT NULL created_at;
ALTER TABLE segments ADD CONSTRAINT segments_name_not_null NOT NULL name;
ALTER TABLE segments ADD CONSTRAINT segments_pkey PRIMARY KEY (segment_id);
ALTER TABLE segments ADD CONSTRAINT segments_segment_id_not_null NOT NULL segment_id;
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_company_id_not_null NOT NULL company_id;
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_pkey PRIMARY KEY (company_id);
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_state_check CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text])));
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_state_not_null NOT NULL state;
ALTER TABLE whatsapp_channel_state ADD CONSTRAINT whatsapp_channel_state_updated_at_not_null NOT NULL updated_at;
ALTER TABLE whatsapp_limit_counts ADD CONSTRAINT whatsapp_limit_counts_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE whatsapp_limit_counts ADD CONSTRAINT whatsapp_limit_counts_company_id_not_null NOT NULL company_id;
ALTER TABLE whatsapp_limit_counts ADD CONSTRAINT whatsapp_limit_counts_counted_at_not_null NOT NULL counted_at;
ALTER TABLE whatsapp_limit_counts ADD CONSTRAINT whatsapp_limit_counts_pkey PRIMARY KEY (company_id, recipient);
ALTER TABLE whatsapp_limit_counts ADD CONSTRAINT whatsapp_limit_counts_recipient_not_null NOT NULL recipient;
ALTER TABLE whatsapp_pairs ADD CONSTRAINT whatsapp_pairs_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE whatsapp_pairs ADD CONSTRAINT whatsapp_pairs_company_id_not_null NOT NULL company_id;
ALTER TABLE whatsapp_pairs ADD CONSTRAINT whatsapp_pairs_next_at_not_null NOT NULL next_at;
ALTER TABLE whatsapp_pairs ADD CONSTRAINT whatsapp_pairs_pkey PRIMARY KEY (company_id, recipient);
ALTER TABLE whatsapp_pairs ADD CONSTRAINT whatsapp_pairs_recipient_not_null NOT NULL recipient;
ALTER TABLE whatsapp_rate_card ADD CONSTRAINT whatsapp_rate_card_card_check CHECK (card);
ALTER TABLE whatsapp_rate_card ADD CONSTRAINT whatsapp_rate_card_card_not_null NOT NULL card;
ALTER TABLE whatsapp_rate_card ADD CONSTRAINT whatsapp_rate_card_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text));
ALTER TABLE whatsapp_rate_card ADD CONSTRAINT whatsapp_rate_card_pkey PRIMARY KEY (card);
ALTER TABLE whatsapp_rate_card ADD CONSTRAINT whatsapp_rate_card_updated_at_not_null NOT NULL updated_at;
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_category_check CHECK ((category = ANY (ARRAY['MARKETING'::text, 'UTILITY'::text, 'AUTHENTICATION'::text])));
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_category_not_null NOT NULL category;
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_country_check CHECK ((country ~ '^[A-Z]{2}$'::text));
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_country_not_null NOT NULL country;
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_pkey PRIMARY KEY (country, category);
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_price_check CHECK ((price >= (0)::numeric));
ALTER TABLE whatsapp_rates ADD CONSTRAINT whatsapp_rates_price_not_null NOT NULL price;
ALTER TABLE whatsapp_template_syncs ADD CONSTRAINT whatsapp_template_syncs_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE whatsapp_template_syncs ADD CONSTRAINT whatsapp_template_syncs_company_id_not_null NOT NULL company_id;
ALTER TABLE whatsapp_template_syncs ADD CONSTRAINT whatsapp_template_syncs_pkey PRIMARY KEY (company_id);
ALTER TABLE whatsapp_template_syncs ADD CONSTRAINT whatsapp_template_syncs_synced_at_not_null NOT NULL synced_at;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(company_id) ON DELETE CASCADE;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_company_id_not_null NOT NULL company_id;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_components_not_null NOT NULL components;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_language_not_null NOT NULL language;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_name_not_null NOT NULL name;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_parameters_not_null NOT NULL parameters;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_pkey PRIMARY KEY (company_id, template_id);
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_status_not_null NOT NULL status;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_synced_at_not_null NOT NULL synced_at;
ALTER TABLE whatsapp_templates ADD CONSTRAINT whatsapp_templates_template_id_not_null NOT NULL template_id;

-- Indexes
CREATE INDEX api_keys_company ON public.api_keys USING btree (company_id);
CREATE INDEX audit_log_company ON public.audit_log USING btree (company_id, entry_id DESC);
CREATE INDEX audit_log_company_target ON public.audit_log USING btree (company_id, target, entry_id DESC);
CREATE INDEX automations_company ON public.automations USING btree (company_id);
CREATE INDEX batches_company ON public.batches USING btree (company_id, created_at DESC);
CREATE INDEX batches_finished ON public.batches USING btree (created_at) WHERE (completed_at IS NOT NULL);
CREATE INDEX batches_processing ON public.batches USING btree (batch_id) WHERE (status = 'processing'::text);
CREATE INDEX batches_source ON public.batches USING btree (company_id, kind, source_id, created_at DESC);
CREATE INDEX campaigns_company ON public.campaigns USING btree (company_id);
CREATE UNIQUE INDEX companies_whatsapp_number ON public.companies USING btree (((channel ->> 'phone_number_id'::text))) WHERE ((channel ->> 'provider'::text) = 'whatsapp'::text);
CREATE INDEX companies_whatsapp_verify_token ON public.companies USING btree (((channel ->> 'verify_token_sha256'::text))) WHERE ((channel ->> 'provider'::text) = 'whatsapp'::text);
CREATE INDEX companies_whatsapp_waba ON public.companies USING btree (((channel ->> 'waba_id'::text))) WHERE ((channel ->> 'provider'::text) = 'whatsapp'::text);
CREATE INDEX consent_ledger_erased ON public.consent_ledger USING btree (company_id, phone_sha256, entry_id DESC) WHERE erased;
CREATE INDEX consent_ledger_number ON public.consent_ledger USING btree (company_id, phone_sha256, entry_id);
CREATE INDEX console_invitations_company_email ON public.console_invitations USING btree (company_id, email);
CREATE INDEX console_password_resets_user ON public.console_password_resets USING btree (user_id);
CREATE INDEX console_sessions_user ON public.console_sessions USING btree (user_id);
CREATE INDEX console_users_company ON public.console_users USING btree (company_id);
CREATE INDEX contact_imports_company ON public.contact_imports USING btree (company_id, import_id DESC);
CREATE INDEX contacts_first_name_lower ON public.contacts USING btree (company_id, lower(first_name) text_pattern_ops);
CREATE INDEX contacts_last_name_lower ON public.contacts USING btree (company_id, lower(last_name) text_pattern_ops);
CREATE INDEX contacts_live ON public.contacts USING btree (company_id) WHERE (erased_at IS NULL);
CREATE INDEX contacts_live_id ON public.contacts USING btree (company_id, contact_id) WHERE (erased_at IS NULL);
CREATE INDEX contacts_opted_out ON public.contacts USING btree (company_id, opt_out_at) WHERE (opted_out AND (erased_at IS NULL));
CREATE INDEX contacts_sha256_bare ON public.contacts USING btree (company_id, sha256_bare);
CREATE INDEX contacts_sha256_plus ON public.contacts USING btree (company_id, sha256_plus);
CREATE INDEX contacts_tags ON public.contacts USING gin (tags);
CREATE INDEX event_attempts_endpoint ON public.event_attempts USING btree (endpoint_id, attempt_id DESC);
CREATE INDEX event_attempts_event ON public.event_attempts USING btree (event_id);
CREATE INDEX event_deliveries_due ON public.event_deliveries USING btree (next_attempt_at NULLS FIRST, seq) WHERE (status = 'pending'::text);
CREATE INDEX event_deliveries_endpoint ON public.event_deliveries USING btree (endpoint_id);
CREATE INDEX event_endpoints_company ON public.event_endpoints USING btree (company_id);
CREATE INDEX events_company_created ON public.events USING btree (company_id, created_at);
CREATE INDEX events_created ON public.events USING btree (created_at);
CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);
CREATE INDEX inbound_messages_contact ON public.inbound_messages USING btree (contact_id, received_at DESC);
CREATE INDEX inbound_messages_created ON public.inbound_messages USING btree (created_at);
CREATE INDEX message_counts_bucket ON public.message_counts USING btree (bucket);
CREATE INDEX messages_batch_status_seq ON public.messages USING btree (batch_id, status, seq);
CREATE INDEX messages_batch_waiting ON public.messages USING btree (batch_id, reason) WHERE ((status = 'pending'::text) AND (reason IS NOT NULL));
CREATE INDEX messages_company_phone ON public.messages USING btree (company_id, phone);
CREATE INDEX messages_held ON public.messages USING btree (held_until) WHERE (held_until IS NOT NULL);
CREATE INDEX messages_provider_message_id ON public.messages USING btree (provider_message_id) WHERE (provider_message_id IS NOT NULL);
CREATE INDEX messages_waiting ON public.messages USING btree (company_id, reason) WHERE ((status = 'pending'::text) AND (reason IS NOT NULL));
CREATE INDEX segments_company ON public.segments USING btree (company_id);
CREATE INDEX whatsapp_limit_counts_window ON public.whatsapp_limit_counts USING btree (company_id, counted_at);
CREATE INDEX whatsapp_pairs_next ON public.whatsapp_pairs USING btree (next_at);
CREATE UNIQUE INDEX whatsapp_templates_name ON public.whatsapp_templates USING btree (company_id, name, language);

-- Functions
CREATE OR REPLACE FUNCTION public.cms_batch_counts(p_batch_id uuid, p_total integer)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'total', p_total,
    'sent', c.sent + c.delivered + c.read,
    'delivered', c.delivered + c.read,
    'read', c.read,
    'failed', c.failed,
    'skipped', c.skipped,
    'pending', p_total - (c.sent + c.delivered + c.read) - c.failed - c.skipped)
  FROM cms_batch_status_counts(p_batch_id) c
$function$;

CREATE OR REPLACE FUNCTION public.cms_batch_counts_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO batch_status_counts AS c (batch_id, shard, sent, delivered, read, failed, skipped)
  SELECT n.batch_id, cms_count_shard(),
         count(*) FILTER (WHERE n.status = 'sent'), count(*) FILTER (WHERE n.status = 'delivered'),
         count(*) FILTER (WHERE n.status = 'read'), count(*) FILTER (WHERE n.status = 'failed'),
         count(*) FILTER (WHERE n.status = 'skipped')
  FROM new_rows n
  WHERE n.status IN ('sent', 'delivered', 'read', 'failed', 'skipped')
  GROUP BY n.batch_id
  ORDER BY n.batch_id
  ON CONFLICT (batch_id, shard) DO UPDATE SET
    sent = c.sent + EXCLUDED.sent, delivered = c.delivered + EXCLUDED.delivered, read = c.read + EXCLUDED.read,
    failed = c.failed + EXCLUDED.failed, skipped = c.skipped + EXCLUDED.skipped;
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_batch_counts_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.status <> 'pending')
     AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.status <> 'pending') THEN
    RETURN NULL;
  END IF;
  INSERT INTO batch_status_counts AS c (batch_id, shard, sent, delivered, read, failed, skipped)
  SELECT d.batch_id, cms_count_shard(), d.sent, d.delivered, d.read, d.failed, d.skipped
  FROM (SELECT x.batch_id,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'sent'), 0)::int AS sent,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'delivered'), 0)::int AS delivered,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'read'), 0)::int AS read,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'failed'), 0)::int AS failed,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'skipped'), 0)::int AS skipped
        FROM (SELECT n.batch_id, n.status, 1 AS delta FROM new_rows n WHERE n.status <> 'pending'
              UNION ALL
              SELECT o.batch_id, o.status, -1 FROM old_rows o WHERE o.status <> 'pending') x
        GROUP BY x.batch_id) d
  WHERE d.sent <> 0 OR d.delivered <> 0 OR d.read <> 0 OR d.failed <> 0 OR d.skipped <> 0
  ORDER BY d.batch_id
  ON CONFLICT (batch_id, shard) DO UPDATE SET
    sent = c.sent + EXCLUDED.sent, delivered = c.delivered + EXCLUDED.delivered, read = c.read + EXCLUDED.read,
    failed = c.failed + EXCLUDED.failed, skipped = c.skipped + EXCLUDED.skipped;
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_batch_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'batch.completed', json_build_object(
    'type', 'batch.completed',
    'timestamp', cms_rfc3339(coalesce(n.completed_at, now())),
    'data', json_build_object('batch_id', n.batch_id, 'kind', n.kind, 'source_id', n.source_id,
      'counts', cms_batch_counts(n.batch_id, n.total)))
  FROM new_rows n
  JOIN old_rows o ON o.batch_id = n.batch_id
  WHERE n.status = 'completed' AND o.status <> 'completed' AND cms_wants_event(n.company_id, 'batch.completed');
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_batch_status_counts(p_batch_id uuid)
 RETURNS TABLE(sent integer, delivered integer, read integer, failed integer, skipped integer)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(sum(c.sent), 0)::int, coalesce(sum(c.delivered), 0)::int, coalesce(sum(c.read), 0)::int,
         coalesce(sum(c.failed), 0)::int, coalesce(sum(c.skipped), 0)::int
  FROM batch_status_counts c WHERE c.batch_id = p_batch_id
$function$;

CREATE OR REPLACE FUNCTION public.cms_channel_state_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, t.type, json_build_object(
    'type', t.type,
    'timestamp', cms_rfc3339(coalesce(n.changed_at, now())),
    'data', json_build_object('company_id', n.company_id, 'reason', n.reason))
  FROM new_rows n
  LEFT JOIN old_rows o ON o.company_id = n.company_id
  CROSS JOIN LATERAL (SELECT CASE WHEN n.state = 'paused' THEN 'channel.paused' ELSE 'channel.resumed' END AS type) t
  WHERE n.state IS DISTINCT FROM coalesce(o.state, 'active')
    AND cms_wants_event(n.company_id, t.type);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_channel_state_insert_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'channel.paused', json_build_object(
    'type', 'channel.paused',
    'timestamp', cms_rfc3339(coalesce(n.changed_at, now())),
    'data', json_build_object('company_id', n.company_id, 'reason', n.reason))
  FROM new_rows n
  WHERE n.state = 'paused' AND cms_wants_event(n.company_id, 'channel.paused');
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_contact_insert_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows WHERE opted_out) THEN RETURN NULL; END IF;
  INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, evidence)
  SELECT n.company_id, n.sha256_plus, coalesce(n.opt_out_at, now()), true, coalesce(n.opt_out_source, 'operator'), n.opt_out_evidence
  FROM new_rows n
  WHERE n.opted_out AND NOT coalesce((
    SELECT l.opted_out FROM consent_ledger l
    WHERE l.company_id = n.company_id AND l.phone_sha256 = n.sha256_plus AND l.erased
    ORDER BY l.entry_id DESC LIMIT 1), false);
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'contact.opted_out', json_build_object(
    'type', 'contact.opted_out',
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM new_rows n
  WHERE n.opted_out AND cms_wants_event(n.company_id, 'contact.opted_out');
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_contact_update_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  WITH changed AS MATERIALIZED (
    SELECT n.company_id, n.phone, n.sha256_plus, n.opted_out, n.opt_out_source, n.opt_out_at, n.opt_out_evidence
    FROM new_rows n
    JOIN old_rows o ON o.contact_id = n.contact_id
    WHERE n.opted_out <> o.opted_out
  ), ledger AS (
    INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, evidence)
    SELECT company_id, sha256_plus, coalesce(opt_out_at, now()), opted_out, coalesce(opt_out_source, 'operator'), opt_out_evidence
    FROM changed
  )
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, t.type, json_build_object(
    'type', t.type,
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM changed n
  CROSS JOIN LATERAL (SELECT CASE WHEN n.opted_out THEN 'contact.opted_out' ELSE 'contact.opted_in' END AS type) t
  WHERE cms_wants_event(n.company_id, t.type);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_count_bucket(created_at timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT date_bin('15 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
$function$;

CREATE OR REPLACE FUNCTION public.cms_count_code(status text, reason text, error_code text, error text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE status WHEN 'skipped' THEN coalesce(reason, 'unknown')
                     WHEN 'failed' THEN coalesce(error_code, left(error, 200), 'unknown')
                     ELSE '' END
$function$;

CREATE OR REPLACE FUNCTION public.cms_count_shard()
 RETURNS smallint
 LANGUAGE sql
AS $function$
  SELECT (pg_backend_pid() % 8)::smallint
$function$;

CREATE OR REPLACE FUNCTION public.cms_event_fanout()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO event_deliveries (event_id, endpoint_id)
  SELECT n.event_id, e.endpoint_id
  FROM new_rows n
  JOIN event_endpoints e ON e.company_id = n.company_id AND e.enabled AND n.type = ANY (e.events);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_event_id()
 RETURNS text
 LANGUAGE sql
AS $function$
  SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '')
$function$;

CREATE OR REPLACE FUNCTION public.cms_inbound_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.received', json_build_object(
    'type', 'message.received',
    'timestamp', cms_rfc3339(n.received_at),
    'data', jsonb_strip_nulls(jsonb_build_object('phone', c.phone, 'type', n.type, 'text', n.text,
      'payload', n.payload, 'provider_message_id', n.provider_message_id, 'received_at', cms_rfc3339(n.received_at),
      'reaction', n.reaction, 'media', n.media, 'location', n.location))
      || CASE WHEN n.reply_to_provider_message_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('reply_to', (
        SELECT jsonb_build_object('message_id', m.message_id, 'batch_id', m.batch_id)
        FROM messages m
        WHERE m.provider_message_id = n.reply_to_provider_message_id AND m.company_id = n.company_id
        LIMIT 1)) END)
  FROM new_rows n
  JOIN contacts c ON c.contact_id = n.contact_id
  WHERE cms_wants_event(n.company_id, 'message.received');
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_message_counts_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO message_counts AS c (company_id, bucket, status, code, shard, count, example)
  SELECT n.company_id, cms_count_bucket(b.created_at), n.status,
         cms_count_code(n.status, n.reason, n.error_code, n.error), cms_count_shard(), count(*), max(left(n.error, 200))
  FROM new_rows n JOIN batches b ON b.batch_id = n.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code, shard)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_message_counts_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.status <> 'pending')
     AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.status <> 'pending') THEN
    RETURN NULL;
  END IF;
  INSERT INTO message_counts AS c (company_id, bucket, status, code, shard, count, example)
  SELECT d.company_id, cms_count_bucket(b.created_at), d.status, d.code, cms_count_shard(), sum(d.delta), max(d.example)
  FROM (SELECT x.company_id, x.batch_id, x.status, x.code, sum(x.delta) AS delta, max(x.example) AS example
        FROM (SELECT n.company_id, n.batch_id, n.status, cms_count_code(n.status, n.reason, n.error_code, n.error) AS code, 1 AS delta, left(n.error, 200) AS example FROM new_rows n
              UNION ALL
              SELECT o.company_id, o.batch_id, o.status, cms_count_code(o.status, o.reason, o.error_code, o.error), -1, NULL FROM old_rows o) x
        GROUP BY 1, 2, 3, 4
        HAVING sum(x.delta) <> 0) d
  JOIN batches b ON b.batch_id = d.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code, shard)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_message_event_data(m messages, kind text, source_id integer)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_strip_nulls(json_build_object(
    'message_id', m.message_id, 'batch_id', m.batch_id, 'company_id', m.company_id,
    'kind', kind, 'source_id', source_id, 'phone', m.phone, 'status', m.status,
    'reason', m.reason, 'error', m.error, 'error_code', m.error_code,
    'provider_message_id', m.provider_message_id,
    'sent_at', cms_rfc3339(m.sent_at), 'delivered_at', cms_rfc3339(m.delivered_at),
    'read_at', cms_rfc3339(m.read_at), 'failed_at', cms_rfc3339(m.failed_at)))
$function$;

CREATE OR REPLACE FUNCTION public.cms_message_event_time(m messages)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(CASE m.status WHEN 'sent' THEN m.sent_at WHEN 'delivered' THEN m.delivered_at
    WHEN 'read' THEN m.read_at WHEN 'failed' THEN m.failed_at END, now())
$function$;

CREATE OR REPLACE FUNCTION public.cms_message_insert_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT n.company_id FROM new_rows n WHERE n.status <> 'pending') c
                 JOIN event_endpoints e ON e.company_id = c.company_id AND e.enabled) THEN
    RETURN NULL;
  END IF;
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.' || n.status, json_build_object(
    'type', 'message.' || n.status,
    'timestamp', cms_rfc3339(cms_message_event_time(n)),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status <> 'pending' AND cms_wants_event(n.company_id, 'message.' || n.status);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_message_update_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT n.company_id FROM new_rows n WHERE n.status <> 'pending') c
                 JOIN event_endpoints e ON e.company_id = c.company_id AND e.enabled) THEN
    RETURN NULL;
  END IF;
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.delivered', json_build_object(
    'type', 'message.delivered',
    'timestamp', cms_rfc3339(coalesce(n.delivered_at, n.read_at, now())),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN old_rows o ON o.message_id = n.message_id
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status = 'read' AND o.status NOT IN ('delivered', 'read') AND cms_wants_event(n.company_id, 'message.delivered');

  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.' || n.status, json_build_object(
    'type', 'message.' || n.status,
    'timestamp', cms_rfc3339(cms_message_event_time(n)),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN old_rows o ON o.message_id = n.message_id
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status <> o.status AND n.status <> 'pending' AND cms_wants_event(n.company_id, 'message.' || n.status);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_rfc3339(t timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$function$;

CREATE OR REPLACE FUNCTION public.cms_text_time(t text)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  IF t ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN RETURN (t || 'T00:00:00Z')::timestamptz; END IF;
  IF t ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})$' THEN RETURN t::timestamptz; END IF;
  RETURN NULL;
EXCEPTION WHEN others THEN RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_wants_event(c integer, t text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  SELECT EXISTS (SELECT 1 FROM event_endpoints e WHERE e.company_id = c AND e.enabled AND t = ANY (e.events))
$function$;

CREATE OR REPLACE FUNCTION public.cms_whatsapp_template_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'whatsapp.template.updated', json_build_object(
    'type', 'whatsapp.template.updated',
    'timestamp', cms_rfc3339(n.synced_at),
    'data', cms_whatsapp_template_json(n))
  FROM new_rows n
  JOIN old_rows o ON o.company_id = n.company_id AND o.template_id = n.template_id
  WHERE (n.status, n.category, n.quality_score, n.rejected_reason) IS DISTINCT FROM (o.status, o.category, o.quality_score, o.rejected_reason)
    AND cms_wants_event(n.company_id, 'whatsapp.template.updated');
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.cms_whatsapp_template_json(t whatsapp_templates)
 RETURNS json
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'template_id', t.template_id, 'name', t.name, 'language', t.language, 'status', t.status,
    'category', t.category, 'quality_score', t.quality_score, 'rejected_reason', t.rejected_reason,
    'parameters', t.parameters, 'components', t.components, 'synced_at', cms_rfc3339(t.synced_at))
$function$;

-- Triggers
CREATE TRIGGER batches_update_events AFTER UPDATE ON public.batches REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_events();
CREATE TRIGGER contacts_insert_events AFTER INSERT ON public.contacts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_insert_events();
CREATE TRIGGER contacts_update_events AFTER UPDATE ON public.contacts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_update_events();
CREATE TRIGGER events_fanout AFTER INSERT ON public.events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_event_fanout();
CREATE TRIGGER inbound_messages_events AFTER INSERT ON public.inbound_messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_inbound_events();
CREATE TRIGGER messages_batch_counts_insert AFTER INSERT ON public.messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_counts_insert();
CREATE TRIGGER messages_batch_counts_update AFTER UPDATE ON public.messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_counts_update();
CREATE TRIGGER messages_counts_insert AFTER INSERT ON public.messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_message_counts_insert();
CREATE TRIGGER messages_counts_update AFTER UPDATE ON public.messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_message_counts_update();
CREATE TRIGGER messages_insert_events AFTER INSERT ON public.messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_message_insert_events();
CREATE TRIGGER messages_update_events AFTER UPDATE ON public.messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_message_update_events();
CREATE TRIGGER whatsapp_channel_state_insert_events AFTER INSERT ON public.whatsapp_channel_state REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_channel_state_insert_events();
CREATE TRIGGER whatsapp_channel_state_update_events AFTER UPDATE ON public.whatsapp_channel_state REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_channel_state_events();
CREATE TRIGGER whatsapp_templates_update_events AFTER UPDATE ON public.whatsapp_templates REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cms_whatsapp_template_events();
