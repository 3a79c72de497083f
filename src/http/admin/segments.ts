/**
 * Operator API: segments (issue 15 item 3), with the rules of the console's Segments pages and of
 * `cms segment` (src/domain/segment-admin.ts): create by api.md 4.1's name rule (1 to 255 characters)
 * and limit (20 per company, the same `400` as 4.1), rename, delete (memberships go, contacts stay, the
 * slot is freed; campaign sends already made from the segment, scheduled ones included, are unchanged:
 * they hold the numbers the segment had when they were made), add or remove members with 4.2's matching
 * plus a summary that sets invalid items apart with their positions, and members paged by keyset.
 * Every change is audit-logged with actor `admin`.
 *
 * | route | answers |
 * |---|---|
 * | GET /admin/companies/{company_id}/segments | 200 `{segments: Segment[]}`; 401; 404 company; 422 |
 * | POST /admin/companies/{company_id}/segments `{name}` | 201 `Segment`; 400 limit; 401; 404 company; 422 |
 * | PATCH /admin/segments/{segment_id} `{name}` | 200 `Segment`; 401; 404; 422 |
 * | DELETE /admin/segments/{segment_id} | 200 `Segment` (as it was); 401; 404; 422 |
 * | POST /admin/segments/{segment_id}/members `{mode, contacts, use_hashed_phone?}` (body ≤ 16 MiB) | 200 `SegmentMembersChange`; 401; 404; 413; 422 |
 * | GET /admin/segments/{segment_id}/members?after=&limit= | 200 `SegmentMembersPage`; 401; 404; 422 |
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { recordAudit } from '../../domain/audit.ts';
import { getCompany } from '../../domain/companies.ts';
import { notFound } from '../../domain/errors.ts';
import {
  changeMembers, deleteSegment, getSegment, INVALID_LISTED, listSegments, MAX_MEMBER_ITEMS, MAX_SEGMENTS_PER_COMPANY, MEMBERS_PAGE_MAX,
  MEMBERS_PAGE_SIZE, membersPage, newSegment, renameSegment, SEGMENT_NAME_MAX, type SegmentSummary,
} from '../../domain/segment-admin.ts';
import { selectSegmentCompany } from '../../db/segments.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, Detail, exampleOf, idParams, invalid, iso, notFound as notFoundAnswer, ok, ref, TIME_EXAMPLE } from './components.ts';

/** Largest body of a members change: 100,000 items of up to 64 characters fit with room to spare. */
const MEMBERS_BODY_LIMIT = 16 * 1024 * 1024;

const count = (description: string) => Type.Integer({ minimum: 0, description });
const name = Type.String({ minLength: 1, maxLength: SEGMENT_NAME_MAX, description: `1 to ${SEGMENT_NAME_MAX} characters, as api.md 4.1; names need not be unique` });

/** A segment with its member count. */
export const Segment = component('Segment', Type.Object({
  segment_id: Type.Integer(),
  company_id: Type.Integer(),
  name: Type.String(),
  members: count('member count'),
  created_at: Type.String({ format: 'date-time' }),
}), { segment_id: 31, company_id: 12, name: 'Newsletter', members: 1250, created_at: TIME_EXAMPLE });

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
  added_at: Type.String({ format: 'date-time' }),
}), { contact_id: 5012, phone: '+4915112345678', first_name: 'Ada', last_name: 'Lovelace', added_at: TIME_EXAMPLE });

/** One page of members. */
export const SegmentMembersPage = component('SegmentMembersPage', Type.Object({
  segment_id: Type.Integer(),
  members_total: count('members of the segment'),
  members: Type.Array(ref(SegmentMember), { description: 'in contact id order' }),
  next_after: Type.Union([Type.Integer(), Type.Null()], { description: 'pass as `after` for the next page; null on the last page' }),
}), { segment_id: 31, members_total: 1250, members: [exampleOf(SegmentMember)], next_after: 5012 });

const segmentOut = (s: SegmentSummary, companyId: number) => ({ segment_id: s.segment_id, company_id: companyId, name: s.name, members: s.members, created_at: iso(s.created_at) });

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
  addComponents(app, [Segment, SegmentMembersChange, SegmentMember, SegmentMembersPage]);
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
    return { segments: (await listSegments(db, company.company_id)).map((s) => segmentOut(s, company.company_id)) };
  });

  r.post('/admin/companies/:company_id/segments', {
    schema: {
      tags, operationId: 'create_company_segment', summary: `Create an empty segment (api.md 4.1's rules: at most ${MAX_SEGMENTS_PER_COMPANY} per company)`,
      params: companyParams,
      body: Type.Object({ name }, { examples: [{ name: 'Newsletter' }] }),
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
    const created = await newSegment(db, company.company_id, request.body.name);
    await recordAudit(db, { actor: 'admin', action: 'segment.create', target: `segment:${created.segment_id}`, company_id: company.company_id, details: { name: created.name } });
    return reply.code(201).send(segmentOut(created, company.company_id));
  });

  r.patch('/admin/segments/:segment_id', {
    schema: {
      tags, operationId: 'rename_segment', summary: 'Rename a segment',
      params: segmentParams,
      body: Type.Object({ name }, { examples: [{ name: 'Weekly newsletter' }] }),
      response: {
        200: ok('The renamed segment', ref(Segment), { ...exampleOf(Segment), name: 'Weekly newsletter' }),
        ...adminErrors,
        404: notFoundAnswer('Segment not found'),
        422: invalid({ type: 'maxLength', loc: ['body', 'name'], msg: `must NOT have more than ${SEGMENT_NAME_MAX} characters` }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const before = await getSegment(db, c.company_id, request.params.segment_id);
    const renamed = await renameSegment(db, c.company_id, before.segment_id, request.body.name);
    await recordAudit(db, { actor: 'admin', action: 'segment.rename', target: `segment:${renamed.segment_id}`, company_id: c.company_id, details: { from: before.name, to: renamed.name } });
    return segmentOut(renamed, c.company_id);
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
    const deleted = await deleteSegment(db, c.company_id, request.params.segment_id);
    await recordAudit(db, { actor: 'admin', action: 'segment.delete', target: `segment:${deleted.segment_id}`, company_id: c.company_id, details: { name: deleted.name, members: deleted.members } });
    return segmentOut(deleted, c.company_id);
  });

  r.post('/admin/segments/:segment_id/members', {
    bodyLimit: MEMBERS_BODY_LIMIT,
    schema: {
      tags, operationId: 'change_segment_members', summary: 'Add or remove members by phone numbers or SHA-256 digests (the matching of api.md 4.2)',
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
        413: ok(`The body is larger than ${MEMBERS_BODY_LIMIT / 1024 / 1024} MiB; nothing changed`, ref(Detail), { detail: 'Request body too large' }),
        422: invalid({ type: 'minItems', loc: ['body', 'contacts'], msg: 'must NOT have fewer than 1 items' }),
      },
    },
  }, async (request) => {
    const c = await companyOfSegment(deps, request.params.segment_id);
    const b = request.body;
    const hashed = b.use_hashed_phone ?? false;
    const summary = await changeMembers(db, c, request.params.segment_id, b.mode, hashed, b.contacts.map((value, i) => ({ value, position: i + 1 })));
    const { invalid: _listed, ...counts } = summary;
    await recordAudit(db, { actor: 'admin', action: b.mode === 'add' ? 'segment.members.add' : 'segment.members.remove', target: `segment:${summary.segment_id}`, company_id: c.company_id, details: { ...counts, hashed } });
    return summary;
  });

  r.get('/admin/segments/:segment_id/members', {
    schema: {
      tags, operationId: 'list_segment_members', summary: 'Members of a segment, paged by keyset (contact id order)',
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
    const page = await membersPage(db, c.company_id, request.params.segment_id, request.query.after ?? 0, request.query.limit ?? MEMBERS_PAGE_SIZE);
    return {
      segment_id: page.segment.segment_id, members_total: page.segment.members,
      members: page.members.map((m) => ({ ...m, added_at: iso(m.added_at) })), next_after: page.next,
    };
  });
}
