/**
 * One batch: GET /console/sends/:batchId shows its status, its counts by status (each
 * a link that filters the messages by it) and its messages a page at a time (MESSAGE_PAGE_DEFAULT, keyset
 * pages of src/domain/batch-messages.ts: `?after=` is the cursor of the next page), so the page of a
 * 1,000,000-message send is as small and as quick as that of a 100-message one. `?status=` narrows the
 * messages to one status, `?phone=` to a number (any form of it) or to numbers containing 4+ digits.
 * While the batch is processing the page shows the delivery rate (messages per minute over the last
 * minutes) and the time left at that rate, a Pause (or, paused, a Resume) button for roles that may
 * send (routes/campaign-send.ts), and reloads itself every REFRESH_SECONDS (an HTTP `Refresh`
 * header: no script, and a "Stop refreshing" link, `?refresh=0`). Unknown or another company's batch
 * ids answer 404 (every lookup is scoped to the session's company id).
 */
import type { FastifyInstance } from 'fastify';
import { getSend } from '../../domain/batches.ts';
import { batchProgress, countPhoneMatches, listMessagePage, MESSAGE_STATUSES, parseCursor, type Progress } from '../../domain/batch-messages.ts';
import { DomainError } from '../../domain/errors.ts';
import type { MessageStatus } from '../../db/schema.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { batchView } from '../views/batch.ts';
import { sendTitle } from '../views/sends.ts';

/** Seconds between reloads of a processing batch's page. */
export const REFRESH_SECONDS = 10;

type Query = { phone?: string; status?: string; after?: string; refresh?: string };

/** Registers GET /sends/:batchId[?status=S][&phone=P][&after=CURSOR][&refresh=0] (signed-in scope). */
export function registerBatchPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Params: { batchId: string }; Querystring: Query }>('/sends/:batchId', async (request, reply) => {
    const session = sessionOf(request);
    const companyId = session.company_id;
    const q = request.query;
    const batch = await getSend(db, request.params.batchId, companyId);
    const label = batch;
    const now = deps.clock.now();
    const title = sendTitle(batch, session.time_zone, now);
    const phone = typeof q.phone === 'string' ? q.phone.trim().slice(0, 64) : '';
    const status = MESSAGE_STATUSES.find((st) => st === q.status) as MessageStatus | undefined;
    let after: string | undefined;
    if (typeof q.after === 'string' && q.after !== '') {
      try { parseCursor(q.after); after = q.after; } catch { after = undefined; } // a stale or edited cursor: the first page
    }
    let page: Awaited<ReturnType<typeof listMessagePage>> = { messages: [], next: null };
    let phoneError = '';
    let matches: number | undefined;
    try {
      page = await listMessagePage(db, batch.batch_id, companyId, { after, status, ...(phone ? { phone } : {}) });
      if (phone && !status) matches = await countPhoneMatches(db, batch.batch_id, companyId, phone);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status !== 422) throw err;
      phoneError = 'Enter a phone number, or at least 4 of its digits.';
    }
    const processing = batch.status !== 'completed';
    let progress: Progress | undefined;
    if (batch.status === 'processing') progress = await batchProgress(db, batch.batch_id, batch.counts.pending, deps.clock.now());
    const refreshing = processing && q.refresh !== '0';
    if (refreshing) reply.header('refresh', String(REFRESH_SECONDS));
    return sendPage(request, reply, 200, {
      title, section: 'sends', crumbs: [['Sends', `${BASE}/sends`], [title]],
      body: (csrf) => batchView({
        batch, title, label, now, messages: page.messages, next: page.next, paged: after !== undefined, phone, phoneError, status, matches, progress,
        refreshing: refreshing ? REFRESH_SECONDS : 0, canCancel: can(request, 'POST', `${BASE}/sends/:batchId/cancel`),
        canPause: can(request, 'POST', `${BASE}/sends/:batchId/pause`), csrf,
      }),
    });
  });
}
