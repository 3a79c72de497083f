/**
 * Segments (src/domain/segments.ts):
 * - `GET /segments`: the company's segments with their kind and member counts (a dynamic one's: the
 *   contacts matching its filter now), the create form and the link to the builder of a dynamic
 *   segment (routes/segment-builder.ts);
 * - `POST /segments` `{name}`: creates a segment by the rules of docs/api.md 4.1 (name 1 to 255 characters,
 *   surrounding spaces dropped first; at most 20 segments), then 303 to its page. A refused name or
 *   the 21st segment: 422 with the error beside the field and the name kept, nothing written.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import { addSegment, listSegments, segmentNameProblem } from '../../domain/segments.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, nowOf, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { segmentsView, type FieldErrors } from '../views/segments.ts';

/** Fixed notices other pages may ask this page to show (`?done=`). */
const NOTICES: Record<string, string> = { deleted: 'The segment was deleted.' };

/** Registers GET and POST /segments (signed-in scope). */
export function registerSegmentsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, extra: { name?: string; errors?: FieldErrors; flash?: string }) {
    const segments = await listSegments(db, sessionOf(request).company_id, nowOf(deps).getTime());
    return sendPage(request, reply, status, {
      title: 'Segments', section: 'segments', crumbs: [['Segments']], flash: extra.flash,
      body: (csrf) => segmentsView({ csrf, segments, name: extra.name ?? '', errors: extra.errors ?? {}, canEdit: can(request, 'POST', `${BASE}/segments`) }),
    });
  }

  scope.get<{ Querystring: { done?: string } }>('/segments', async (request, reply) =>
    show(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post('/segments', async (request, reply) => {
    const session = sessionOf(request);
    const name = field(request.body, 'name').trim();
    const problem = segmentNameProblem(name);
    if (problem) return show(request, reply, 422, { name, errors: { name: problem } });
    let created;
    try {
      created = await addSegment(db, consoleActor(session), session.company_id, { name }, nowOf(deps).getTime());
    } catch (err) {
      if (err instanceof DomainError && err.status === 400) return show(request, reply, 422, { name, errors: { name: `${err.detail}. Delete one to create another.` } });
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/segments/${created.segment_id}?done=created`, 303);
  });
}
