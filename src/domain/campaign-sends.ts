/**
 * Campaign sends started by a company (docs/operator-api.md `POST /admin/campaigns/{id}/sends`; a
 * send is cancelled, paused and resumed as any batch: src/domain/batch-control.ts).
 *
 * - **Audience**: a segment of the company (its members' numbers) or a list of numbers, normalised and
 *   de-duplicated exactly as 4.4 does (`distinctItems`).
 * - **Plan** (shown before confirming, and the answer of a dry run): how many messages will be sent,
 *   skipped as opted out (a number whose erased contact had opted out included: the ledger keeps it
 *   opted out), skipped at the company's frequency cap (src/domain/frequency-caps.ts, the check the
 *   fan-out makes, judged now), skipped as invalid numbers, numbers given more than once (merged: sent
 *   once), and held for the company's delivery hours at the send time. Nothing is written.
 * - **Review** (the console's review page, {@link reviewSend}): the message rendered for a real
 *   recipient of the audience (the first one it reaches) by the pipeline's render code
 *   (src/domain/source-tools.ts `previewSource`), and each name the template reads that renders empty
 *   for some recipients (a pasted number that is no contact has neither names nor variables).
 * - **The command** {@link sendCampaign} (docs/architecture.md "Domain commands"): the one use case
 *   behind the operator API's `POST /admin/campaigns/{id}/sends` (and so `cms campaign send`) and the
 *   console's review and confirm (src/console/routes/campaign-send.ts): checks, plan, dry run, audit
 *   entry and accept, for any actor; the transports only parse, call it and present its answer.
 * - **Send** now or at `send_at` (ms; in the future, at most 730 days ahead: {@link sendTimeProblem}): a `campaign` batch through the accept step of 4.3 / 4.4
 *   (`acceptBatch`), its send time in `overrides.send_at`; `batch-process` fans it out at once and holds
 *   every message until max(send_at, next delivery-hours opening) (`held_until`, released by the
 *   workers' sweep), so a scheduled send uses the hold mechanism of delivery hours.
 */
import type { Clock } from '../clock.ts';
import { countSegmentMembers, selectSegmentFilterOf, selectSegmentMemberPhones, selectSendCompany } from '../db/campaign-sends.ts';
import type { Db } from '../db/database.ts';
import type { DeliveryHours } from '../db/schema.ts';
import type { BatchAcceptor } from './accept-writer.ts';
import { audit, type Actor } from './actor.ts';
import { assertSendable, findSource, type SourceRow } from './automations.ts';
import { acceptBatch, distinctItems, newBatchId, type BatchItem } from './batches.ts';
import { instantOf, nextSendTime, wallClockInstants } from './delivery-hours.ts';
import { selectOptedOutNumbers } from '../db/consent.ts';
import { countMembers, matchingPhones } from './dynamic-segments.ts';
import { capFor, cappedRecipients } from './frequency-caps.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { EXPIRE_AFTER_MAX_MS } from './expiry.ts';
import { firstSegmentRecipient, knownVariableNames, missingForNumbers, missingForSegment } from '../db/template-variables.ts';
import { previewSource, type PreviewResult } from './source-tools.ts';
import { ALWAYS_KNOWN, checkTemplate } from './templates.ts';

/** Most numbers one send to a pasted list takes (they travel in the request). */
export const MAX_SEND_CONTACTS = 100_000;

/**
 * Most members one send to a segment takes: its members are resolved from the database (at fan-out
 * for a send accepted without items), never carried in a request, so a whole audience of a million
 * fits (docs/segments.md "Sending to a segment").
 */
export const MAX_SEGMENT_SEND_CONTACTS = 1_000_000;

/** How far ahead a send may be scheduled (ms): 730 days (docs/security.md "Durations and times"). */
export const SCHEDULE_AHEAD_MAX_MS = 730 * 86_400_000;

/**
 * The latest `expire_at` of a send (ms after its send time: `scheduled_for`, or now): 30 days, the
 * longest `expire_after` (docs/security.md "Durations and times").
 */
export const EXPIRE_AT_AFTER_SEND_MAX_MS = EXPIRE_AFTER_MAX_MS;

/**
 * Why a send time `sendAt` (ms) is not acceptable at `now` (ms), or undefined: it must be in the
 * future and at most {@link SCHEDULE_AHEAD_MAX_MS} ahead. Shared by the operator API and the console.
 */
export function sendTimeProblem(sendAt: number, now: number): 'past' | 'too_far' | undefined {
  if (sendAt <= now) return 'past';
  return sendAt - now > SCHEDULE_AHEAD_MAX_MS ? 'too_far' : undefined;
}

/** Who a send goes to: a segment of the company, or numbers (as given). */
export type Audience = { segment_id: number } | { contacts: string[] };

/** The company data a send needs. */
export interface SendCompany { company_id: number; default_country: string; delivery_hours: DeliveryHours | null }

/** The company of a send; 404 `Company not found`. */
export async function sendCompany(db: Db, companyId: number): Promise<SendCompany> {
  const row = isRowId(companyId) ? await selectSendCompany(db, companyId) : undefined;
  if (!row) throw notFound('Company not found');
  return { company_id: row.company_id, default_country: row.default_country, delivery_hours: (row.delivery_hours ?? null) as DeliveryHours | null };
}

/** The time zone in which the company schedules: that of its delivery hours, else UTC. */
export function companyTimeZone(c: SendCompany): string {
  return c.delivery_hours?.timezone ?? 'UTC';
}

/**
 * A local date-time `YYYY-MM-DDTHH:MM` (an HTML datetime-local value) in `timeZone` as ms since the
 * epoch; null when malformed. Inside a DST gap: the end of the gap.
 */
export function localToInstant(text: string, timeZone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return null;
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCMonth() !== mo - 1) return null;
  return instantOf(y, mo, d, h * 60 + mi, timeZone);
}

/**
 * How a local date-time `YYYY-MM-DDTHH:MM` reads in `timeZone` around a daylight-saving change:
 * `gap` when that wall-clock time does not exist (the clocks jump over it; {@link localToInstant} then
 * takes the end of the gap, `at`), `overlap` when it exists twice (the clocks go back over it;
 * {@link localToInstant} takes the first, `at`, and `later` is the second); null for an ordinary or
 * malformed time.
 */
export function localTimeChange(text: string, timeZone: string): { kind: 'gap' | 'overlap'; at: number; later?: number } | null {
  const at = localToInstant(text, timeZone);
  if (at === null) return null;
  const [y, mo, d, h, mi] = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(text.trim())!.slice(1).map(Number);
  const instants = wallClockInstants(y, mo, d, h * 60 + mi, timeZone);
  if (instants.length === 0) return { kind: 'gap', at };
  if (instants.length > 1) return { kind: 'overlap', at: instants[0], later: instants[1] };
  return null;
}

/**
 * The numbers of an audience (segment members in the order they were added, docs/segments.md
 * "Campaign sends and list order"; a dynamic segment's, in contact order: its filter is
 * evaluated once, here, at `now` ms, and the send keeps the numbers); 404 `Segment not found`, 422
 * when too many.
 */
export async function audiencePhones(db: Db, companyId: number, audience: Audience, now = Date.now()): Promise<string[]> {
  if ('contacts' in audience) {
    if (audience.contacts.length > MAX_SEND_CONTACTS) throw new DomainError(422, `at most ${MAX_SEND_CONTACTS} numbers per send`);
    return audience.contacts;
  }
  if (!isRowId(audience.segment_id)) throw notFound('Segment not found');
  const seg = await selectSegmentFilterOf(db, companyId, audience.segment_id);
  if (!seg) throw notFound('Segment not found');
  if (seg.filter != null) {
    const phones = await matchingPhones(db, companyId, seg.filter, now, MAX_SEGMENT_SEND_CONTACTS);
    if (phones.length > MAX_SEGMENT_SEND_CONTACTS) throw new DomainError(422, `at most ${MAX_SEGMENT_SEND_CONTACTS} numbers per send`);
    return phones;
  }
  const phones = await selectSegmentMemberPhones(db, companyId, audience.segment_id, MAX_SEGMENT_SEND_CONTACTS + 1);
  if (phones.length > MAX_SEGMENT_SEND_CONTACTS) throw new DomainError(422, `at most ${MAX_SEGMENT_SEND_CONTACTS} numbers per send`);
  return phones;
}

/** What a send will do (see the module comment); `send_at`/`opens_at` in ms. */
export interface SendPlan {
  total: number;
  send: number;
  skipped_opted_out: number;
  /** Not opted out, but at the company's frequency cap (docs/audience.md). */
  skipped_frequency_cap: number;
  skipped_invalid: number;
  /** Numbers given more than once (after normalising): merged, each sent once; 0 for a segment. */
  duplicates_merged: number;
  /** Of `send`: held because the company's delivery hours are closed at the send time. */
  held_for_delivery_hours: number;
  send_at: number;
  /** When the first message may leave: max(send_at, next opening of the delivery hours). */
  opens_at: number;
}

/**
 * The distinct items of `phones` and what sending them at `sendAt` (ms) will do; `campaignId` (the
 * campaign sent) for its frequency cap, judged at `now` (ms) as the fan-out that follows at once does.
 */
export async function planSend(
  db: Db, company: SendCompany, phones: string[], sendAt: number, cap: { campaignId: number; now: number } | null = null,
): Promise<{ items: BatchItem[]; plan: SendPlan; recipients: string[] }> {
  const items = distinctItems(phones.map((phone) => ({ phone })), company.default_country);
  const valid = items.filter((i) => i.e164).map((i) => i.e164 as string);
  const optedOut = new Set(await selectOptedOutNumbers(db, company.company_id, valid));
  const rest = valid.filter((p) => !optedOut.has(p));
  const cappedSet = cap ? await cappedRecipients(db, { companyId: company.company_id, kind: 'campaign', campaignId: cap.campaignId }, rest, cap.now) : new Set<string>();
  const recipients = rest.filter((p) => !cappedSet.has(p));
  const send = recipients.length;
  const opensAt = nextSendTime(company.delivery_hours, sendAt);
  return {
    items,
    recipients,
    plan: {
      total: items.length, send, skipped_opted_out: optedOut.size, skipped_frequency_cap: cappedSet.size, skipped_invalid: items.length - valid.length,
      duplicates_merged: phones.length - items.length, held_for_delivery_hours: opensAt > sendAt ? send : 0, send_at: sendAt, opens_at: opensAt,
    },
  };
}

/**
 * The plan of a send to segment `segmentId` at `sendAt` (ms), counted in SQL without loading its
 * members (a segment of 100,000 answers in milliseconds): members are contacts, so every number is a
 * valid E.164 one and distinct. With `campaignId` and a frequency cap that applies to it, the
 * members that are not opted out are loaded and checked against the cap at `now` (ms), as the
 * fan-out does (not beyond MAX_SEND_CONTACTS members: larger sends show no capped count at review;
 * the fan-out still applies the cap). 404 `Segment not found`; 422 when it has more than
 * MAX_SEGMENT_SEND_CONTACTS.
 */
export async function planSegmentSend(db: Db, company: SendCompany, segmentId: number, sendAt: number, now: number, campaignId: number | null = null): Promise<SendPlan> {
  if (!isRowId(segmentId)) throw notFound('Segment not found');
  const filter = await segmentFilter(db, company.company_id, segmentId);
  const cap = campaignId === null ? null : await capFor(db, { companyId: company.company_id, kind: 'campaign', campaignId });
  const cappedOf = async (total: number, candidates: () => Promise<string[]>) => {
    if (!cap || total > MAX_SEND_CONTACTS) return 0;
    return (await cappedRecipients(db, { companyId: company.company_id, kind: 'campaign', campaignId: campaignId! }, await candidates(), now)).size;
  };
  if (filter !== undefined && filter !== null) {
    // A dynamic segment: its members are the contacts its filter matches now.
    const total = await countMembers(db, company.company_id, filter, now);
    const optedOut = await countMembers(db, company.company_id, { all: [filter, { field: 'opted_out', op: 'eq', value: true }] }, now);
    const capped = await cappedOf(total, () => matchingPhones(db, company.company_id, { all: [filter, { field: 'opted_out', op: 'eq', value: false }] }, now, MAX_SEND_CONTACTS));
    return segmentPlan(company, total, optedOut, capped, sendAt);
  }
  const row = await countSegmentMembers(db, company.company_id, segmentId);
  if (!row?.found) throw notFound('Segment not found');
  const capped = await cappedOf(row.total, () => selectSegmentMemberPhones(db, company.company_id, segmentId, MAX_SEND_CONTACTS, { notOptedOut: true }));
  return segmentPlan(company, row.total, row.opted_out, capped, sendAt);
}

/** The plan of a segment send from its member counts; 422 beyond MAX_SEGMENT_SEND_CONTACTS. */
function segmentPlan(company: SendCompany, total: number, optedOut: number, capped: number, sendAt: number): SendPlan {
  if (total > MAX_SEGMENT_SEND_CONTACTS) throw new DomainError(422, `at most ${MAX_SEGMENT_SEND_CONTACTS} numbers per send`);
  const send = total - optedOut - capped;
  const opensAt = nextSendTime(company.delivery_hours, sendAt);
  return {
    total, send, skipped_opted_out: optedOut, skipped_frequency_cap: capped, skipped_invalid: 0, duplicates_merged: 0,
    held_for_delivery_hours: opensAt > sendAt ? send : 0, send_at: sendAt, opens_at: opensAt,
  };
}

/** The filter of the company's segment `segmentId`: null for a static one, undefined when there is none. */
async function segmentFilter(db: Db, companyId: number, segmentId: number): Promise<unknown> {
  const row = await selectSegmentFilterOf(db, companyId, segmentId);
  return row ? row.filter ?? null : undefined;
}

/**
 * The items of a segment send at fan-out (batch-process): its members' numbers in the order they were
 * added (contact order for a dynamic segment's), at
 * most MAX_SEGMENT_SEND_CONTACTS (each a contact's E.164 number, so valid and distinct); a dynamic segment's
 * are the contacts its filter matches at `now` (ms), evaluated this once.
 */
export async function segmentItems(db: Db, companyId: number, segmentId: number, now: number): Promise<BatchItem[]> {
  const filter = await segmentFilter(db, companyId, segmentId);
  if (filter !== undefined && filter !== null) {
    const phones = await matchingPhones(db, companyId, filter, now, MAX_SEGMENT_SEND_CONTACTS);
    return phones.slice(0, MAX_SEGMENT_SEND_CONTACTS).map((phone) => ({ phone, e164: phone }));
  }
  const phones = await selectSegmentMemberPhones(db, companyId, segmentId, MAX_SEGMENT_SEND_CONTACTS);
  return phones.map((phone) => ({ phone, e164: phone }));
}

/** What {@link sendCampaign} needs of the service (AppDeps, src/http/deps.ts, has it). */
export interface SendDeps {
  readonly database: { readonly db: Db };
  readonly acceptor: BatchAcceptor;
  readonly clock: Clock;
}

/** What a campaign send is asked to do (times in ms since the epoch). */
export interface SendCampaignInput {
  /** The campaign sent: any company's for the operator, the actor's company's otherwise (404 else). */
  campaignId: number;
  audience: Audience;
  /** When to send; null: now. In the future, at most 730 days ahead ({@link sendTimeProblem}). */
  sendAt: number | null;
  /**
   * When its unsent messages expire (`overrides.expire_at`, instead of the campaign's `expire_after`;
   * docs/whatsapp.md "Messages that expire"); null or absent: the campaign's. In the future, after
   * `sendAt`, at most {@link EXPIRE_AT_AFTER_SEND_MAX_MS} after the send time.
   */
  expireAt?: number | null;
  /** Plan only: nothing is written, no audit entry. */
  dryRun?: boolean;
  /**
   * The request's idempotency record, committed with the batch (src/domain/idempotency.ts): its key
   * and the answer's HTTP status; the answer's body is the batch id.
   */
  idempotency?: { key: string; status: number };
  /**
   * How the caller named the audience (the console's words, e.g. `segment VIP`): recorded in the
   * audit entry as `audience`; without it the entry records `segment_id` or the number of `contacts`.
   */
  audienceLabel?: string;
}

/** What a campaign send did: the plan only (dry run), or the send's batch id and its plan. */
export type SendCampaignResult =
  | { dryRun: true; campaign: SourceRow; plan: SendPlan; /** Pasted numbers: those that will be sent, in order (for the review); a segment: null. */ recipients: string[] | null }
  | { dryRun: false; campaign: SourceRow; plan: SendPlan; batchId: string };

/** Why a send was refused (422); each transport words it (the operator API's body, the console's field errors). */
export type SendProblem =
  /** `sendAt` or `expireAt` is not in the future. */
  | 'past'
  /** `sendAt` is more than 730 days ahead; `limit` is the latest send time (ms). */
  | 'too_far'
  /** `expireAt` is not after `sendAt`. */
  | 'not_after_send'
  /** `expireAt` is more than 30 days after the send time; `limit` is the latest (ms). */
  | 'too_long'
  /** Nobody is in the audience. */
  | 'empty';

/** A 422 refusal of {@link sendCampaign}: which input (`send_at`, `expire_at` or `audience`) and why. */
export class SendRejected extends DomainError {
  readonly field: 'send_at' | 'expire_at' | 'audience';
  readonly problem: SendProblem;
  /** The latest acceptable time (ms) for `too_far` and `too_long`. */
  readonly limit: number | undefined;
  constructor(field: 'send_at' | 'expire_at' | 'audience', problem: SendProblem, limit?: number) {
    super(422, problem === 'empty' ? 'the audience has no numbers' : `${field}: ${problem.replaceAll('_', ' ')}`);
    this.field = field;
    this.problem = problem;
    this.limit = limit;
  }
}

/**
 * Sends a campaign, or with `dryRun` plans the send only (docs/operator-api.md `POST
 * /admin/campaigns/{id}/sends`, the console's review and confirm; see the module comment), for any
 * actor: the operator reaches every company's campaigns, a console user or API key its company's.
 *
 * Checks, in order: the campaign (404 `Campaign not found`, an archived one too), the send time and
 * expiry ({@link SendRejected} `send_at` / `expire_at`), the company (404), the audience (404
 * `Segment not found`, 422 too many numbers), then plans it at the service clock's now
 * ({@link planSegmentSend}: a segment's members are counted in SQL and resolved by batch-process at
 * fan-out; {@link planSend} for pasted numbers). A dry run answers the plan here. Otherwise an empty
 * audience is {@link SendRejected} `audience` / `empty`; the audit entry `campaign.send` (target
 * `batch:<id>`; details `campaign_id`, the audience, `scheduled_for`, `expire_at` when given) is
 * recorded, then the batch (a segment's without items, `overrides.segment_id`) is committed with its
 * job and the idempotency record through the accept step. The entry comes first: once the batch commits,
 * its fan-out may hold the embedded database's one connection (PGlite) for a while, and the answer
 * must not wait for it. Resolves once the batch is committed.
 */
export async function sendCampaign(deps: SendDeps, actor: Actor, input: SendCampaignInput): Promise<SendCampaignResult> {
  const db = deps.database.db;
  const campaign = await findSource(db, 'campaign', input.campaignId, actor.kind === 'operator' ? null : actor.companyId);
  assertSendable(campaign);
  const now = deps.clock.now();
  const sendAt = input.sendAt;
  const expireAt = input.expireAt ?? null;
  if (sendAt !== null) {
    const problem = sendTimeProblem(sendAt, now);
    if (problem) throw new SendRejected('send_at', problem, problem === 'too_far' ? now + SCHEDULE_AHEAD_MAX_MS : undefined);
  }
  if (expireAt !== null) {
    if (expireAt <= now) throw new SendRejected('expire_at', 'past');
    if (sendAt !== null && expireAt <= sendAt) throw new SendRejected('expire_at', 'not_after_send');
    if (expireAt - (sendAt ?? now) > EXPIRE_AT_AFTER_SEND_MAX_MS) throw new SendRejected('expire_at', 'too_long', (sendAt ?? now) + EXPIRE_AT_AFTER_SEND_MAX_MS);
  }
  const company = await sendCompany(db, campaign.company_id);
  const audience = input.audience;
  let plan: SendPlan;
  let items: BatchItem[] = [];
  if ('segment_id' in audience) {
    // Counted in SQL; the members are resolved by the fan-out, not carried through this command.
    plan = await planSegmentSend(db, company, audience.segment_id, sendAt ?? now, now, campaign.id);
    if (input.dryRun) return { dryRun: true, campaign, plan, recipients: null };
  } else {
    const phones = await audiencePhones(db, company.company_id, audience, now);
    const planned = await planSend(db, company, phones, sendAt ?? now, { campaignId: campaign.id, now });
    if (input.dryRun) return { dryRun: true, campaign, plan: planned.plan, recipients: planned.recipients };
    plan = planned.plan;
    items = planned.items;
  }
  if (plan.total === 0) throw new SendRejected('audience', 'empty');
  const batchId = newBatchId();
  await audit(db, actor, {
    action: 'campaign.send', target: `batch:${batchId}`, companyId: company.company_id, details: {
      campaign_id: campaign.id,
      ...(input.audienceLabel !== undefined ? { audience: input.audienceLabel } : 'segment_id' in audience ? { segment_id: audience.segment_id } : { contacts: items.length }),
      scheduled_for: sendAt === null ? null : new Date(sendAt).toISOString(),
      ...(expireAt === null ? {} : { expire_at: new Date(expireAt).toISOString() }),
    },
  });
  const times = {
    ...(sendAt === null ? {} : { send_at: new Date(sendAt).toISOString() }),
    ...(expireAt === null ? {} : { expire_at: new Date(expireAt).toISOString() }),
  };
  await acceptBatch(deps.acceptor, {
    batchId, companyId: campaign.company_id, kind: 'campaign', sourceId: campaign.id, template: campaign.template, ignored: 0,
    ...('segment_id' in audience ? { items: [], total: plan.total, overrides: { segment_id: audience.segment_id, ...times } } : { items, overrides: times }),
  }, input.idempotency ? { idempotency: { key: input.idempotency.key, status: input.idempotency.status, body: batchId } } : {});
  return { dryRun: false, campaign, plan, batchId };
}

/** A name the template reads that renders empty for some of a send's recipients. */
export interface MissingData {
  /** `first_name`, `last_name` or a variable's name. */
  name: string;
  /** How many recipients lack it. */
  recipients: number;
  /** One of them (E.164). */
  example: string;
}

/** What a send's review shows besides the plan (see the module comment). */
export interface SendReview {
  /** The message for the first recipient the send reaches; null when it reaches nobody. */
  sample: { phone: string; preview: PreviewResult } | null;
  /**
   * The names the template reads that render empty for some recipients (phone never does), except
   * variables no contact of the company has: the template's own warnings name those already.
   */
  missing: MissingData[];
}

/**
 * The review of a send of `campaign` (see the module comment): for pasted numbers, `recipients` (the
 * numbers planSend says will be sent, in order); for a segment, its members that are not opted out
 * (a dynamic segment's as its filter matches at `now`, ms). Nothing is written.
 */
export async function reviewSend(
  db: Db, campaign: SourceRow, audience: { recipients: string[] } | { segment_id: number }, now: number,
): Promise<SendReview> {
  const check = checkTemplate(campaign.template);
  const names = check.problems.length ? [] : check.reads.filter((n) => n !== 'phone');
  let first: string | undefined;
  let missing;
  if ('recipients' in audience) {
    first = audience.recipients[0];
    missing = await missingForNumbers(db, campaign.company_id, audience.recipients, names);
  } else {
    const filter = await segmentFilter(db, campaign.company_id, audience.segment_id);
    if (filter !== undefined && filter !== null) {
      const phones = await matchingPhones(db, campaign.company_id, { all: [filter, { field: 'opted_out', op: 'eq', value: false }] }, now, MAX_SEND_CONTACTS);
      first = phones[0];
      missing = await missingForNumbers(db, campaign.company_id, phones, names);
    } else {
      first = await firstSegmentRecipient(db, campaign.company_id, audience.segment_id);
      missing = await missingForSegment(db, campaign.company_id, audience.segment_id, names);
    }
  }
  // A variable no contact of the company has is already a warning of the template (templateWarnings).
  const known = await knownVariableNames(db, campaign.company_id, names.filter((x) => !ALWAYS_KNOWN.has(x)));
  return {
    sample: first === undefined ? null : { phone: first, preview: await previewSource(db, campaign, { phone: first }) },
    missing: missing.filter((m) => ALWAYS_KNOWN.has(m.name) || known.has(m.name)).map((m) => ({ name: m.name, recipients: m.missing, example: m.example })),
  };
}
