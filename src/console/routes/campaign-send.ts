/**
 * Campaign sends from the console (src/domain/campaign-sends.ts):
 * - `GET /campaigns/{id}/send`: the audience (segment or pasted numbers) and time (now, or a local
 *   date-time in the company's time zone: that of its delivery hours, else UTC) form;
 * - `POST /campaigns/{id}/send`: review, display only (nothing written): the message rendered for the
 *   first recipient of the audience (src/domain/campaign-sends.ts `reviewSend`), how many will be sent,
 *   skipped as opted out, at the frequency cap or invalid, duplicates merged, held for delivery hours,
 *   the template's warnings (variables no contact has, a WhatsApp mapping that does not map) and the
 *   names that render empty for some recipients; errors beside their fields with the input kept;
 * - `POST /campaigns/{id}/send/confirm`: the review's one-time token first (src/domain/send-confirmations.ts:
 *   bound to the company, user, campaign and reviewed choices; a changed or foreign token, or other
 *   choices, answer a 400 error page and create nothing), then the same checks again and the send
 *   through the accept step, 303 to its page in Sends (its progress, routes/batch.ts); the same confirm submitted again (double click,
 *   reload) 303s to the FIRST batch. A segment's members are counted here and resolved by batch-process;
 * - `GET /sends/{batch_id}/cancel`, `POST /sends/{batch_id}/cancel`: confirm, then cancel (303 back to
 *   the send): messages not yet handed to a provider end skipped / `cancelled`;
 * - `POST /sends/{batch_id}/pause`, `POST /sends/{batch_id}/resume` (the send page's buttons): 303 back
 *   to the send; a completed or cancelled send answers the 409 error page
 *   (src/domain/batch-control.ts; docs/decisions.md "Cancel, pause and resume").
 * Another company's campaign, segment or batch is 404, and so is an archived campaign.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { getSend } from '../../domain/batches.ts';
import { cancelBatch, pauseBatch, resumeBatch } from '../../domain/batch-control.ts';
import {
  companyTimeZone, localTimeChange, localToInstant, MAX_SEND_CONTACTS, reviewSend, SCHEDULE_AHEAD_MAX_MS, sendCampaign, sendCompany, SendRejected, sendTimeProblem,
  type Audience, type SendCampaignResult,
} from '../../domain/campaign-sends.ts';
import { claimKey, releaseKey } from '../../domain/idempotency.ts';
import { checkConfirmToken, issueConfirmToken, type ConfirmBinding } from '../../domain/send-confirmations.ts';
import { sendErrorPage } from '../errors.ts';
import { localDateTime } from '../views/format.ts';
import { assertSendable, findSource, type SourceRow } from '../../domain/automations.ts';
import { templateWarnings } from '../../domain/source-tools.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, parseId, sendPage, sessionOf } from '../context.ts';
import { listCompanySegments } from '../queries/segments.ts';
import { sendStatus, sendTitle } from '../views/sends.ts';
import { BASE } from '../views/layout.ts';
import { cancelView, sendFormView, sendReviewView, type SendErrors, type SendForm } from '../views/campaign-send.ts';

/** `27 Nov 2026, 14:05` of instant `ms` in `timeZone` (the zone named by the caller). */
function localTime(ms: number, timeZone: string): string {
  return localDateTime(ms, timeZone);
}

function sendForm(body: unknown): SendForm {
  return { audience: field(body, 'audience'), segment_id: field(body, 'segment_id'), numbers: field(body, 'numbers'), when: field(body, 'when'), send_at: field(body, 'send_at') };
}

/** Registers the pages of the module comment (signed-in scope). */
export function registerCampaignSendPages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function showForm(request: FastifyRequest, reply: FastifyReply, status: number, campaign: SourceRow, form: SendForm, errors: SendErrors) {
    const company = await sendCompany(db, campaign.company_id);
    const segments = await listCompanySegments(db, campaign.company_id, deps.clock.now());
    return sendPage(request, reply, status, {
      title: `Send ${campaign.name}`, section: 'campaigns', crumbs: [['Campaigns', `${BASE}/campaigns`], [campaign.name, `${BASE}/campaigns/${campaign.id}`], ['Send']],
      body: (csrf) => sendFormView({ csrf, campaign, segments, form, errors, timeZone: companyTimeZone(company), canSend: can(request, 'POST', `${BASE}/campaigns/:id/send`) }),
    });
  }

  /** The checked choices: audience, send time (ms, null: now); or errors by field. */
  async function check(campaign: SourceRow, f: SendForm) {
    const company = await sendCompany(db, campaign.company_id);
    const tz = companyTimeZone(company);
    const errors: SendErrors = {};
    let audience: Audience | undefined;
    let label = '';
    if (f.audience === 'numbers') {
      const numbers = f.numbers.split(/[\r\n,;]+/).map((x) => x.trim()).filter((x) => x !== '');
      if (numbers.length === 0) errors.numbers = 'Paste at least one phone number.';
      else if (numbers.length > MAX_SEND_CONTACTS) errors.numbers = `At most ${MAX_SEND_CONTACTS} numbers.`;
      else { audience = { contacts: numbers }; label = `${numbers.length} pasted number${numbers.length === 1 ? '' : 's'}`; }
    } else {
      const segments = await listCompanySegments(db, campaign.company_id, deps.clock.now());
      const seg = segments.find((s) => String(s.segment_id) === f.segment_id);
      if (!seg) errors.segment_id = 'Choose one of your segments.';
      else { audience = { segment_id: seg.segment_id }; label = `segment ${seg.name}`; }
    }
    let sendAt: number | null = null;
    const now = deps.clock.now();
    if (f.when === 'later') {
      sendAt = localToInstant(f.send_at, tz);
      const problem = sendAt === null ? undefined : sendTimeProblem(sendAt, now);
      if (sendAt === null) errors.send_at = `Enter a date and time (${tz}).`;
      else if (problem === 'past') errors.send_at = `That time has passed: choose a time after ${localTime(now, tz)} ${tz}.`;
      else if (problem === 'too_far') errors.send_at = `That is too far ahead: choose a time at most 730 days from now (before ${localTime(now + SCHEDULE_AHEAD_MAX_MS, tz)} ${tz}).`;
    }
    if (!audience || Object.keys(errors).length) return { errors };
    const timeChange = f.when === 'later' ? localTimeChange(f.send_at, tz) : null;
    return { errors, sendAt, label, tz, audience, timeChange };
  }

  /**
   * Runs the campaign-send command for the checked choices `c` of form `f`; a refusal ({@link
   * SendRejected}) becomes the form's field errors: an empty audience beside the audience, a send
   * time that passed since the check as the check words it.
   */
  async function send(request: FastifyRequest, campaign: SourceRow, f: SendForm, c: { audience: Audience; sendAt: number | null; label: string }, opts: { dryRun?: boolean; idempotency?: { key: string; status: number } }):
    Promise<{ result: SendCampaignResult; errors?: undefined } | { errors: SendErrors }> {
    const emptyAudience = (): SendErrors => 'segment_id' in c.audience ? { segment_id: 'This segment has no members.' } : { numbers: 'Paste at least one phone number.' };
    try {
      const result = await sendCampaign(deps, consoleActor(sessionOf(request)), {
        campaignId: campaign.id, audience: c.audience, sendAt: c.sendAt, dryRun: opts.dryRun, idempotency: opts.idempotency, audienceLabel: c.label,
      });
      return result.plan.total === 0 ? { errors: emptyAudience() } : { result };
    } catch (err) {
      if (!(err instanceof SendRejected)) throw err;
      if (err.field === 'audience') return { errors: emptyAudience() };
      const again = await check(campaign, f);
      return { errors: Object.keys(again.errors).length ? again.errors : { send_at: 'Choose another time.' } };
    }
  }

  /** What a review's confirm token is bound to: the company, the user, the campaign and the choices. */
  const bindingOf = (request: FastifyRequest, campaign: SourceRow, form: SendForm): ConfirmBinding => {
    const session = sessionOf(request);
    return { company_id: session.company_id, user_id: session.user_id, campaign_id: campaign.id, params: { ...form } };
  };

  /** 400: the confirm form was not one this review made for these choices; nothing is created. */
  const badConfirm = (request: FastifyRequest, reply: FastifyReply, why: 'invalid' | 'other_parameters' | 'expired') =>
    sendErrorPage(request, reply, 400, 'Send not confirmed', why === 'expired'
      ? 'This review is too old to confirm. Nothing was sent: review the send again.'
      : why === 'other_parameters'
        ? 'These choices are not the ones you reviewed. Nothing was sent: review the send again.'
        : 'This confirmation is not valid (it was changed, or made for another campaign or user). Nothing was sent: review the send again.');

  /** The company's campaign of the path; 404 when unknown or archived (an archived campaign cannot be sent). */
  const campaignOf = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const campaign = await findSource(db, 'campaign', parseId(request.params.id), sessionOf(request).company_id);
    assertSendable(campaign);
    return campaign;
  };

  scope.get<{ Params: { id: string } }>('/campaigns/:id/send', async (request, reply) =>
    showForm(request, reply, 200, await campaignOf(request), { audience: 'segment', segment_id: '', numbers: '', when: 'now', send_at: '' }, {}));

  scope.post<{ Params: { id: string } }>('/campaigns/:id/send', async (request, reply) => {
    const campaign = await campaignOf(request);
    const form = sendForm(request.body);
    const c = await check(campaign, form);
    if (!c.audience) return showForm(request, reply, 422, campaign, form, c.errors);
    // Counted in SQL for a segment; its members are resolved by the batch-process job (a segment of 100,000 stays quick).
    const s = await send(request, campaign, form, c, { dryRun: true });
    if (s.errors || !s.result.dryRun) return showForm(request, reply, 422, campaign, form, s.errors ?? {});
    const planned = s.result;
    const plan = planned.plan;
    const warnings = await templateWarnings(db, campaign.company_id, campaign.template);
    const review = await reviewSend(db, campaign, planned.recipients ? { recipients: planned.recipients } : { segment_id: (c.audience as { segment_id: number }).segment_id }, deps.clock.now());
    return sendPage(request, reply, 200, {
      title: `Review: send ${campaign.name}`, section: 'campaigns', crumbs: [['Campaigns', `${BASE}/campaigns`], [campaign.name, `${BASE}/campaigns/${campaign.id}`], ['Review']],
      body: (csrf) => sendReviewView({
        csrf, campaign, form, plan, audienceLabel: c.label, timeZone: c.tz, localTime: (ms) => localTime(ms, c.tz), review, timeChange: c.timeChange,
        confirmToken: issueConfirmToken(deps.sealSecret, bindingOf(request, campaign, form), deps.clock.now()), warnings,
      }),
    });
  });

  scope.post<{ Params: { id: string } }>('/campaigns/:id/send/confirm', async (request, reply) => {
    const session = sessionOf(request);
    const campaign = await campaignOf(request);
    const form = sendForm(request.body);
    const token = field(request.body, 'confirm_token');
    if (token === '') {
      // Not from a review page: its choices' errors beside their fields, else the error page.
      const c = await check(campaign, form);
      if (!c.audience) return showForm(request, reply, 422, campaign, form, c.errors);
      const s = await send(request, campaign, form, c, { dryRun: true });
      if (s.errors) return showForm(request, reply, 422, campaign, form, s.errors);
      return badConfirm(request, reply, 'invalid');
    }
    const t = checkConfirmToken(deps.openSecret, token, bindingOf(request, campaign, form), deps.clock.now());
    if (!t.ok) return badConfirm(request, reply, t.why);
    const hash = Buffer.from(t.digest, 'base64url');
    // One batch per confirm: the token's nonce is an idempotency key whose answer (the batch id) is
    // committed with the batch; a second submit waits for the first and shows its batch.
    for (let tries = 0; ; tries++) {
      const claim = await claimKey(db, session.company_id, t.key, hash, deps.clock.now());
      if (claim.kind === 'replay') return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${claim.body}`, 303);
      if (claim.kind === 'mismatch') return badConfirm(request, reply, 'other_parameters');
      if (claim.kind === 'claimed') break;
      if (tries >= 40) return sendErrorPage(request, reply, 409, 'Send being confirmed', 'This send is still being confirmed. Reload the page in a moment to see it.');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    let batchId: string;
    try {
      const c = await check(campaign, form);
      if (!c.audience) {
        await releaseKey(db, session.company_id, t.key);
        return showForm(request, reply, 422, campaign, form, c.errors);
      }
      const s = await send(request, campaign, form, c, { idempotency: { key: t.key, status: 303 } });
      if (s.errors || s.result.dryRun) {
        await releaseKey(db, session.company_id, t.key);
        return showForm(request, reply, 422, campaign, form, s.errors ?? {});
      }
      batchId = s.result.batchId;
    } catch (err) {
      await releaseKey(db, session.company_id, t.key);
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${batchId}`, 303);
  });

  scope.get<{ Params: { batchId: string } }>('/sends/:batchId/cancel', async (request, reply) => {
    const session = sessionOf(request);
    const batch = await getSend(db, request.params.batchId, session.company_id);
    const now = deps.clock.now();
    const title = sendTitle(batch, session.time_zone, now);
    return sendPage(request, reply, 200, {
      title: `Cancel ${title}`, section: 'sends', crumbs: [['Sends', `${BASE}/sends`], [title, `${BASE}/sends/${batch.batch_id}`], ['Cancel']],
      body: (csrf) => cancelView({ csrf, batchId: batch.batch_id, title, pending: batch.counts.pending, status: sendStatus(batch, now), canCancel: can(request, 'POST', `${BASE}/sends/:batchId/cancel`) }),
    });
  });

  scope.post<{ Params: { batchId: string } }>('/sends/:batchId/cancel', async (request, reply) => {
    const result = await cancelBatch(deps, consoleActor(sessionOf(request)), request.params.batchId);
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${result.batch_id}`, 303);
  });

  for (const action of ['pause', 'resume'] as const) {
    scope.post<{ Params: { batchId: string } }>(`/sends/:batchId/${action}`, async (request, reply) => {
      const actor = consoleActor(sessionOf(request));
      const batch = action === 'pause' ? await pauseBatch(deps, actor, request.params.batchId) : await resumeBatch(deps, actor, request.params.batchId);
      return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${batch.batch_id}`, 303);
    });
  }
}

