/**
 * Operator API: segments, with the rules of the console's Segments pages and of
 * `cms segment` (src/domain/segments.ts): create by docs/api.md 4.1's name rule (1 to 255 characters)
 * and limit (20 per company, the same `400` as 4.1), rename, delete (memberships go, contacts stay, the
 * slot is freed; campaign sends already made from the segment, scheduled ones included, are unchanged:
 * they hold the numbers the segment had when they were made), add or remove members with 4.2's matching
 * plus a summary that sets invalid items apart with their positions, and members paged by keyset.
 * Every change is a command of src/domain/segments.ts run as the operator, which records its audit
 * entry (actor `admin`). A segment with a `filter` is dynamic
 * (src/domain/dynamic-segments.ts): its members are the contacts matching the filter when asked.
 *
 * | route | answers |
 * |---|---|
 * | GET /admin/companies/{company_id}/segments | 200 `{segments: Segment[]}`; 401; 404 company; 422 |
 * | POST /admin/companies/{company_id}/segments `{name, filter?}` | 201 `Segment`; 400 limit; 401; 404 company; 422 (a bad filter: `loc` inside it) |
 * | POST /admin/companies/{company_id}/segments/preview `{filter}` | 200 `SegmentPreview`; 401; 404 company; 422 |
 * | GET /admin/segments/{segment_id} | 200 `SegmentDetail`; 401; 404; 422 |
 * | PATCH /admin/segments/{segment_id} `{name?, filter?}` | 200 `Segment`; 401; 404; 409 (filter of a static segment); 422 |
 * | DELETE /admin/segments/{segment_id} | 200 `Segment` (as it was); 401; 404; 422 |
 * | POST /admin/segments/{segment_id}/members `{mode, contacts, use_hashed_phone?}` (body ≤ 16 MiB) | 200 `SegmentMembersChange`; 401; 404; 409 (dynamic segment); 413; 422 |
 * | GET /admin/segments/{segment_id}/members?after=&limit= | 200 `SegmentMembersPage`; 401; 404; 422 |
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { notFound } from '../../domain/errors.ts';
import { PREVIEW_SAMPLE, previewFilter } from '../../domain/dynamic-segments.ts';
import { FilterError, MAX_CONDITIONS, MAX_DEPTH } from '../../domain/segment-filter.ts';
import {
  addSegment, editSegment, editSegmentMembers, getSegment, INVALID_LISTED, listSegments, MAX_MEMBER_ITEMS, MAX_SEGMENTS_PER_COMPANY, MEMBERS_PAGE_MAX,
  MEMBERS_PAGE_SIZE, membersPage, removeSegment, SEGMENT_NAME_MAX, type SegmentSummary,
} from '../../domain/segments.ts';
import { selectSegmentCompany } from '../../db/segments.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, Detail, exampleOf, freeObject, idParams, invalid, invalidInput, iso, notFound as notFoundAnswer, ok, ref, TIME_EXAMPLE } from './components.ts';

/** Largest body of a members change: 100,000 items of up to 64 characters fit with room to spare. */
const MEMBERS_BODY_LIMIT = 16 * 1024 * 1024;

const count = (description: string) => Type.Integer({ minimum: 0, description });
const name = Type.String({ minLength: 1, maxLength: SEGMENT_NAME_MAX, description: `1 to ${SEGMENT_NAME_MAX} characters, as docs/api.md 4.1; names need not be unique` });

const FILTER_EXAMPLE = { all: [{ attribute: 'city', op: 'eq', value: 'Berlin' }, { message: 'read', within: '30d' }, { field: 'opted_out', op: 'eq', value: false }] };
const FILTER_DOC = `A filter (docs/segments.md "The filter language"): {"all": [filter, ...]}, {"any": [filter, ...]}, {"not": filter}, or a condition: {"attribute": NAME, "op": OP, "value"?: V} (a variable), {"field": FIELD, "op": OP, "value"?: V} (first_name, last_name, phone, country, created_at, opted_out, last_inbound_at, last_sent_at, last_delivered_at, last_read_at), {"tag": TAG}, {"segment": SEGMENT_ID} (a static segment), {"message": "sent"|"delivered"|"read"|"failed", "within": DURATION, "campaign_id"?: ID, "automation_id"?: ID}, {"replied_within": DURATION}. OP: eq, ne, in, not_in, contains, starts_with, exists, not_exists, gt, gte, lt, lte. At most ${MAX_CONDITIONS} conditions and depth ${MAX_DEPTH}; a bad filter is 422 with \`loc\` pointing inside it.`;
const filterSchema = freeObject({ description: FILTER_DOC, examples: [FILTER_EXAMPLE] });
const segmentFields = {
  segment_id: Type.Integer(),
  company_id: Type.Integer(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('static'), Type.Literal('dynamic')], { description: '`dynamic`: its members are the contacts matching `filter` now; `static`: kept by hand' }),
  filter: Type.Union([freeObject({ description: 'the filter of a dynamic segment, as given' }), Type.Null()]),
  members: count('member count (dynamic: contacts matching the filter now)'),
  created_at: Type.String({ format: 'date-time' }),
};

/** A segment with its member count. */
export const Segment = component('Segment', Type.Object(segmentFields),
  { segment_id: 31, company_id: 12, name: 'Newsletter', kind: 'static', filter: null, members: 1250, created_at: TIME_EXAMPLE });

/** One segment as GET shows it. */
export const SegmentDetail = component('SegmentDetail', Type.Object({ ...segmentFields, members_total: count('members (dynamic: contacts matching the filter now)') }),
  { segment_id: 32, company_id: 12, name: 'Berlin readers', kind: 'dynamic', filter: FILTER_EXAMPLE, members: 310, members_total: 310, created_at: TIME_EXAMPLE });

/** A contact a preview shows. */
export const SegmentPreviewContact = component('SegmentPreviewContact', Type.Object({
  contact_id: Type.Integer(), phone: Type.String({ description: 'E.164' }),
  first_name: Type.Union([Type.String(), Type.Null()]), last_name: Type.Union([Type.String(), Type.Null()]),
}), { contact_id: 5012, phone: '+4915112345678', first_name: 'Ada', last_name: 'Lovelace' });

/** What a filter matches now. */
export const SegmentPreview = component('SegmentPreview', Type.Object({
  count: count('contacts matching the filter now'),
  sample: Type.Array(ref(SegmentPreviewContact), { maxItems: PREVIEW_SAMPLE, description: `the first ${PREVIEW_SAMPLE} in contact id order` }),
}), { count: 310, sample: [exampleOf(SegmentPreviewContact)] });

/** What a change of members did. */
export const SegmentMembersChange = component('SegmentMembersChange', Type.Object({
  segment_id: Type.Integer(),
  mode: Type.Union([Type.Literal('add'), Type.Literal('delete')]),
  contacts_provided: count('distinct items given (after normalisation to E.164 or lowercase digests), invalid ones included'),
  contacts_processed: count('members added (`add`) or removed (`delete`)'),
  contacts_unchanged: count('contacts found but not changed: already members (`add`), not members (`delete`)'),
  contacts_not_found: count('valid numbers or digests that name no contact of the company (none is created)'),
  contacts_invalid: count('distinct items that are not a valid phone number (with `use_hashed_phone`: not 64 hex digits)'),
  invalid: Type.Array(Type.Object({
    position: Type.Integer({ minimum: 1, description: 'index in `contacts` + 1 of its first occurrence' }),
    value: Type.String(),
  }), { maxItems: INVALID_LISTED, description: `the first ${INVALID_LISTED} invalid items` }),
}), {
  segment_id: 31, mode: 'add', contacts_provided: 4, contacts_processed: 2, contacts_unchanged: 0, contacts_not_found: 1,
  contacts_invalid: 1, invalid: [{ position: 3, value: 'call me' }],
});

/** One member. */
export const SegmentMember = component('SegmentMember', Type.Object({
  contact_id: Type.Integer({ description: 'the contact; also the cursor (`after`) of the next page' }),
  phone: Type.String({ description: 'E.164' }),
  first_name: Type.Union([Type.String(), Type.Null()]),
  last_name: Type.Union([Type.String(), Type.Null()]),
  added_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when it was added; null in a dynamic segment' }),
}), { contact_id: 5012, phone: '+4915112345678', first_name: 'Ada', last_name: 'Lovelace', added_at: TIME_EXAMPLE });

/** One page of members. */
export const SegmentMembersPage = component('SegmentMembersPage', Type.Object({
  segment_id: Type.Integer(),
  members_total: count('members of the segment'),
  members: Type.Array(ref(SegmentMember), { description: 'in contact id order' }),
  next_after: Type.Union([Type.Integer(), Type.Null()], { description: 'pass as `after` for the next page; null on the last page' }),
}), { segment_id: 31, members_total: 1250, members: [exampleOf(SegmentMember)], next_after: 5012 });

const segmentOut = (s: SegmentSummary, companyId: number) => ({
  segment_id: s.segment_id, company_id: companyId, name: s.name, kind: s.filter == null ? 'static' as const : 'dynamic' as const,
  filter: (s.filter ?? null) as Record<string, unknown> | null, members: s.members, created_at: iso(s.created_at),
});

/** Runs `fn`; a bad filter becomes the operator API's 422 with `loc` under `body.filter`. */
async function withFilterLoc<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof FilterError) throw invalidInput(['body', 'filter', ...err.loc], err.detail, 'value_error');
    throw err;
  }
}

const conflict = (description: string, detail: string) => ok(description, ref(Detail), { detail });
const DYNAMIC_CONFLICT = 'Segment is dynamic: its members follow its filter';

/** The company of a segment, for routes that name the segment alone; 404 `Segment not found`. */
async function companyOfSegment(deps: AppDeps, segmentId: number) {
  const c = await selectSegmentCompany(deps.database.db, segmentId);
  if (!c) throw notFound('Segment not found');
  return c;
}

/** Registers the routes of the module comment. */
export function registerSegmentRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: segments'];
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [Segment, SegmentDetail, SegmentPreviewContact, SegmentPreview, SegmentMembersChange, SegmentMember, SegmentMembersPage]);
  const now = () => deps.clock.now();
  const companyParams = idParams('company_id', 'the company', 12);
  const segmentParams = idParams('segment_id', 'the segment', 31);

  r.get('/admin/companies/:company_id/segments', {
    schema: {
      tags, operationId: 'list_company_segments', summary: 'List the segments of a company with member counts (oldest first)',
      params: companyParams,
      response: {
        200: ok(`The segments (at most ${MAX_SEGMENTS_PER_COMPANY})`, Type.Object({ segments: Type.Array(ref(Segment)) }), { segments: [exampleOf(Segment)] }),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return { segments: (await listSegments(db, company.company_id, now())).map((s) => segmentOut(s, company.company_id)) };
  });

  r.post('/admin/companies/:company_id/segments', {
    schema: {
      tags, operationId: 'create_company_segment', summary: `Create an empty segment, or a dynamic one with a filter (docs/api.md 4.1's rules: at most ${MAX_SEGMENTS_PER_COMPANY} per company, both kinds)`,
      params: companyParams,
      body: Type.Object({ name, filter: Type.Optional(Type.Union([filterSchema, Type.Null()])) }, { examples: [{ name: 'Newsletter' }, { name: 'Berlin readers', filter: FILTER_EXAMPLE }] }),
      response: {
        201: ok('The new segment', ref(Segment), { ...exampleOf(Segment), members: 0 }),
        400: ok(`The company already holds ${MAX_SEGMENTS_PER_COMPANY} segments (nothing created)`, ref(Detail), { detail: `Segment limit reached: a company can hold at most ${MAX_SEGMENTS_PER_COMPANY} segments` }),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'minLength', loc: ['body', 'name'], msg: 'must NOT have fewer than 1 characters' }),
      },
    },
  }, async (request, reply) => {
    const company = await getCompany(db, request.params.company_id);
    const created = await withFilterLoc(() => addSegment(db, OPERATOR, company.company_id, { name: request.body.name, filter: request.body.filter ?? undefined }, now()));
    return reply.code(201).send(segmentOut(created, company.company_id));
  });

  r.patch('/admin/segments/:segment_id', {
    schema: {
      tags, operationId: 'rename_segment', summary: 'Rename a segment, or change the filter of a dynamic one',
      params: segmentParams,
      body: Type.Object({ name: Type.Optional(name), filter: Type.Optional(filterSchema) }, { minProperties: 1, examples: [{ name: 'Weekly newsletter' }, { filter: FILTER_EXAMPLE }] }),
      response: {
        200: ok('The changed segment', ref(Segment), { ...exampleOf(Segment), name: 'Weekly newsletter' }),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        409: conflict('A filter for a static segment (its members are kept by hand); nothing changed', 'Segment is static: its members are kept by hand, it has no filter'),
        422: invalid({ type: 'value_error', loc: ['body', 'filter', 'all', 1, 'op'], msg: 'unknown op "equals" (one of eq, ne, in, not_in, contains, starts_with, exists, not_exists, gt, gte, lt, lte)' }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const after = await withFilterLoc(() => editSegment(db, OPERATOR, c.company_id, request.params.segment_id, { name: request.body.name, filter: request.body.filter }));
    // A dynamic segment's members are counted after the transaction (a scan of the contacts).
    return segmentOut(after.filter == null ? after : await getSegment(db, c.company_id, after.segment_id, now()), c.company_id);
  });

  r.get('/admin/segments/:segment_id', {
    schema: {
      tags, operationId: 'get_segment', summary: 'One segment: its kind, filter and member count',
      params: segmentParams,
      response: {
        200: ok('The segment', ref(SegmentDetail), exampleOf(SegmentDetail)),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        422: invalid({ type: 'type', loc: ['path', 'segment_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const seg = await getSegment(db, c.company_id, request.params.segment_id, now());
    return { ...segmentOut(seg, c.company_id), members_total: seg.members };
  });

  r.post('/admin/companies/:company_id/segments/preview', {
    schema: {
      tags, operationId: 'preview_segment_filter', summary: `How many contacts a filter matches now, with the first ${PREVIEW_SAMPLE} (nothing is stored)`,
      params: companyParams,
      body: Type.Object({ filter: filterSchema }, { examples: [{ filter: FILTER_EXAMPLE }] }),
      response: {
        200: ok('What the filter matches now', ref(SegmentPreview), exampleOf(SegmentPreview)),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'value_error', loc: ['body', 'filter', 'any', 0, 'within'], msg: 'bad duration: a positive integer and m, h or d, like "30d"' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return withFilterLoc(() => previewFilter(db, company.company_id, request.body.filter, now()));
  });

  r.delete('/admin/segments/:segment_id', {
    schema: {
      tags, operationId: 'delete_segment',
      summary: 'Delete a segment and its memberships (contacts stay; sends already made from it are unchanged)',
      description: 'Frees one of the company\'s 20 segment slots. A campaign send made from the segment, scheduled or running, keeps the numbers it was made with: cancel it (`POST /admin/batches/{batch_id}/cancel`) if it should not go out.',
      params: segmentParams,
      response: {
        200: ok('The deleted segment as it was (`members`: the memberships removed)', ref(Segment), exampleOf(Segment)),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        422: invalid({ type: 'type', loc: ['path', 'segment_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const deleted = await removeSegment(db, OPERATOR, c.company_id, request.params.segment_id);
    return segmentOut(deleted, c.company_id);
  });

  r.post('/admin/segments/:segment_id/members', {
    bodyLimit: MEMBERS_BODY_LIMIT,
    schema: {
      tags, operationId: 'change_segment_members', summary: 'Add or remove members by phone numbers or SHA-256 digests (the matching of docs/api.md 4.2)',
      description: `Items are matched against existing contacts only: numbers in E.164 form (without a country code: the company's default country), digests of the E.164 number with or without \`+\` (any case). Items that are not a number (or, with \`use_hashed_phone\`, not 64 hex digits) are counted and listed as invalid, not matched. At most ${MAX_MEMBER_ITEMS.toLocaleString('en')} items, applied in one transaction.`,
      params: segmentParams,
      body: Type.Object({
        mode: Type.Union([Type.Literal('add'), Type.Literal('delete')]),
        contacts: Type.Array(Type.String({ maxLength: 256 }), { minItems: 1, maxItems: MAX_MEMBER_ITEMS, description: 'phone numbers, or SHA-256 hex digests with `use_hashed_phone`' }),
        use_hashed_phone: Type.Optional(Type.Boolean({ default: false })),
      }, { examples: [{ mode: 'add', contacts: ['+4915112345678', '015112345679', 'call me', '+4915199999999'] }] }),
      response: {
        200: ok('What changed', ref(SegmentMembersChange), exampleOf(SegmentMembersChange)),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        409: conflict('The segment is dynamic: members follow its filter; nothing changed', DYNAMIC_CONFLICT),
        413: ok(`The body is larger than ${MEMBERS_BODY_LIMIT / 1024 / 1024} MiB; nothing changed`, ref(Detail), { detail: 'Request body too large' }),
        422: invalid({ type: 'minItems', loc: ['body', 'contacts'], msg: 'must NOT have fewer than 1 items' }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const b = request.body;
    const hashed = b.use_hashed_phone ?? false;
    return editSegmentMembers(db, OPERATOR, c, request.params.segment_id, { mode: b.mode, hashed, items: b.contacts.map((value, i) => ({ value, position: i + 1 })) });
  });

  r.get('/admin/segments/:segment_id/members', {
    schema: {
      tags, operationId: 'list_segment_members', summary: 'Members of a segment (dynamic: the contacts matching its filter now), paged by keyset (contact id order)',
      params: segmentParams,
      querystring: Type.Object({
        after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'the `next_after` of the previous page (0 or absent: the first page)' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MEMBERS_PAGE_MAX, default: MEMBERS_PAGE_SIZE, description: `members per page (default ${MEMBERS_PAGE_SIZE})` })),
      }),
      response: {
        200: ok('One page of members', ref(SegmentMembersPage), exampleOf(SegmentMembersPage)),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        422: invalid({ type: 'maximum', loc: ['query', 'limit'], msg: `must be <= ${MEMBERS_PAGE_MAX}` }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const page = await membersPage(db, c.company_id, request.params.segment_id, request.query.after ?? 0, request.query.limit ?? MEMBERS_PAGE_SIZE, now());
    return {
      segment_id: page.segment.segment_id, members_total: page.segment.members,
      members: page.members.map((m) => ({ ...m, added_at: m.added_at ? iso(m.added_at) : null })), next_after: page.next,
    };
  });
}
