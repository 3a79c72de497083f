/**
 * One segment (src/domain/segments.ts):
 * - `GET /segments/{id}[?after=CONTACT_ID]`: name, member count, members 50 per page (keyset by contact
 *   id), the result of the last members change (once), the members, rename and delete forms; a dynamic
 *   segment shows its conditions in words and the contacts matching them now (service clock), with a
 *   link to the builder (routes/segment-builder.ts) instead of the members form;
 * - `POST /segments/{id}/rename` `{name}`: the name rule of docs/api.md 4.1 (surrounding spaces dropped),
 *   303 back with a notice; refused: 422 with the error beside the field, the name kept;
 * - `GET /segments/{id}/delete`, `POST /segments/{id}/delete`: confirm, then delete (memberships go,
 *   contacts stay; sends already made from it are not changed) and 303 to the list;
 * - `POST /segments/{id}/members`: routes/segment-members.ts, registered from here.
 * Another company's segment id answers 404 exactly like an unknown one. Changes are the commands of
 * src/domain/segments.ts run as the signed-in user, which audit-logs them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { editSegment, getSegment, membersPage, removeSegment, segmentNameProblem } from '../../domain/segments.ts';
import { selectSegmentNames } from '../../db/segments.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, nowOf, parseId, sendPage, sessionOf } from '../context.ts';
import { describeFilter, rowsOfFilter } from '../segment-builder.ts';
import { BASE } from '../views/layout.ts';
import { deleteView, segmentView, type FieldErrors, type MembersForm } from '../views/segments.ts';
import { registerSegmentMembersRoute, takeSummary, type ShownSummary } from './segment-members.ts';

/** Fixed notices other requests may ask the page to show (`?done=`). */
const NOTICES: Record<string, string> = {
  created: 'Segment created. Add members below.',
  created_dynamic: 'Dynamic segment created: its members are the contacts that match its conditions.',
  filter_saved: 'Conditions saved.',
  renamed: 'Segment renamed.',
};

type Params = { Params: { segmentId: string } };

/** A cursor from the query string: a contact id, or 0 (the first page) for anything else. */
const cursor = (text: unknown) => (typeof text === 'string' && /^[0-9]{1,15}$/.test(text) ? Number(text) : 0);

/** Registers the pages of the module comment (signed-in scope). */
export function registerSegmentPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, segmentId: number, extra: {
    after?: number; membersForm?: MembersForm; name?: string; errors?: FieldErrors; flash?: string; summary?: ShownSummary;
  } = {}) {
    const companyId = sessionOf(request).company_id;
    const now = nowOf(deps).getTime();
    const page = await membersPage(db, companyId, segmentId, extra.after ?? 0, undefined, now);
    const s = page.segment;
    // Names only: listSegments would count every segment's members again (a dynamic one's: a scan of the contacts).
    const names = s.filter == null ? undefined : new Map((await selectSegmentNames(db, companyId)).map((x) => [x.segment_id, x.name]));
    return sendPage(request, reply, status, {
      title: `Segment ${s.name}`, section: 'segments', crumbs: [['Segments', `${BASE}/segments`], [s.name]], flash: extra.flash,
      body: (csrf) => segmentView({
        csrf, segment: s, members: page.members, after: extra.after ?? 0, next: page.next,
        membersForm: extra.membersForm ?? { mode: 'add', numbers: '', hashed: false },
        name: extra.name ?? s.name, errors: extra.errors ?? {}, summary: extra.summary,
        canEdit: can(request, 'POST', `${BASE}/segments/:segmentId/members`),
        filterWords: s.filter == null ? undefined : describeFilter(s.filter, (id) => names?.get(id)),
        builderEditable: s.filter != null && rowsOfFilter(s.filter) !== undefined,
      }),
    });
  }

  scope.get<Params & { Querystring: { after?: string; done?: string } }>('/segments/:segmentId', async (request, reply) => {
    const segmentId = parseId(request.params.segmentId);
    // The flash is bound to the segment id; show() answers 404 for an unknown or another company's id.
    const summary = takeSummary(deps, request, reply, segmentId);
    return show(request, reply, 200, segmentId, { after: cursor(request.query.after), summary, flash: NOTICES[String(request.query.done ?? '')] });
  });

  scope.post<Params>('/segments/:segmentId/rename', async (request, reply) => {
    const session = sessionOf(request);
    const segment = await getSegment(db, session.company_id, parseId(request.params.segmentId), nowOf(deps).getTime());
    const name = field(request.body, 'name').trim();
    const problem = segmentNameProblem(name);
    if (problem) return show(request, reply, 422, segment.segment_id, { name, errors: { name: problem } });
    const renamed = await editSegment(db, consoleActor(session), session.company_id, segment.segment_id, { name });
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/segments/${renamed.segment_id}?done=renamed`, 303);
  });

  scope.get<Params>('/segments/:segmentId/delete', async (request, reply) => {
    const segment = await getSegment(db, sessionOf(request).company_id, parseId(request.params.segmentId), nowOf(deps).getTime());
    return sendPage(request, reply, 200, {
      title: `Delete segment ${segment.name}`, section: 'segments',
      crumbs: [['Segments', `${BASE}/segments`], [segment.name, `${BASE}/segments/${segment.segment_id}`], ['Delete']],
      body: (csrf) => deleteView({ csrf, segment, canEdit: can(request, 'POST', `${BASE}/segments/:segmentId/delete`) }),
    });
  });

  scope.post<Params>('/segments/:segmentId/delete', async (request, reply) => {
    const session = sessionOf(request);
    await removeSegment(db, consoleActor(session), session.company_id, parseId(request.params.segmentId));
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/segments?done=deleted`, 303);
  });

  registerSegmentMembersRoute(scope, deps, (request, reply, status, segmentId, extra) => show(request, reply, status, segmentId, extra));
}
