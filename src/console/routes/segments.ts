/** Segments (issue 6 item 3): GET /console/segments lists the company's segments with member counts. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { sendPage, sessionOf } from '../context.ts';
import { listCompanySegments } from '../queries/segments.ts';
import { segmentsView } from '../views/segments.ts';

/** Registers GET /segments (signed-in scope). */
export function registerSegmentsPage(scope: FastifyInstance, deps: AppDeps): void {
  scope.get('/segments', async (request, reply) => {
    const segments = await listCompanySegments(deps.database.db, sessionOf(request).company_id);
    return sendPage(request, reply, 200, {
      title: 'Segments', section: 'segments', crumbs: [['Segments']],
      body: () => segmentsView(segments),
    });
  });
}
