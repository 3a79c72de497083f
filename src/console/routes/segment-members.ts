/**
 * Adding and removing a segment's members from the console (src/domain/segments.ts
 * `editSegmentMembers`, the matching of docs/api.md 4.2): `POST /segments/{id}/members` with `mode` (`add` or
 * `delete`), `hashed` (`on`: the items are SHA-256 digests) and either pasted `numbers` or a CSV `file`
 * (src/domain/segment-lists.ts), then 303 back to the segment's page, which shows the result once:
 * added / removed, already members / were not members, not found, invalid with their line numbers.
 * Problems (nothing given, both given, a file that is too large, not UTF-8, not comma-separated, more
 * than 100,000 items) answer 422 with the error beside the field and the pasted text kept; nothing is
 * written.
 *
 * **Uploads.** The form is `multipart/form-data`. @fastify/multipart is registered only in this route's
 * own encapsulated scope; every other console route keeps its urlencoded-only parser. This scope reads the
 * whole form in a `preValidation` hook, before the console's CSRF check (`preHandler`), and sets the
 * text fields as the body, so the check finds `_csrf` where it always does, no change to the CSRF setup
 * needed. Limits: the file `MAX_UPLOAD_BYTES` (5 MiB; more is reported beside the file field, nothing
 * written), the pasted text `MAX_PASTE_BYTES` (1 MiB), one file, eight fields. A form that is not
 * valid multipart is reported beside the file field too. The same route also accepts an urlencoded
 * form (pasted numbers only).
 *
 * **The result** travels to the GET in a flash cookie (`cms_console_segment_result`, path of the
 * segment's page only, HttpOnly, SameSite=Strict, 5 minutes) sealed with the service's secrets box, bound
 * to the session, company and segment, and cleared by the first GET that reads it.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { DomainError } from '../../domain/errors.ts';
import { editSegmentMembers, getSegment, MAX_MEMBER_ITEMS, type MembershipSummary } from '../../domain/segments.ts';
import { itemsFromCsv, itemsFromText, ListError, MAX_UPLOAD_BYTES, type ListItem } from '../../domain/segment-lists.ts';
import type { SessionInfo } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, parseId, sessionOf } from '../context.ts';
import { uploadScope } from '../uploads.ts';
import { BASE } from '../views/layout.ts';
import type { FieldErrors, MembersForm } from '../views/segments.ts';

/** Largest pasted text (bytes). */
export const MAX_PASTE_BYTES = 1024 * 1024;

/** The flash cookie carrying a change's result to the segment page. */
export const RESULT_COOKIE = 'cms_console_segment_result';

/** How long the result may wait for its GET (ms). */
const FLASH_TTL_MS = 5 * 60_000;

/** Invalid items a flash carries (the count covers all), and the longest text of one. */
const FLASH_INVALID = 20;
const FLASH_VALUE_CHARS = 40;

/** A summary as the segment page shows it: what it came from too. */
export type ShownSummary = MembershipSummary & { source: string };

interface Flash { r: ShownSummary; c: number; g: number; s: string; e: number }

/** What the multipart hook read from a form. */
/** Renders the segment page with a refused members form (routes/segment.ts). */
export type ShowSegment = (request: FastifyRequest, reply: FastifyReply, status: number, segmentId: number, extra: { membersForm?: MembersForm; errors?: FieldErrors }) => Promise<FastifyReply>;

const sessionDigest = (session: SessionInfo) => createHash('sha256').update(session.token).digest('base64url');
const cookieOptions = (segmentId: number) => ({ path: `${BASE}/segments/${segmentId}`, httpOnly: true, sameSite: 'strict', secure: 'auto' }) as const;

/** Takes the result of the last change off the request (clearing its cookie); undefined when none is valid. */
export function takeSummary(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, segmentId: number): ShownSummary | undefined {
  const sealed = request.cookies[RESULT_COOKIE];
  if (sealed === undefined) return undefined;
  reply.clearCookie(RESULT_COOKIE, cookieOptions(segmentId));
  try {
    const flash = JSON.parse(deps.openSecret(sealed)) as Flash;
    const session = sessionOf(request);
    if (flash.c !== session.company_id || flash.g !== segmentId || flash.s !== sessionDigest(session) || !(flash.e > deps.clock.now())) return undefined;
    return flash.r;
  } catch {
    return undefined;
  }
}

/** Registers POST /segments/:segmentId/members in its own scope (see the module comment). */
export function registerSegmentMembersRoute(scope: FastifyInstance, deps: AppDeps, show: ShowSegment): void {
  const db = deps.database.db;
  uploadScope(scope, { fileSize: MAX_UPLOAD_BYTES, fields: 8, parts: 10, fieldSize: MAX_PASTE_BYTES }, (upload) => {
    upload.post<{ Params: { segmentId: string } }>('/segments/:segmentId/members', async (request, reply) => {
      const session = sessionOf(request);
      const segment = await getSegment(db, session.company_id, parseId(request.params.segmentId));
      const got = request.consoleUpload ?? { truncatedFields: [] };
      const body = request.body;
      const form: MembersForm = { mode: field(body, 'mode'), numbers: field(body, 'numbers'), hashed: field(body, 'hashed') === 'on' };
      const errors: FieldErrors = {};
      if (form.mode !== 'add' && form.mode !== 'delete') errors.mode = 'Choose add or remove.';
      if (got.problem) errors.file = got.problem;
      if (got.truncatedFields.includes('numbers')) errors.numbers = `The pasted text is over ${MAX_PASTE_BYTES / 1024 / 1024} MiB: upload the numbers as a CSV file instead.`;
      const pasted = form.numbers.trim() !== '';
      if (pasted && got.file) errors.numbers = 'Paste numbers or choose a file, not both.';
      let items: ListItem[] = [];
      let source = '';
      if (Object.keys(errors).length === 0) {
        if (got.file) {
          try {
            items = itemsFromCsv(got.file.data, form.hashed);
            source = `file ${got.file.name || 'upload'}`;
            if (items.length === 0) errors.file = `The file holds no ${form.hashed ? 'digests' : 'phone numbers'}.`;
          } catch (err) {
            if (!(err instanceof ListError)) throw err;
            errors.file = err.message;
          }
        } else {
          items = itemsFromText(form.numbers);
          source = 'pasted text';
          if (items.length === 0) errors.numbers = form.hashed ? 'Paste at least one digest, or choose a CSV file.' : 'Paste at least one phone number, or choose a CSV file.';
        }
        if (items.length > MAX_MEMBER_ITEMS) errors[got.file ? 'file' : 'numbers'] = `At most ${MAX_MEMBER_ITEMS.toLocaleString('en')} numbers per change (got ${items.length.toLocaleString('en')}): split the list.`;
      }
      if (Object.keys(errors).length) return show(request, reply, 422, segment.segment_id, { membersForm: form, errors });

      const company = await getCompany(db, session.company_id);
      let summary: MembershipSummary;
      try {
        summary = await editSegmentMembers(db, consoleActor(session), company, segment.segment_id, { mode: form.mode as 'add' | 'delete', hashed: form.hashed, items, source });
      } catch (err) {
        if (err instanceof DomainError && err.status === 422) return show(request, reply, 422, segment.segment_id, { membersForm: form, errors: { [got.file ? 'file' : 'numbers']: err.detail } });
        throw err;
      }
      const shown: ShownSummary = {
        ...summary, source,
        invalid: summary.invalid.slice(0, FLASH_INVALID).map((i) => ({ position: i.position, value: [...i.value].length > FLASH_VALUE_CHARS ? [...i.value].slice(0, FLASH_VALUE_CHARS).join('') + '…' : i.value })),
      };
      const flash: Flash = { r: shown, c: session.company_id, g: segment.segment_id, s: sessionDigest(session), e: deps.clock.now() + FLASH_TTL_MS };
      reply.setCookie(RESULT_COOKIE, deps.sealSecret(JSON.stringify(flash)), { ...cookieOptions(segment.segment_id), maxAge: FLASH_TTL_MS / 1000 });
      return reply.header('cache-control', 'no-store').redirect(`${BASE}/segments/${segment.segment_id}`, 303);
    });
  });
}
