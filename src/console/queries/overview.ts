/**
 * The overview of one company, shared by the console's Overview page, the operator
 * API's `GET /admin/companies/{id}/overview` and `cms overview`:
 *
 * - messages per day by status over the last OVERVIEW_DAYS days, today included. A message's day is the
 *   local calendar day (the company's `delivery_hours.timezone`, UTC without one) on which its batch was
 *   accepted (`batches.created_at`); its status is the current one (a message sent yesterday and read
 *   today counts as `read` on yesterday's bar);
 * - the top failure reasons of that period: `failed` messages by the provider's error code (or the error
 *   text when there is no code) and `skipped` messages by their reason, each with a plain-words label;
 * - the opt-out rate: opted-out contacts / contacts now, and contacts who opted out in the period and
 *   still are (`opt_out_at` in the period).
 *
 * Message counts come from `message_counts` (migration 015), which triggers on `messages` keep per
 * company, 15 minutes of batch acceptance, status and failure code: counting a million messages live
 * took seconds. Every statement is scoped to the company. Each function runs one statement;
 * `companyOverview` runs the three in parallel (on a pool) and assembles the answer. The period is computed in SQL from the
 * caller's clock (`now`), so a test's FakeClock decides what "the last 30 days" are.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { MessageStatus } from '../../db/schema.ts';

/** Length of the overview period in days (today and the 29 days before it, local days). */
export const OVERVIEW_DAYS = 30;
/** Most failure reasons listed. */
export const TOP_REASONS = 8;

/** The statuses of a message, in the order charts and tables show them. */
export const STATUSES: readonly MessageStatus[] = ['read', 'delivered', 'sent', 'pending', 'skipped', 'failed'];

export type StatusCounts = Record<MessageStatus, number> & { total: number };

export interface DayCounts extends StatusCounts {
  /** Local calendar day, `YYYY-MM-DD`. */
  date: string;
}

export interface FailureReason {
  status: 'failed' | 'skipped';
  /** The provider's error code, the error text (no code), or the skip reason. */
  code: string;
  /** A provider error text seen with this code (the first one alphabetically), or null for skips. */
  example: string | null;
  /** What it means, in plain words. */
  label: string;
  count: number;
}

export interface OptOutStats {
  /** All contacts of the company. */
  contacts: number;
  /** Contacts opted out of campaigns now. */
  opted_out: number;
  /** opted_out / contacts (0 without contacts), 0..1. */
  rate: number;
  /** Contacts who opted out within the period and are still opted out. */
  opted_out_in_period: number;
}

export interface Overview {
  /** IANA time zone the days are counted in. */
  timezone: string;
  /** First and last local day of the period (`YYYY-MM-DD`, both included). */
  from: string;
  to: string;
  days: DayCounts[];
  totals: StatusCounts;
  failure_reasons: FailureReason[];
  opt_out: OptOutStats;
}

/** SQL expression: the first instant of the period (local midnight OVERVIEW_DAYS - 1 days before `now`'s day). */
function periodStart(now: Date, tz: string) {
  return sql`((date_trunc('day', ${now.toISOString()}::timestamptz AT TIME ZONE ${tz}) - make_interval(days => ${OVERVIEW_DAYS - 1})) AT TIME ZONE ${tz})`;
}

/** SQL expression: the first instant after the period (local midnight after `now`'s day). */
function periodEnd(now: Date, tz: string) {
  return sql`((date_trunc('day', ${now.toISOString()}::timestamptz AT TIME ZONE ${tz}) + interval '1 day') AT TIME ZONE ${tz})`;
}

/**
 * Message counts per local day and status in the period, only the (day, status) pairs that occur.
 * One statement over `message_counts` (migration 015: counts per 15 minutes of batch acceptance, kept
 * by triggers; at most 2,880 buckets a company in 30 days), grouped by the bucket's local date.
 */
export async function dailyStatusCounts(db: Db, companyId: number, tz: string, now: Date): Promise<{ day: string; status: MessageStatus; count: number }[]> {
  const { rows } = await sql<{ day: string; status: MessageStatus; count: number }>`
    SELECT to_char(t.day, 'YYYY-MM-DD') AS day, t.status, t.count
    FROM (SELECT (bucket AT TIME ZONE ${tz})::date AS day, status, sum(count)::int AS count
          FROM message_counts
          WHERE company_id = ${companyId} AND bucket >= ${periodStart(now, tz)} AND bucket < ${periodEnd(now, tz)}
          GROUP BY 1, 2
          HAVING sum(count) <> 0) t`.execute(db);
  return rows;
}

/** The most frequent failure and skip reasons of the period (at most TOP_REASONS), most frequent first. */
export async function topFailureReasons(db: Db, companyId: number, tz: string, now: Date): Promise<{ status: 'failed' | 'skipped'; code: string; example: string | null; count: number }[]> {
  const { rows } = await sql<{ status: 'failed' | 'skipped'; code: string; example: string | null; count: number }>`
    SELECT status, code, min(example) AS example, sum(count)::int AS count
    FROM message_counts
    WHERE company_id = ${companyId} AND bucket >= ${periodStart(now, tz)} AND bucket < ${periodEnd(now, tz)}
      AND status IN ('failed', 'skipped')
    GROUP BY 1, 2
    HAVING sum(count) > 0
    ORDER BY count DESC, code
    LIMIT ${TOP_REASONS}`.execute(db);
  return rows.map((r) => ({ ...r, example: r.status === 'failed' ? r.example : null }));
}

/**
 * Contacts (erased ones left out), opted-out contacts, and contacts opted out within the period. One
 * statement of three counts: the company's contacts by an index-only scan of (company_id, phone), the
 * opted-out ones by the partial index of migration 015.
 */
export async function optOutCounts(db: Db, companyId: number, tz: string, now: Date): Promise<{ contacts: number; opted_out: number; opted_out_in_period: number }> {
  const { rows } = await sql<{ contacts: number; opted_out: number; opted_out_in_period: number }>`
    SELECT (SELECT count(*) FROM contacts WHERE company_id = ${companyId} AND erased_at IS NULL)::int AS contacts,
           (SELECT count(*) FROM contacts WHERE company_id = ${companyId} AND opted_out AND erased_at IS NULL)::int AS opted_out,
           (SELECT count(*) FROM contacts WHERE company_id = ${companyId} AND opted_out AND erased_at IS NULL
              AND opt_out_at >= ${periodStart(now, tz)} AND opt_out_at < ${periodEnd(now, tz)})::int AS opted_out_in_period`.execute(db);
  return rows[0];
}

/** Skip reasons written by the pipeline, in plain words. */
const SKIP_LABELS: Record<string, string> = {
  opted_out: 'The contact opted out of campaigns',
  invalid_phone: 'Not a valid phone number',
  cancelled: 'The send was cancelled before this message was handed to the provider',
  frequency_cap: "The contact already got the most campaign messages the company's frequency cap allows",
  expired: 'Not handed to the provider before the send expired',
  erased: 'The contact was erased',
};

/** Why a pending message waits (db/whatsapp-channel.ts WAIT_REASONS), in plain words. */
const WAIT_LABELS: Record<string, string> = {
  channel_paused: 'Waiting: the WhatsApp number is paused',
  template_paused: 'Waiting: WhatsApp paused the template',
  messaging_limit: "Waiting: the WhatsApp number's daily limit of new people is reached",
  pair_rate: 'Waiting: too soon after the last message to this person',
  marketing_held: 'Waiting: WhatsApp holds marketing messages to this person for now',
};

/** A message's `reason` code in plain words (a skip, or why it waits); the code itself when unknown. */
export function reasonWords(code: string): string {
  return SKIP_LABELS[code] ?? WAIT_LABELS[code] ?? code.replace(/_/g, ' ');
}

/** WhatsApp Cloud API error codes (Meta's documentation), in plain words. */
const WHATSAPP_LABELS: Record<string, string> = {
  '0': 'WhatsApp could not authenticate the business (access token)',
  '10': 'The access token lacks a permission',
  '100': 'WhatsApp refused a parameter of the request',
  '190': 'The WhatsApp access token expired',
  '368': 'The WhatsApp account is temporarily blocked for policy violations',
  '130472': "Not delivered: the contact's number is part of a WhatsApp experiment",
  '130497': 'The business may not message users in this country',
  '131008': 'A required template parameter is missing',
  '131009': 'A template parameter value is not valid',
  '131021': 'The recipient is the sending number itself',
  '131026': 'Undeliverable: the number may not use WhatsApp, or has an old app version',
  '131031': 'The WhatsApp business account is locked',
  '131042': 'A payment problem on the WhatsApp business account',
  '131045': 'The sending phone number is not registered',
  '131047': 'More than 24 hours since the contact last wrote (a template is needed)',
  '131049': 'Meta held the message back to protect engagement (marketing limit per user)',
  '131050': 'The contact stopped marketing messages on WhatsApp',
  '131051': 'WhatsApp does not support this message type',
  '131052': 'WhatsApp could not download the media',
  '131053': 'WhatsApp could not upload the media',
  '132000': "The number of parameters does not match the WhatsApp template's",
  '132001': 'The WhatsApp template does not exist in this language',
  '132005': 'The template text is too long once filled in',
  '132007': "The message breaks WhatsApp's template format policy",
  '132012': "A parameter's format does not match the WhatsApp template",
  '132015': 'The WhatsApp template is paused (low quality)',
  '132016': 'The WhatsApp template is disabled',
  '133010': 'The sending phone number is not registered with WhatsApp',
};

/** HTTP statuses a webhook or the Graph API answers, in plain words. */
const HTTP_LABELS: Record<string, string> = {
  '400': 'The receiver refused the message as malformed (HTTP 400)',
  '401': 'The receiver did not accept our credentials (HTTP 401)',
  '403': 'The receiver refused the message (HTTP 403)',
  '404': 'The receiver URL does not exist (HTTP 404)',
  '408': 'The receiver timed out (HTTP 408)',
  '409': 'The receiver reported a conflict (HTTP 409)',
  '410': 'The receiver URL is gone (HTTP 410)',
  '413': 'The message was too large for the receiver (HTTP 413)',
  '422': 'The receiver could not process the message (HTTP 422)',
  '429': 'The receiver kept answering "too many requests" (HTTP 429)',
  '500': 'The receiver had an internal error (HTTP 500)',
  '502': 'The receiver was unreachable behind its gateway (HTTP 502)',
  '503': 'The receiver was unavailable (HTTP 503)',
  '504': 'The receiver timed out behind its gateway (HTTP 504)',
};

/** A plain-words label for a failure (`failed`: error code or error text) or a skip reason. */
export function reasonLabel(status: 'failed' | 'skipped', code: string, example: string | null): string {
  if (status === 'skipped') return SKIP_LABELS[code] ?? `Skipped: ${code.replace(/_/g, ' ')}`;
  if (WHATSAPP_LABELS[code]) return WHATSAPP_LABELS[code];
  if (HTTP_LABELS[code]) return HTTP_LABELS[code];
  if (/^[1-5][0-9][0-9]$/.test(code)) return `The receiver answered HTTP ${code}`;
  const text = example ?? code;
  if (/^timeout/.test(text)) return 'The provider did not answer in time';
  if (/^connection (error|closed)/.test(text)) return 'Could not connect to the provider';
  if (/private or reserved address/.test(text)) return 'The receiver URL points at a private address (refused)';
  if (/no whatsapp mapping/.test(text)) return 'The template has no WhatsApp mapping';
  if (/^invalid HTTP response/.test(text)) return 'The provider answered something that is not HTTP';
  return text;
}

/** An all-zero count per status. */
function zeroCounts(): StatusCounts {
  return { pending: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, total: 0 };
}

/** The `YYYY-MM-DD` local days of the period ending on `now`'s local day in `tz`, oldest first. */
export function periodDays(now: Date, tz: string): string[] {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  const base = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: OVERVIEW_DAYS }, (_, i) => new Date(base - (OVERVIEW_DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The whole overview of a company at `now` (see the module comment), days zero-filled. `timezone` is
 * the company's delivery-hours time zone or null (UTC).
 */
export async function companyOverview(db: Db, companyId: number, timezone: string | null, now: Date): Promise<Overview> {
  const tz = timezone ?? 'UTC';
  const [daily, reasons, optOut] = await Promise.all([
    dailyStatusCounts(db, companyId, tz, now),
    topFailureReasons(db, companyId, tz, now),
    optOutCounts(db, companyId, tz, now),
  ]);
  const dates = periodDays(now, tz);
  const byDay = new Map(dates.map((date) => [date, { date, ...zeroCounts() } as DayCounts]));
  const totals = zeroCounts();
  for (const r of daily) {
    const d = byDay.get(r.day);
    if (!d) continue;
    d[r.status] += r.count;
    d.total += r.count;
    totals[r.status] += r.count;
    totals.total += r.count;
  }
  return {
    timezone: tz,
    from: dates[0],
    to: dates[dates.length - 1],
    days: [...byDay.values()],
    totals,
    failure_reasons: reasons.map((r) => ({ ...r, label: reasonLabel(r.status, r.code, r.example) })),
    opt_out: { ...optOut, rate: optOut.contacts ? optOut.opted_out / optOut.contacts : 0 },
  };
}
