/**
 * SQL of Meta's account-level webhooks (docs/whatsapp.md "Webhook fields"): the channels of a WhatsApp
 * Business Account, a template's fields changed by a webhook, the messaging limit kept in the channel's
 * configuration. One statement per function; times in ms of the injectable clock.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A WhatsApp channel found by its WABA id (`companies.channel->>'waba_id'`). */
export interface WabaChannelRow { company_id: number; waba_id: string; app_secret_sealed: string | null }

/** The WhatsApp channels of the given WABA ids (unknown ids are simply absent). */
export async function findChannelsByWaba(db: Db, wabaIds: string[]): Promise<WabaChannelRow[]> {
  if (wabaIds.length === 0) return [];
  const { rows } = await sql<WabaChannelRow>`
    SELECT company_id, channel->>'waba_id' AS waba_id, channel->>'app_secret_sealed' AS app_secret_sealed
    FROM companies
    WHERE channel->>'provider' = 'whatsapp' AND channel->>'waba_id' = ANY (${wabaIds}::text[])
    ORDER BY company_id`.execute(db);
  return rows.map((r) => ({ ...r, company_id: Number(r.company_id) }));
}

/** Which template a webhook names: Meta's id, else name and language. */
export interface TemplateRef { template_id: string | null; name: string | null; language: string | null }

/** The fields a webhook sets on a template (undefined: unchanged). */
export interface TemplateFields { status?: string; rejected_reason?: string | null; quality_score?: string; category?: string }

/**
 * Sets a template's fields from a webhook of time `at` (ms): the company's template with Meta's id,
 * or, when no template has that id, the one with that name and language. Nothing changes when the copy
 * is newer (its `synced_at` more than a second after `at`); otherwise `synced_at` becomes `at` when
 * later. Returns the templates updated, with their status after the change (the table's trigger writes
 * whatsapp.template.updated when status, category, quality or rejection reason changed).
 */
export async function updateTemplateFromWebhook(db: Db, companyId: number, ref: TemplateRef, set: TemplateFields, at: number): Promise<{ template_id: string; status: string }[]> {
  const when = new Date(at).toISOString();
  const setStatus = set.status !== undefined;
  const { rows } = await sql<{ template_id: string; status: string }>`
    UPDATE whatsapp_templates t SET
      status = CASE WHEN ${setStatus} THEN ${set.status ?? null}::text ELSE t.status END,
      rejected_reason = CASE WHEN ${setStatus} THEN ${set.rejected_reason ?? null}::text ELSE t.rejected_reason END,
      quality_score = coalesce(${set.quality_score ?? null}::text, t.quality_score),
      category = coalesce(${set.category ?? null}::text, t.category),
      synced_at = greatest(t.synced_at, ${when}::timestamptz)
    WHERE t.company_id = ${companyId}
      AND CASE WHEN EXISTS (SELECT 1 FROM whatsapp_templates x WHERE x.company_id = ${companyId} AND x.template_id = ${ref.template_id}::text)
        THEN t.template_id = ${ref.template_id}::text
        ELSE t.name = ${ref.name}::text AND t.language = ${ref.language}::text END
      AND t.synced_at <= ${when}::timestamptz + interval '1 second'
    RETURNING t.template_id, t.status`.execute(db);
  return rows;
}

/**
 * Sets `messaging_limit` (a number, or null for unlimited) in the company's WhatsApp channel
 * configuration. True when the company has a WhatsApp channel.
 */
export async function setMessagingLimit(db: Db, companyId: number, limit: number | null): Promise<boolean> {
  const result = await sql`
    UPDATE companies SET channel = jsonb_set(channel, '{messaging_limit}', ${JSON.stringify(limit)}::jsonb)
    WHERE company_id = ${companyId} AND channel->>'provider' = 'whatsapp'`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}
