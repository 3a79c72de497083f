/**
 * SQL of the WhatsApp template catalogue (table `whatsapp_templates`, migration 017; docs/whatsapp.md
 * "Template catalogue"): the synced copy of a company's message templates, one statement per function.
 * Times are ms of the injectable clock. A sync runs {@link deleteGoneTemplates}, {@link updateTemplates}
 * and {@link insertTemplates} in one transaction; the UPDATE fires migration 017's trigger, which writes
 * `whatsapp.template.updated` for every template whose status, category, quality or rejection reason
 * changed.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A template row as the catalogue keeps it (`parameters` and `components` as JSON values). */
export interface TemplateRow {
  template_id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  quality_score: string | null;
  rejected_reason: string | null;
  parameters: { header: 0 | 1 | string; body: number; buttons: number[] };
  components: unknown[];
}

/** A stored template with the time of its last sync. */
export interface StoredTemplate extends TemplateRow {
  synced_at: Date;
}

const iso = (ms: number) => new Date(ms).toISOString();
const doc = (rows: TemplateRow[]) => JSON.stringify(rows);

/** Deletes the company's templates whose ids are not in `keep`; returns how many went. */
export async function deleteGoneTemplates(db: Db, companyId: number, keep: string[]): Promise<number> {
  const result = await sql`
    DELETE FROM whatsapp_templates WHERE company_id = ${companyId} AND NOT (template_id = ANY(${keep}::text[]))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Updates the company's known templates among `rows` (by template_id) in one statement; synced_at = `at`. */
export async function updateTemplates(db: Db, companyId: number, rows: TemplateRow[], at: number): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await sql`
    UPDATE whatsapp_templates w SET name = t.name, language = t.language, status = t.status, category = t.category,
      quality_score = t.quality_score, rejected_reason = t.rejected_reason, parameters = t.parameters,
      components = t.components, synced_at = ${iso(at)}::timestamptz
    FROM jsonb_to_recordset(${doc(rows)}::jsonb) AS t(template_id text, name text, language text, status text, category text,
      quality_score text, rejected_reason text, parameters jsonb, components jsonb)
    WHERE w.company_id = ${companyId} AND w.template_id = t.template_id`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Inserts those of `rows` the company does not have yet; synced_at = `at`. A row whose id, or name and
 * language, a concurrent sync inserted meanwhile is skipped (that sync stored the same answer of Meta).
 */
export async function insertTemplates(db: Db, companyId: number, rows: TemplateRow[], at: number): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await sql`
    INSERT INTO whatsapp_templates (company_id, template_id, name, language, status, category, quality_score, rejected_reason, parameters, components, synced_at)
    SELECT ${companyId}, t.template_id, t.name, t.language, t.status, t.category, t.quality_score, t.rejected_reason, t.parameters, t.components, ${iso(at)}::timestamptz
    FROM jsonb_to_recordset(${doc(rows)}::jsonb) AS t(template_id text, name text, language text, status text, category text,
      quality_score text, rejected_reason text, parameters jsonb, components jsonb)
    ON CONFLICT DO NOTHING`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes the company's template of `name` and `language` unless its id is `keepId`; returns how many went. */
export async function deleteOtherTemplate(db: Db, companyId: number, name: string, language: string, keepId: string): Promise<number> {
  const result = await sql`
    DELETE FROM whatsapp_templates WHERE company_id = ${companyId} AND name = ${name} AND language = ${language} AND template_id <> ${keepId}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Stores one template (a submitted one, as Meta answered): inserted, or the row of its id replaced.
 * Another row with its name and language must be gone first ({@link deleteOtherTemplate}). Returns
 * the stored row.
 */
export async function upsertTemplate(db: Db, companyId: number, row: TemplateRow, at: number): Promise<StoredTemplate> {
  const { rows } = await sql<StoredTemplate>`
    INSERT INTO whatsapp_templates (company_id, template_id, name, language, status, category, quality_score, rejected_reason, parameters, components, synced_at)
    VALUES (${companyId}, ${row.template_id}, ${row.name}, ${row.language}, ${row.status}, ${row.category}, ${row.quality_score}, ${row.rejected_reason},
      ${JSON.stringify(row.parameters)}::jsonb, ${JSON.stringify(row.components)}::jsonb, ${iso(at)}::timestamptz)
    ON CONFLICT (company_id, template_id) DO UPDATE SET name = excluded.name, language = excluded.language, status = excluded.status,
      category = excluded.category, quality_score = excluded.quality_score, rejected_reason = excluded.rejected_reason,
      parameters = excluded.parameters, components = excluded.components, synced_at = excluded.synced_at
    RETURNING template_id, name, language, status, category, quality_score, rejected_reason, parameters, components, synced_at`.execute(db);
  return rows[0];
}

/** The company's templates, by name then language. */
export async function listTemplates(db: Db, companyId: number): Promise<StoredTemplate[]> {
  const rows = await db.selectFrom('whatsapp_templates')
    .select(['template_id', 'name', 'language', 'status', 'category', 'quality_score', 'rejected_reason', 'parameters', 'components', 'synced_at'])
    .where('company_id', '=', companyId).orderBy('name').orderBy('language').execute();
  return rows as unknown as StoredTemplate[];
}

/** One template of the company by name and language, or undefined. */
export async function findTemplate(db: Db, companyId: number, name: string, language: string): Promise<StoredTemplate | undefined> {
  const row = await db.selectFrom('whatsapp_templates')
    .select(['template_id', 'name', 'language', 'status', 'category', 'quality_score', 'rejected_reason', 'parameters', 'components', 'synced_at'])
    .where('company_id', '=', companyId).where('name', '=', name).where('language', '=', language).executeTakeFirst();
  return row as unknown as StoredTemplate | undefined;
}

/** The status of one template of the company by name and language, or undefined when it has none. */
export async function templateStatus(db: Db, companyId: number, name: string, language: string): Promise<string | undefined> {
  const row = await db.selectFrom('whatsapp_templates').select('status')
    .where('company_id', '=', companyId).where('name', '=', name).where('language', '=', language).executeTakeFirst();
  return row?.status;
}

/** Records that the company's catalogue was synced at `at` (table whatsapp_template_syncs, migration 020). */
export async function markSynced(db: Db, companyId: number, at: number): Promise<void> {
  await sql`
    INSERT INTO whatsapp_template_syncs (company_id, synced_at) VALUES (${companyId}, ${iso(at)}::timestamptz)
    ON CONFLICT (company_id) DO UPDATE SET synced_at = excluded.synced_at`.execute(db);
}

/**
 * Claims up to `limit` WhatsApp companies with a `waba_id` whose catalogue was last synced (or
 * claimed) before `before`, or never: sets their time to `now` and returns their ids, least recently
 * synced first. Two processes claiming at once never get the same company.
 */
export async function claimDueSyncs(db: Db, now: number, before: number, limit: number): Promise<number[]> {
  const { rows } = await sql<{ company_id: number }>`
    WITH due AS (
      SELECT c.company_id FROM companies c
      LEFT JOIN whatsapp_template_syncs s ON s.company_id = c.company_id
      WHERE c.channel->>'provider' = 'whatsapp' AND coalesce(c.channel->>'waba_id', '') <> ''
        AND (s.synced_at IS NULL OR s.synced_at < ${iso(before)}::timestamptz)
      ORDER BY s.synced_at NULLS FIRST, c.company_id
      LIMIT ${limit}
    )
    INSERT INTO whatsapp_template_syncs AS w (company_id, synced_at) SELECT company_id, ${iso(now)}::timestamptz FROM due
    ON CONFLICT (company_id) DO UPDATE SET synced_at = excluded.synced_at WHERE w.synced_at < ${iso(before)}::timestamptz
    RETURNING w.company_id`.execute(db);
  return rows.map((r) => r.company_id);
}
