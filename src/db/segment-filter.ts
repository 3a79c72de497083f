/**
 * SQL of dynamic segments (docs/segments.md "The filter language"): a checked filter
 * (src/domain/segment-filter.ts) compiled into one boolean SQL expression over `contacts c`, and the
 * statements that count, page and list the company's live contacts matching it. Every name and value
 * of the filter travels as a bound parameter; the SQL text comes only from this file. Each condition
 * is true or false, never NULL (comparisons are `coalesce(..., false)`; EXISTS, `@>` on the NOT NULL
 * `tags` and `opted_out` are never NULL), so a missing attribute makes a condition false and `not` of
 * it true; conditions are left bare where they can be, so a tag can use the GIN index.
 *
 * Indexes: the company's live contacts (`contacts_live`, migration 015) bound every evaluation; a tag
 * uses the GIN index `contacts_tags` (026); `message` conditions probe `messages_company_phone` (004)
 * per candidate; `segment` the primary key of `segment_members`.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import type { Condition, FilterNode, Op, Scalar, TimeValue } from '../domain/segment-filter.ts';

type Expr = RawBuilder<unknown>;

/** What a compiled filter needs besides the tree: the company (scoping sub-queries) and the evaluation time (ms). */
export interface FilterContext { companyId: number; now: number }

const iso = (ms: number) => new Date(ms).toISOString();

function numeric(t: Expr): Expr {
  return sql`(CASE WHEN ${t} ~ '^-?[0-9]+([.][0-9]+)?([eE][+-]?[0-9]{1,3})?$' THEN (${t})::numeric END)`;
}

function timeOf(ctx: FilterContext, t: TimeValue): Expr {
  const ms = 'at' in t ? t.at : ctx.now - t.ago;
  return sql`${iso(ms)}::timestamptz`;
}

/** `t` (a text, or a timestamptz when `isTime`) compared with one value. */
function compareOne(ctx: FilterContext, t: Expr, op: Op, v: Scalar, isTime: boolean): Expr {
  const cmp = op === 'gt' ? sql`>` : op === 'gte' ? sql`>=` : op === 'lt' ? sql`<` : op === 'lte' ? sql`<=` : sql`=`;
  if ('num' in v) return sql`${numeric(t)} ${cmp} ${String(v.num)}::numeric`;
  if ('time' in v) return sql`${isTime ? t : sql`cms_text_time(${t})`} ${cmp} ${timeOf(ctx, v.time)}`;
  if (op === 'contains') return sql`strpos(${t}, ${v.text}::text) > 0`;
  if (op === 'starts_with') return sql`starts_with(${t}, ${v.text}::text)`;
  if (op === 'eq' || op === 'ne' || op === 'in' || op === 'not_in') return sql`${t} = ${v.text}::text`;
  return sql`${t} COLLATE "C" ${cmp} ${v.text}::text COLLATE "C"`;
}

/** `t` compared by `op` with `values` (true / false, never NULL). */
function compare(ctx: FilterContext, t: Expr, op: Op, values: Scalar[], isTime = false): Expr {
  const anyOf = () => sql.join(values.map((v) => sql`coalesce(${compareOne(ctx, t, op, v, isTime)}, false)`), sql` OR `);
  switch (op) {
    case 'exists': return sql`(${t} IS NOT NULL)`;
    case 'not_exists': return sql`(${t} IS NULL)`;
    case 'ne': case 'not_in': return sql`(${t} IS NOT NULL AND NOT (${anyOf()}))`;
    default: return sql`(${anyOf()})`;
  }
}

const TEXT_COLUMN = { first_name: sql`c.first_name`, last_name: sql`c.last_name`, phone: sql`c.phone`, country: sql`nullif(c.country, '')` };
/**
 * The contact's time fields. The last sent / delivered / read times are its messages' latest ones (a
 * read message counts as delivered and sent), read through the messages' (company_id, phone) index.
 */
const TIME_COLUMN = {
  created_at: sql`c.created_at`, last_inbound_at: sql`c.last_inbound_at`,
  last_sent_at: sql`(SELECT max(lm.sent_at) FROM messages lm WHERE lm.company_id = c.company_id AND lm.phone = c.phone AND lm.status IN ('sent', 'delivered', 'read'))`,
  last_delivered_at: sql`(SELECT max(lm.delivered_at) FROM messages lm WHERE lm.company_id = c.company_id AND lm.phone = c.phone AND lm.status IN ('delivered', 'read'))`,
  last_read_at: sql`(SELECT max(lm.read_at) FROM messages lm WHERE lm.company_id = c.company_id AND lm.phone = c.phone AND lm.status = 'read')`,
};
const MESSAGE_TIME = { sent: sql`m.sent_at`, delivered: sql`m.delivered_at`, read: sql`m.read_at`, failed: sql`m.failed_at` };

function condition(ctx: FilterContext, c: Condition): Expr {
  switch (c.kind) {
    case 'attribute': return compare(ctx, sql`(c.variables ->> ${c.name}::text)`, c.op, c.values);
    case 'text': return compare(ctx, TEXT_COLUMN[c.field], c.op, c.values);
    case 'time': return compare(ctx, TIME_COLUMN[c.field], c.op, c.values, true);
    case 'opted_out': return c.op === 'eq' ? sql`(c.opted_out = ${c.value})` : sql`(c.opted_out <> ${c.value})`;
    case 'tag': return sql`(c.tags @> ARRAY[${c.tag}::text])`;
    case 'segment': return sql`EXISTS (SELECT 1 FROM segment_members sm JOIN segments s ON s.segment_id = sm.segment_id
      WHERE sm.segment_id = ${c.segment_id}::int AND sm.contact_id = c.contact_id AND s.company_id = ${ctx.companyId}::int AND s.filter IS NULL)`;
    case 'replied': return sql`coalesce(c.last_inbound_at >= ${iso(ctx.now - c.within)}::timestamptz, false)`;
    case 'message': {
      const source = c.campaign_id === undefined && c.automation_id === undefined ? sql`` : sql`AND EXISTS (SELECT 1 FROM batches b WHERE b.batch_id = m.batch_id
        ${c.campaign_id === undefined ? sql`` : sql`AND b.kind = 'campaign' AND b.source_id = ${c.campaign_id}::int`}
        ${c.automation_id === undefined ? sql`` : sql`AND b.kind = 'automation' AND b.source_id = ${c.automation_id}::int`})`;
      return sql`EXISTS (SELECT 1 FROM messages m WHERE m.company_id = ${ctx.companyId}::int AND m.phone = c.phone
        AND ${MESSAGE_TIME[c.status]} >= ${iso(ctx.now - c.within)}::timestamptz ${source})`;
    }
  }
}

/** The filter as one boolean SQL expression over `contacts c`. */
export function compileFilter(ctx: FilterContext, node: FilterNode): Expr {
  if ('all' in node) return sql`(${sql.join(node.all.map((n) => compileFilter(ctx, n)), sql` AND `)})`;
  if ('any' in node) return sql`(${sql.join(node.any.map((n) => compileFilter(ctx, n)), sql` OR `)})`;
  if ('not' in node) return sql`(NOT ${compileFilter(ctx, node.not)})`;
  return condition(ctx, node);
}

/** How many of the company's live contacts match. */
export async function countMatching(db: Db, ctx: FilterContext, node: FilterNode): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM contacts c
    WHERE c.company_id = ${ctx.companyId}::int AND c.erased_at IS NULL AND ${compileFilter(ctx, node)}`.execute(db);
  return rows[0]?.n ?? 0;
}

/** A matching contact as a page shows it. */
export interface MatchingContact { contact_id: number; phone: string; first_name: string | null; last_name: string | null }

/** At most `limit` matching contacts with contact id greater than `after`, in contact id order. */
export async function selectMatching(db: Db, ctx: FilterContext, node: FilterNode, after: number, limit: number): Promise<MatchingContact[]> {
  const { rows } = await sql<MatchingContact>`
    SELECT c.contact_id, c.phone, c.first_name, c.last_name FROM contacts c
    WHERE c.company_id = ${ctx.companyId}::int AND c.erased_at IS NULL AND c.contact_id > ${after}::int8 AND ${compileFilter(ctx, node)}
    ORDER BY c.contact_id LIMIT ${limit}::int`.execute(db);
  return rows.map((r) => ({ ...r, contact_id: Number(r.contact_id) }));
}

/** The SQL text and parameters of the count statement, for EXPLAIN in docs and tests. */
export function explainCount(ctx: FilterContext, node: FilterNode): Expr {
  return sql`EXPLAIN SELECT count(*) FROM contacts c
    WHERE c.company_id = ${ctx.companyId}::int AND c.erased_at IS NULL AND ${compileFilter(ctx, node)}`;
}
