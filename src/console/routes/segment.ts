/**
 * One segment: GET /console/segments/:segmentId shows its name, member count and the 100 most recently
 * added members. Unknown or another company's segment ids answer 404.
 */
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../domain/errors.ts';
import type { AppDeps } from '../../http/deps.ts';
import { parseId, sendPage, sessionOf } from '../context.ts';
import { findCompanySegment, listSegmentMembers } from '../queries/segments.ts';
import { BASE } from '../views/layout.ts';
import { segmentView } from '../views/segments.ts';

/** Members shown on a segment's page. */
const MEMBERS_SHOWN = 100;

/** Registers GET /segments/:segmentId (signed-in scope). */
export function registerSegmentPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Params: { segmentId: string } }>('/segments/:segmentId', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const segment = await findCompanySegment(db, companyId, parseId(request.params.segmentId));
    if (!segment) throw notFound('Segment not found');
    const members = await listSegmentMembers(db, companyId, segment.segment_id, MEMBERS_SHOWN);
    return sendPage(request, reply, 200, {
      title: `Segment ${segment.name}`, section: 'segments', crumbs: [['Segments', `${BASE}/segments`], [segment.name]],
      body: () => segmentView(segment, members, MEMBERS_SHOWN),
    });
  });
}
