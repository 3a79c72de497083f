/**
 * Job `receipts-apply` (docs/decisions.md sections 7, 9 and 10: a message's life, webhooks in, gateway
 * receipts): what a provider posted back for one company, applied durably after the webhook route
 * enqueued it.
 *
 * Payload: `{company_id, by, source, statuses, messages?, account?, round?}`; `by` is the lookup column
 * of the statuses (`provider_message_id` for the provider's own ids, `message_id` for gateways),
 * `source` the metric label (src/domain/receipts.ts ReceiptSource).
 *
 * 1. Statuses are collapsed per id and applied in one UPDATE, forward only (src/db/receipts.ts). A
 *    status whose id is not (yet) a message of the company may have overtaken the sender's commit of the
 *    wamid (Meta can answer the send and post `sent` before the worker stores the id): those are sent
 *    again in a follow-up job `UNKNOWN_RETRY_S` seconds later, at most `UNKNOWN_ROUNDS` times, then
 *    counted (`cms_receipts_total{outcome="unknown"}`) and ignored.
 * 2. Inbound messages (from providers that relay them) are stored with their keyword opt-outs, the senders' profile
 *    names and last inbound times in one transaction.
 * 3. Account-level changes (template status, quality and category, the number's quality and messaging
 *    limit, pauses; src/domain/channel-changes.ts) are applied in one transaction.
 * Idempotent: a second run changes nothing (forward-only updates, inbound stored once per id, template
 * fields set to the same values, a paused channel stays paused with its first reason).
 */
import { applyReceipts, companyForInbound } from '../../db/receipts.ts';
import { storeInbound, type InboundCompany } from '../../domain/inbound.ts';
import { collapseStatuses, type InboundItem, type ReceiptSource, type StatusItem } from '../../domain/receipts.ts';
import { applyAccountChanges, type AccountChange } from '../../domain/channel-changes.ts';
import { receiptsTotal } from '../../metrics.ts';
import type { PipelineContext } from './context.ts';

/** The `receipts-apply` job's data. */
export interface ReceiptsJob {
  company_id: number;
  by: 'provider_message_id' | 'message_id';
  source: ReceiptSource;
  statuses: StatusItem[];
  messages?: InboundItem[];
  /** Account-level changes (templates, quality, limit, pauses), in payload order. */
  account?: AccountChange[];
  /** 0 for the webhook's own job; 1.. for the follow-ups of unknown ids. */
  round?: number;
}

/** Follow-up rounds for statuses of ids not (yet) known. */
export const UNKNOWN_ROUNDS = 3;
/** Seconds between those rounds. */
export const UNKNOWN_RETRY_S = 3;

/** Applies one job; returns counts (for tests and logs). */
export async function applyReceiptsJob(ctx: Pick<PipelineContext, 'db' | 'boss' | 'logger' | 'clock'>, job: ReceiptsJob): Promise<{ applied: number; ignored: number; unknown: number; inbound: number }> {
  const receipts = collapseStatuses(job.statuses);
  const outcomes = await applyReceipts(ctx.db, job.company_id, job.by, receipts);
  const unknownIds = new Set(outcomes.filter((o) => !o.known).map((o) => o.id));
  const applied = outcomes.filter((o) => o.applied).length;
  const ignored = outcomes.length - applied - unknownIds.size;
  if (applied) receiptsTotal.inc({ source: job.source, outcome: 'applied' }, applied);
  if (ignored) receiptsTotal.inc({ source: job.source, outcome: 'ignored' }, ignored);
  const round = job.round ?? 0;
  if (unknownIds.size) {
    if (round < UNKNOWN_ROUNDS) {
      const again = job.statuses.filter((s) => unknownIds.has(s.id));
      await ctx.boss.send('receipts-apply', { company_id: job.company_id, by: job.by, source: job.source, statuses: again, round: round + 1 }, { startAfter: UNKNOWN_RETRY_S });
      receiptsTotal.inc({ source: job.source, outcome: 'retried' }, unknownIds.size);
    } else {
      receiptsTotal.inc({ source: job.source, outcome: 'unknown' }, unknownIds.size);
      ctx.logger.info({ company_id: job.company_id, unknown: unknownIds.size }, 'receipts for unknown message ids ignored');
    }
  }
  let inbound = 0;
  if (job.messages?.length) {
    const company = await companyForInbound(ctx.db, job.company_id);
    if (company) {
      const r = await ctx.db.transaction().execute((trx) => storeInbound(trx, company as InboundCompany, job.messages!));
      inbound = r.stored;
      if (r.stored) receiptsTotal.inc({ source: job.source, outcome: 'inbound' }, r.stored);
    }
  }
  if (job.account?.length) {
    const r = await ctx.db.transaction().execute((trx) => applyAccountChanges(trx, job.company_id, job.account!, ctx.clock.now()));
    if (r.paused) ctx.logger.warn({ company_id: job.company_id }, 'channel paused by the provider\'s account update');
  }
  return { applied, ignored, unknown: unknownIds.size, inbound };
}
