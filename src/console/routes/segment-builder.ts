/**
 * The segment builder (docs/audience.md "The segment builder"; the form in
 * src/console/segment-builder.ts, the page in views/segment-builder.ts):
 *
 * - `GET /segments/new`: the builder of a new dynamic segment (one empty condition);
 * - `POST /segments/new` with `action`: `add` (a row), `remove:<i>` (row i), `preview` (the count and
 *   the first 10 matching contacts, drawn into the page) or `save` (creates the segment by the rules
 *   of docs/api.md 4.1, audit-logged, then 303 to its page); every other field is the form itself;
 * - `GET /segments/{id}/filter`, `POST /segments/{id}/filter`: the same for the conditions of a dynamic
 *   segment (`save` replaces its filter, audit-logged as `segment.filter`); a static segment answers
 *   409 (its members are kept by hand), a filter the builder cannot show 409 too (it is shown in words
 *   on the segment's page; change it through the operator API or `cms`);
 * - `POST /segments/preview`: the preview of the posted form as an HTML fragment, for the page's
 *   script (200, or 422 with the problem); the same domain function as the operator API's preview
 *   (`previewFilter`).
 *
 * A refused form (a row's problem, a bad name, the 21st segment) answers 422 with the problem beside
 * its input and the form kept; nothing is written. Problems the filter language finds (a time that is
 * no time, a segment of another company...) are shown beside the row they come from, never a 500.
 * Another company's segment answers 404 like an unknown one. Times are the service clock's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { previewFilter } from '../../domain/dynamic-segments.ts';
import { DomainError } from '../../domain/errors.ts';
import { addSegment, editSegment, getSegment, listSegments, segmentNameProblem } from '../../domain/segments.ts';
import { FilterError } from '../../domain/segment-filter.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, parseId, sendHtml, sendPage, sessionOf } from '../context.ts';
import { sendErrorPage } from '../errors.ts';
import { emptyRow, filterOfForm, MAX_ROWS, readBuilderForm, rowErrorOfLoc, rowsOfFilter, type BuilderForm, type RowError } from '../segment-builder.ts';
import { BASE } from '../views/layout.ts';
import { builderView, previewFragment, type PreviewState } from '../views/segment-builder.ts';

type Params = { Params: { segmentId: string } };

/** What the page shows besides the form. */
interface Extra { rowError?: RowError; nameError?: string; preview?: PreviewState }

/** Registers the routes of the module comment (signed-in scope). */
export function registerSegmentBuilderPages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const now = () => deps.clock.now();

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, form: BuilderForm, segment: { segment_id: number; name: string } | undefined, extra: Extra = {}) {
    const companyId = sessionOf(request).company_id;
    const all = await listSegments(db, companyId, now());
    const action = segment ? `${BASE}/segments/${segment.segment_id}/filter` : `${BASE}/segments/new`;
    const crumbs: [string, string?][] = segment
      ? [['Segments', `${BASE}/segments`], [segment.name, `${BASE}/segments/${segment.segment_id}`], ['Conditions']]
      : [['Segments', `${BASE}/segments`], ['New dynamic segment']];
    return sendPage(request, reply, status, {
      title: segment ? `Conditions of ${segment.name}` : 'New dynamic segment', section: 'segments', crumbs, scripts: ['segment-builder.js'],
      body: (csrf) => builderView({
        csrf, action, segment, form, ...extra, preview: extra.preview,
        segments: all.filter((s) => s.filter == null).map((s) => ({ segment_id: s.segment_id, name: s.name })),
        segmentCount: all.length, canEdit: can(request, 'POST', action),
      }),
    });
  }

  /** The preview of a form: its count and sample, or the problem to show (beside a row: `rowError`). */
  async function preview(companyId: number, form: BuilderForm): Promise<{ preview: PreviewState; rowError?: RowError }> {
    const built = filterOfForm(form);
    if ('error' in built) return { preview: { problem: `condition ${built.error.row + 1}: ${lower(built.error.message)}` }, rowError: built.error };
    try {
      return { preview: await previewFilter(db, companyId, built.filter, now()) };
    } catch (err) {
      if (!(err instanceof FilterError)) throw err;
      const rowError = rowErrorOfLoc(err.loc, err.detail);
      return { preview: { problem: `condition ${rowError.row + 1}: ${lower(rowError.message)}` }, rowError };
    }
  }

  /**
   * The answer to a posted builder: a row added or removed, a preview, or (save) `onSave` with the
   * checked filter; problems of the filter language beside their row.
   */
  async function handle(request: FastifyRequest, reply: FastifyReply, segment: { segment_id: number; name: string } | undefined,
    onSave: (form: BuilderForm, filter: Record<string, unknown>) => Promise<{ done: FastifyReply } | Extra>) {
    const session = sessionOf(request);
    const body = request.body as Record<string, unknown> | undefined;
    const action = typeof body?.action === 'string' ? body.action : 'preview';
    const form = readBuilderForm(body);
    if (action === 'add') {
      if (form.rows.length < MAX_ROWS) form.rows.push(emptyRow());
      return show(request, reply, 200, form, segment);
    }
    const removed = /^remove:([0-9]{1,3})$/.exec(action);
    if (removed) {
      form.rows.splice(Number(removed[1]), 1);
      if (form.rows.length === 0) form.rows.push(emptyRow());
      return show(request, reply, 200, form, segment);
    }
    if (action === 'save') {
      const built = filterOfForm(form);
      const nameError = segment ? undefined : segmentNameProblem(form.name.trim());
      if ('error' in built || nameError) {
        return show(request, reply, 422, form, segment, { nameError, ...(await preview(session.company_id, form)) });
      }
      try {
        const saved = await onSave(form, built.filter);
        return 'done' in saved ? saved.done : show(request, reply, 422, form, segment, saved);
      } catch (err) {
        if (err instanceof FilterError) {
          const rowError = rowErrorOfLoc(err.loc, err.detail);
          return show(request, reply, 422, form, segment, { rowError, preview: { problem: `condition ${rowError.row + 1}: ${lower(rowError.message)}` } });
        }
        throw err;
      }
    }
    const p = await preview(session.company_id, form);
    return show(request, reply, p.rowError ? 422 : 200, form, segment, p);
  }

  scope.get('/segments/new', async (request, reply) =>
    show(request, reply, 200, { name: '', match: 'all', rows: [emptyRow()] }, undefined));

  scope.post('/segments/new', async (request, reply) => handle(request, reply, undefined, async (form, filter) => {
    const session = sessionOf(request);
    const name = form.name.trim();
    let created;
    try {
      created = await addSegment(db, consoleActor(session), session.company_id, { name, filter }, now());
    } catch (err) {
      if (err instanceof DomainError && err.status === 400) return { nameError: `${err.detail}. Delete one to create another.` };
      throw err;
    }
    return { done: reply.header('cache-control', 'no-store').redirect(`${BASE}/segments/${created.segment_id}?done=created_dynamic`, 303) };
  }));

  /** A dynamic segment of the session's company (404 unknown or another company's; 409 a static one). */
  async function dynamicSegment(request: FastifyRequest<Params>, reply: FastifyReply) {
    const segment = await getSegment(db, sessionOf(request).company_id, parseId(request.params.segmentId), now());
    if (segment.filter == null) {
      await sendErrorPage(request, reply, 409, 'A static segment', `${segment.name} is a static segment: its members are kept by hand, so it has no conditions. Create a dynamic segment instead.`);
      return undefined;
    }
    return segment;
  }

  scope.get<Params>('/segments/:segmentId/filter', async (request, reply) => {
    const segment = await dynamicSegment(request, reply);
    if (!segment) return reply;
    const rows = rowsOfFilter(segment.filter);
    if (!rows) return sendErrorPage(request, reply, 409, 'Not editable here', `The conditions of ${segment.name} are nested or name a campaign or automation, which this builder cannot show. Its page shows them in words; change them with the operator API or cms segment.`);
    const form: BuilderForm = { name: segment.name, ...rows };
    return show(request, reply, 200, form, segment, await preview(sessionOf(request).company_id, form));
  });

  scope.post<Params>('/segments/:segmentId/filter', async (request, reply) => {
    const segment = await dynamicSegment(request, reply);
    if (!segment) return reply;
    return handle(request, reply, segment, async (_form, filter) => {
      const session = sessionOf(request);
      const saved = await editSegment(db, consoleActor(session), session.company_id, segment.segment_id, { filter });
      return { done: reply.header('cache-control', 'no-store').redirect(`${BASE}/segments/${saved.segment_id}?done=filter_saved`, 303) };
    });
  });

  scope.post('/segments/preview', async (request, reply) => {
    const p = await preview(sessionOf(request).company_id, readBuilderForm(request.body));
    return sendHtml(reply, p.rowError ? 422 : 200, previewFragment(p.preview));
  });
}

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

