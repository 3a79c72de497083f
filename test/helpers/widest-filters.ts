/**
 * The costliest filters the documented limits of the filter language allow (docs/segments.md
 * "Limits"), built from the limits themselves (src/domain/segment-filter.ts), so that a change of a
 * limit or a weight changes them too. Each spends the whole work budget (MAX_FILTER_COST) on one kind
 * of costly condition and fills the rest with the costliest plain condition, all under one `any` of
 * conditions that match nobody (so none is skipped: every condition is evaluated for every contact).
 *
 * The contacts they are run against carry the variables `score` (a number as text), `joined` (a date)
 * and `city` (a text); `segmentId` names a static segment of the company (for `segment` conditions),
 * `campaignId` a campaign of it (for `message` conditions).
 * Used by the suite (test/security/filter-limits.test.ts) and the benchmark (bench/filter-limits.ts).
 */
import { COST, MAX_CONDITIONS, MAX_FILTER_COST, MAX_LIST, MAX_LIST_TOTAL } from '../../src/domain/segment-filter.ts';

type Filter = Record<string, unknown>;

/** A plain condition (COST.plain) that reads an attribute and matches nobody; `i` varies its value. */
const plain = (i: number): Filter => ({ attribute: 'city', op: 'contains', value: `nowhere-${i}` });

/** `count` costly conditions of `cost` each, filled up with plain ones to the budget and the condition limit. */
function spend(costly: (i: number) => Filter, cost: number, max = Infinity): Filter[] {
  const n = Math.min(max, Math.floor(MAX_FILTER_COST / cost), MAX_CONDITIONS);
  const rest = Math.min(MAX_CONDITIONS - n, Math.floor((MAX_FILTER_COST - n * cost) / COST.plain));
  return [...Array.from({ length: n }, (_, i) => costly(i)), ...Array.from({ length: rest }, (_, i) => plain(i))];
}

/** Numbers no contact's `score` has (scores are below 1,000,000), `MAX_LIST` of them, starting at `from`. */
const missingNumbers = (from: number) => Array.from({ length: MAX_LIST }, (_, i) => 1_000_000 + from * MAX_LIST + i);

/** The costliest filters by kind: name to filter. Each is within every documented limit. */
export function widestFilters(opts: { segmentId: number; campaignId?: number }): Record<string, Filter> {
  const lists = Math.floor(MAX_LIST_TOTAL / MAX_LIST);
  return {
    // `in` lists of texts, as many values as allowed in all.
    text_lists: { any: spend((i) => ({ field: 'first_name', op: 'in', value: Array.from({ length: MAX_LIST }, (_, k) => `nobody-${i}-${k}`) }), COST.plain, lists) },
    // `in` lists of numbers, on an attribute read as a number.
    number_lists: { any: spend((i) => ({ attribute: 'score', op: 'in', value: missingNumbers(i) }), COST.number, lists) },
    // Attributes compared with a number.
    numbers: { any: spend((i) => ({ attribute: 'score', op: 'gt', value: 1_000_000 + i }), COST.number) },
    // Attributes compared with a time (read as a time per contact).
    times: { any: spend((i) => ({ attribute: 'joined', op: 'gt', value: `2999-01-${String(1 + (i % 28)).padStart(2, '0')}` }), COST.time) },
    // Times derived from the contact's messages.
    message_times: { any: spend((i) => ({ field: (['last_sent_at', 'last_read_at', 'last_delivered_at'] as const)[i % 3], op: 'gt', value: '2999-01-01' }), COST.messageTime) },
    // Message conditions, naming a campaign (the costlier form).
    messages: { any: spend((i) => ({ message: (['read', 'failed', 'delivered', 'sent'] as const)[i % 4], within: `${i + 1}m`, ...(opts.campaignId ? { campaign_id: opts.campaignId } : {}) }), COST.message) },
    // Static segment memberships.
    segments: { any: spend(() => ({ segment: opts.segmentId }), COST.segment) },
    // As many plain conditions as allowed.
    plain: { any: Array.from({ length: Math.min(MAX_CONDITIONS, Math.floor(MAX_FILTER_COST / COST.plain)) }, (_, i) => plain(i)) },
  };
}
