/**
 * Sends: GET /console/sends lists the company's batches, newest first, 25 a page
 * (`?page=N`), with status and counts; `?phone=` instead lists the company's messages to that number
 * across batches, each with its status and reason.
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendPage, sessionOf } from '../context.ts';
import { listRecentBatches, searchMessagesByPhone } from '../queries/sends.ts';
import { BASE } from '../views/layout.ts';
import { sendsView } from '../views/sends.ts';

/** Highest page number accepted (deeper pages show nothing). */
const MAX_PAGE = 1000;

/** Registers GET /sends[?page=N | ?phone=P] (signed-in scope). */
export function registerSendsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Querystring: { page?: string; phone?: string } }>('/sends', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const phone = typeof request.query.phone === 'string' ? request.query.phone.trim().slice(0, 64) : '';
    const pageText = typeof request.query.page === 'string' ? request.query.page : '1';
    const page = /^[0-9]{1,4}$/.test(pageText) ? Math.min(MAX_PAGE, Math.max(1, Number(pageText))) : 1;
    if (phone) {
      const company = await getCompany(db, companyId);
      const found = await searchMessagesByPhone(db, companyId, company.default_country, phone);
      return sendPage(request, reply, 200, {
        title: `Sends to ${phone}`, section: 'sends', crumbs: [['Sends', `${BASE}/sends`], ['Search']],
        body: () => sendsView({ phone, found }),
      });
    }
    const { batches, more } = await listRecentBatches(db, companyId, page);
    return sendPage(request, reply, 200, {
      title: 'Sends', section: 'sends', crumbs: [['Sends']],
      body: () => sendsView({ phone: '', batches, page, more, now: deps.clock.now() }),
    });
  });
}
