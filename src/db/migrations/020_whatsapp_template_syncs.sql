-- 020: when each WhatsApp company's template catalogue was last synced with Meta (docs/whatsapp.md
-- "Template catalogue"): the periodic sync (WHATSAPP_TEMPLATE_SYNC) picks the companies whose last
-- sync is older than that, including those whose catalogue is empty. Times come from the service's
-- injectable clock.
CREATE TABLE whatsapp_template_syncs (
  company_id integer     PRIMARY KEY REFERENCES companies (company_id) ON DELETE CASCADE,
  synced_at  timestamptz NOT NULL
);
