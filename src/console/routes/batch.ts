/**
 * One batch (issue 6 item 3): GET /console/sends/:batchId shows its status and counts and each
 * message with its final status and reason (or provider error); `?phone=` narrows the messages to
 * numbers containing those digits. Unknown or another company's batch ids answer 404 (getBatch and
 * listBatchMessages are always called with the session's company id).
 */
import type { FastifyInstance } from 'fastify';
import { getBatch, listBatchMessages } from '../../domain/batches.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { batchView } from '../views/batch.ts';

/** Registers GET /sends/:batchId[?phone=P] (signed-in scope). */
export function registerBatchPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Params: { batchId: string }; Querystring: { phone?: string } }>('/sends/:batchId', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const batch = await getBatch(db, request.params.batchId, companyId);
    const all = await listBatchMessages(db, batch.batch_id, companyId);
    const phone = typeof request.query.phone === 'string' ? request.query.phone.trim().slice(0, 64) : '';
    const digits = phone.replace(/\D/g, '');
    const messages = digits ? all.filter((m) => m.phone.replace(/\D/g, '').includes(digits)) : all;
    return sendPage(request, reply, 200, {
      title: `Batch ${batch.batch_id}`, section: 'sends', crumbs: [['Sends', `${BASE}/sends`], [`Batch ${batch.batch_id.slice(0, 8)}`]],
      body: () => batchView({ batch, messages, phone, total: all.length, canCancel: can(request, 'POST', `${BASE}/sends/:batchId/cancel`) }),
    });
  });
}
