/**
 * The status and results of automations and campaigns, as the console's lists show them
 * (docs/console.md "Automations and campaigns"):
 * - **status**: an automation is `active`, `inactive` or `archived`; a campaign is `draft` (never
 *   sent), `scheduled` (its newest send waits for its time), `sending`, `paused`, `sent`, `cancelled`
 *   (its newest send's state) or `archived`;
 * - **last send**: when its newest batch (send, trigger or test send) was accepted;
 * - **results** of its batches accepted in the last {@link RESULTS_DAYS} days (the Overview's period):
 *   messages (the batches' totals), sent, delivered and read (as the batch funnel counts them,
 *   src/domain/batch-counts.ts: a read message was delivered and sent), failed and skipped; delivered
 *   and read as a share of the messages sent (null when none was sent).
 */
import type { Db } from '../db/database.ts';
import { selectSourceResults, type SourceResultRow } from '../db/source-results.ts';
import type { SourceRow } from './automations.ts';

/** The period the results cover, in days. */
export const RESULTS_DAYS = 30;

/** What a list shows of one source. */
export interface SourceResults {
  status: string;
  last_sent_at: Date | null;
  messages: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  skipped: number;
  /** delivered / sent, 0..1; null when nothing was sent. */
  delivered_rate: number | null;
  /** read / sent, 0..1; null when nothing was sent. */
  read_rate: number | null;
}

/** The status of a source (see the module comment) from its row and its newest batch; `now` in ms. */
export function sourceStatus(s: SourceRow, last: Pick<SourceResultRow, 'last_batch_at' | 'last_status' | 'last_send_at' | 'last_cancelled' | 'last_paused'> | undefined, now: number): string {
  if (s.archived_at) return 'archived';
  if (s.kind === 'automation') return s.active ? 'active' : 'inactive';
  if (!last?.last_batch_at) return 'draft';
  if (last.last_cancelled) return 'cancelled';
  if (last.last_status === 'completed') return 'sent';
  if (last.last_paused) return 'paused';
  if (last.last_send_at && Date.parse(last.last_send_at) > now) return 'scheduled';
  return 'sending';
}

/** The status and results of each of `sources` (all of one company and kind), by id; `now` in ms. */
export async function sourceResults(db: Db, companyId: number, sources: SourceRow[], now: number): Promise<Map<number, SourceResults>> {
  const out = new Map<number, SourceResults>();
  if (sources.length === 0) return out;
  const since = new Date(now - RESULTS_DAYS * 86_400_000);
  const rows = new Map((await selectSourceResults(db, companyId, sources[0].kind, sources.map((s) => s.id), since)).map((r) => [Number(r.source_id), r]));
  for (const s of sources) {
    const r = rows.get(s.id);
    const sent = r?.sent ?? 0;
    out.set(s.id, {
      status: sourceStatus(s, r, now),
      last_sent_at: r?.last_batch_at ? new Date(r.last_batch_at) : null,
      messages: r?.messages ?? 0, sent, delivered: r?.delivered ?? 0, read: r?.read ?? 0, failed: r?.failed ?? 0, skipped: r?.skipped ?? 0,
      delivered_rate: sent ? (r?.delivered ?? 0) / sent : null,
      read_rate: sent ? (r?.read ?? 0) / sent : null,
    });
  }
  return out;
}
