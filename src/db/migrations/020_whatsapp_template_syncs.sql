-- 020: when each WhatsApp company's template catalogue was last synced with Meta, or its periodic
-- sync last claimed (docs/whatsapp.md "Template catalogue"): the workers' periodic sync
-- (WHATSAPP_TEMPLATE_SYNC) claims the companies whose time is older than that (including those whose
-- catalogue is empty), one process per company. Times come from the service's injectable clock.
CREATE TABLE whatsapp_template_syncs (
  company_id integer     PRIMARY KEY REFERENCES companies (company_id) ON DELETE CASCADE,
  synced_at  timestamptz NOT NULL
);
