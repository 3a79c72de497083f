/**
 * SQL of dynamic segments (docs/segments.md "The filter language"): a checked filter
 * (src/domain/segment-filter.ts) compiled into one boolean SQL expression over `contacts c`, and the
 * statements that count, page and list the company's live contacts matching it. Every name and value
 * of the filter travels as a bound parameter; the SQL text comes only from this file. Each condition
 * is true or false, never NULL (comparisons are `coalesce(..., false)`; EXISTS, `@>` on the NOT NULL
 * `tags` and `opted_out` are never NULL), so a missing attribute makes a condition false and `not` of
 * it true; conditions are left bare where they can be, so a tag can use the GIN index.
 *
 * `OFFSET 0` in the EXISTS sub-selects keeps them correlated probes of one contact's rows: without it
 * the planner may turn an EXISTS under OR into a hashed sub-plan, which reads all of the company's
 * messages (or a segment's members) once per statement, that is once per step of a scan.
 *
 * Indexes: the company's live contacts in contact id order (`contacts_live_id`, migration 038) bound every
 * evaluation, one chunk a statement ({@link scanStep}); a tag
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

/**
 * `t` equal to one of `values` (numbers and texts; `eq` / `in`), true / false / NULL: one lookup per
 * kind of value, so a list of 100 numbers reads `t` as a number once per contact instead of once per
 * value. A list is an uncorrelated `IN (SELECT unnest(...))`, which PostgreSQL runs as a hashed
 * sub-plan built once per statement, also in a generic plan of a prepared statement (where `= ANY` of
 * an array parameter compares with each element in turn).
 */
function equalsAny(t: Expr, values: Scalar[]): Expr {
  const nums = values.flatMap((v) => ('num' in v ? [String(v.num)] : []));
  const texts = values.flatMap((v) => ('text' in v ? [v.text] : []));
  const parts: Expr[] = [];
  if (nums.length) parts.push(nums.length === 1 ? sql`${numeric(t)} = ${nums[0]}::numeric` : sql`${numeric(t)} IN (SELECT unnest(${nums}::numeric[]))`);
  if (texts.length) parts.push(texts.length === 1 ? sql`${t} = ${texts[0]}::text` : sql`${t} IN (SELECT unnest(${texts}::text[]))`);
  return sql.join(parts.map((p) => sql`coalesce(${p}, false)`), sql` OR `);
}

/** `t` compared by `op` with `values` (true / false, never NULL). */
function compare(ctx: FilterContext, t: Expr, op: Op, values: Scalar[], isTime = false): Expr {
  const equality = op === 'eq' || op === 'ne' || op === 'in' || op === 'not_in';
  const anyOf = () => (equality && !isTime && values.every((v) => !('time' in v))
    ? equalsAny(t, values)
    : sql.join(values.map((v) => sql`coalesce(${compareOne(ctx, t, op, v, isTime)}, false)`), sql` OR `));
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
    // Whether the segment is a static one of the company is asked once per statement (an InitPlan),
    // the membership once per contact.
    case 'segment': return sql`(EXISTS (SELECT 1 FROM segments s WHERE s.segment_id = ${c.segment_id}::int AND s.company_id = ${ctx.companyId}::int AND s.filter IS NULL)
      AND EXISTS (SELECT 1 FROM segment_members sm WHERE sm.segment_id = ${c.segment_id}::int AND sm.contact_id = c.contact_id OFFSET 0))`;
    case 'replied': return sql`coalesce(c.last_inbound_at >= ${iso(ctx.now - c.within)}::timestamptz, false)`;
    case 'message': {
      const source = c.campaign_id === undefined && c.automation_id === undefined ? sql`` : sql`AND EXISTS (SELECT 1 FROM batches b WHERE b.batch_id = m.batch_id
        ${c.campaign_id === undefined ? sql`` : sql`AND b.kind = 'campaign' AND b.source_id = ${c.campaign_id}::int`}
        ${c.automation_id === undefined ? sql`` : sql`AND b.kind = 'automation' AND b.source_id = ${c.automation_id}::int`})`;
      return sql`EXISTS (SELECT 1 FROM messages m WHERE m.company_id = ${ctx.companyId}::int AND m.phone = c.phone
        AND ${MESSAGE_TIME[c.status]} >= ${iso(ctx.now - c.within)}::timestamptz ${source} OFFSET 0)`;
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

/** A matching contact as a page shows it. */
export interface MatchingContact { contact_id: number; phone: string; first_name: string | null; last_name: string | null }

/** What one bounded step of a scan found (see {@link scanStep}). */
export interface ScanStep {
  /** The last contact id of the step's range; null when the range reached the company's last contact (the scan is done). */
  last: number | null;
  /** How many of the step's contacts match. */
  count: number;
  /** The first `sampleLimit` matching contacts of the step, in contact id order. */
  sample: MatchingContact[];
}

/**
 * The contact id that ends a step of `chunk` live contacts of the company after `after`: the
 * `chunk`-th one in contact id order, read from the index `contacts_live_id` (migration 038) alone;
 * undefined when fewer are left.
 */
async function stepEnd(db: Db, companyId: number, after: number, chunk: number): Promise<number | undefined> {
  const { rows } = await sql<{ contact_id: number | string }>`
    SELECT contact_id FROM contacts WHERE company_id = ${companyId}::int AND erased_at IS NULL AND contact_id > ${after}::int8
    ORDER BY contact_id OFFSET ${chunk - 1}::int LIMIT 1`.execute(db);
  return rows[0] === undefined ? undefined : Number(rows[0].contact_id);
}

/**
 * One bounded step of evaluating a filter: the company's next `chunk` live contacts after contact id
 * `after` (in contact id order), how many of them match, and the first `sampleLimit` matches. Two
 * statements: the step's end from the index, then the filter over the contacts up to it, evaluated
 * once per contact; its cost is bounded by `chunk` times the filter's cost (docs/segments.md
 * "Limits").
 */
export async function scanStep(db: Db, ctx: FilterContext, node: FilterNode, after: number, chunk: number, sampleLimit: number): Promise<ScanStep> {
  const end = await stepEnd(db, ctx.companyId, after, chunk);
  const upTo = end === undefined ? sql`` : sql`AND c.contact_id <= ${end}::int8`;
  // count(*) OVER () counts every match of the step before LIMIT keeps the first ones; with no match
  // there is no row (count 0). LIMIT is at least 1 so that the count comes back when no sample is asked.
  const { rows } = await sql<MatchingContact & { n: number | string }>`
    SELECT c.contact_id, c.phone, c.first_name, c.last_name, count(*) OVER () AS n FROM contacts c
    WHERE c.company_id = ${ctx.companyId}::int AND c.erased_at IS NULL AND c.contact_id > ${after}::int8 ${upTo}
      AND ${compileFilter(ctx, node)}
    ORDER BY c.contact_id LIMIT ${Math.max(1, sampleLimit)}::int`.execute(db);
  return {
    last: end ?? null,
    count: rows.length ? Number(rows[0].n) : 0,
    sample: rows.slice(0, sampleLimit).map((r) => ({ contact_id: Number(r.contact_id), phone: r.phone, first_name: r.first_name, last_name: r.last_name })),
  };
}

/** The SQL text and parameters of the count statement, for EXPLAIN in docs and tests. */
export function explainCount(ctx: FilterContext, node: FilterNode): Expr {
  return sql`EXPLAIN SELECT count(*) FROM contacts c
    WHERE c.company_id = ${ctx.companyId}::int AND c.erased_at IS NULL AND ${compileFilter(ctx, node)}`;
}
