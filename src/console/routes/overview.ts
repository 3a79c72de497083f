/**
 * Overview: GET /console/overview, the console's home page. The signed-in company's
 * messages per day by status over the last 30 days (days in the time zone of its delivery hours, UTC
 * without), the top failure reasons and the opt-out rate (queries/overview.ts), as of the service's
 * clock. Read-only: every role may see it.
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import type { AppDeps } from '../../http/deps.ts';
import { nowOf, sendPage, sessionOf } from '../context.ts';
import { companyOverview } from '../queries/overview.ts';
import { overviewView } from '../views/overview.ts';

/** Registers GET /overview (signed-in scope). */
export function registerOverviewPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get('/overview', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const company = await getCompany(db, companyId);
    const overview = await companyOverview(db, companyId, company.delivery_hours?.timezone ?? null, nowOf(deps));
    return sendPage(request, reply, 200, {
      title: 'Overview', section: 'overview', crumbs: [['Overview']],
      body: () => overviewView(overview),
    });
  });
}
