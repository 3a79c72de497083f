/**
 * What each WhatsApp Cloud API error code does (docs/whatsapp.md "What each error code does"): the
 * code table, and the classifier that turns a Graph API answer that is not 2xx into the generic
 * outcome of providers/types.ts, with Meta's error kept as it gave it (`code`, `title`, `message`,
 * `error_data.details`).
 *
 * | codes | action |
 * |---|---|
 * | 130429, 131000, 131016, 133004, 1, 2, 4, 17, 32, 613, 80007 | retry on DELIVERY_RETRY_SCHEDULE (Retry-After honoured); 130429 also slows the number |
 * | 131056 | retry, waiting `pair_rate`; the pair is backed off |
 * | 131049 | waits `marketing_held` 24 h (not counted against the schedule; never past its expiry) |
 * | 131050 | failed; the contact opted out (`opt_out_source` `whatsapp`) |
 * | 131047, 131026, 131021, 131051, 131052, 131053, 100 | failed at once |
 * | 131048, 131031, 368, 190 | waits `channel_paused`; the channel is paused; the run's other messages wait too |
 * | 132000, 132001, 132005, 132007, 132012, 132015, 132016 | the catalogue entry is marked; failed (132015: waits `template_paused`); later messages are decided from the catalogue |
 * | any other | by HTTP status (delivery/failure.ts `isRetryableStatus`): 408, 429 and 5xx retry, anything else fails at once |
 *
 * The side effects on shared state (slowing the number, backing a pair off, marking the catalogue)
 * are carried out by the provider (send.ts, room.ts `afterRefusal`) from `action`; the effects on the message's
 * contact and the company's channel are returned as generic effects for the delivery run.
 */
import { WAIT_REASONS } from '../../db/whatsapp-channel.ts';
import { isRetryableStatus, retryAfterMs } from '../../delivery/failure.ts';
import type { ProviderError, SendResult } from '../types.ts';

/** What a code makes the provider do (see the module comment). */
export type ErrorAction = 'retry' | 'slow_down' | 'pair' | 'marketing_held' | 'opt_out' | 'fail' | 'pause' | 'template';

/** One row of the table: the action, Meta's title for the code, and for template codes the catalogue status it implies. */
export interface CodeRule {
  action: ErrorAction;
  title: string;
  /** `template` codes: the status the catalogue entry gets (`PAUSED`, `DISABLED`, `DELETED`, or `MISMATCHED`: our mapping no longer fits Meta's template). */
  templateStatus?: string;
}

/** The code table (docs/whatsapp.md "What each error code does"). */
export const ERROR_CODES: ReadonlyMap<number, CodeRule> = new Map<number, CodeRule>([
  [130429, { action: 'slow_down', title: 'Rate limit hit' }],
  [131000, { action: 'retry', title: 'Something went wrong' }],
  [131016, { action: 'retry', title: 'Service unavailable' }],
  [133004, { action: 'retry', title: 'Server temporarily unavailable' }],
  [1, { action: 'retry', title: 'API Unknown' }],
  [2, { action: 'retry', title: 'API Service' }],
  [4, { action: 'retry', title: 'API Too Many Calls' }],
  [17, { action: 'retry', title: 'API User Too Many Calls' }],
  [32, { action: 'retry', title: 'Page-level throttling' }],
  [613, { action: 'retry', title: 'Calls to this API have exceeded the rate limit' }],
  [80007, { action: 'retry', title: 'Rate limit issues' }],
  [131056, { action: 'pair', title: '(Business Account, Consumer Account) pair rate limit hit' }],
  [131049, { action: 'marketing_held', title: 'This message was not delivered to maintain healthy ecosystem engagement' }],
  [131050, { action: 'opt_out', title: 'The user stopped marketing messages from this business' }],
  [131047, { action: 'fail', title: 'Re-engagement message' }],
  [131026, { action: 'fail', title: 'Message undeliverable' }],
  [131021, { action: 'fail', title: 'Recipient cannot be sender' }],
  [131051, { action: 'fail', title: 'Unsupported message type' }],
  [131052, { action: 'fail', title: 'Media download error' }],
  [131053, { action: 'fail', title: 'Media upload error' }],
  [100, { action: 'fail', title: 'Invalid parameter' }],
  [131048, { action: 'pause', title: 'Spam rate limit hit' }],
  [131031, { action: 'pause', title: 'Account has been locked' }],
  [368, { action: 'pause', title: 'Temporarily blocked for policies violations' }],
  [190, { action: 'pause', title: 'Access token has expired' }],
  [132000, { action: 'template', title: 'Template param count mismatch', templateStatus: 'MISMATCHED' }],
  [132001, { action: 'template', title: 'Template does not exist', templateStatus: 'DELETED' }],
  [132005, { action: 'template', title: 'Template hydrated text too long', templateStatus: 'MISMATCHED' }],
  [132007, { action: 'template', title: 'Template format character policy violated', templateStatus: 'MISMATCHED' }],
  [132012, { action: 'template', title: 'Template parameter format mismatch', templateStatus: 'MISMATCHED' }],
  [132015, { action: 'template', title: 'Template is paused', templateStatus: 'PAUSED' }],
  [132016, { action: 'template', title: 'Template is disabled', templateStatus: 'DISABLED' }],
]);

/** How long a message waits after 131049 (Meta held a marketing message for this person): 24 h. */
export const MARKETING_HOLD_MS = 24 * 3600_000;
/** How long a message waits for a paused channel or template before it is looked at again (released earlier by resume / approval). */
export const PAUSE_HOLD_MS = 3600_000;
/** After 131056, the pair waits at least this long (and the message with it). */
export const PAIR_BACKOFF_MS = 60_000;
/** After 130429 without Retry-After, the number is slowed for this long. */
export const SLOW_DOWN_MS = 60_000;

/** Meta's error as parsed from a Graph API answer (absent fields null). */
export interface GraphError {
  code: number | null;
  title: string | null;
  message: string | null;
  details: string | null;
}

/** The `error` of a Graph API answer (`{"error":{code, message, error_user_title?, error_data:{details}}}`), or null when the body is not one. */
export function parseGraphError(text: string): GraphError | null {
  let err: Record<string, unknown> | undefined;
  try {
    err = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
  } catch {
    return null;
  }
  if (!err || typeof err !== 'object') return null;
  const str = (v: unknown, max = 1000) => (typeof v === 'string' && v.length ? v.slice(0, max) : null);
  const data = err.error_data as { details?: unknown } | undefined;
  return {
    code: typeof err.code === 'number' && Number.isInteger(err.code) ? err.code : null,
    title: str(err.title) ?? str(err.error_user_title),
    message: str(err.message),
    details: str(data && typeof data === 'object' ? data.details : undefined),
  };
}

/** A classified answer: the generic outcome, the table's rule (null: by HTTP status) and the code. */
export interface Classified {
  result: Exclude<SendResult, { status: 'sent' }>;
  rule: CodeRule | null;
  code: number | null;
  /** Retry-After of the answer (ms), when given. */
  retryAfterMs?: number;
}

/**
 * Classifies a Graph API answer that is not 2xx (see the module comment) at `now` (ms, the injectable
 * clock; waits end relative to it); `retryAfter` is the answer's Retry-After header.
 */
export function classifyAnswer(status: number, text: string, retryAfter: string | string[] | undefined, now: number): Classified {
  const graph = parseGraphError(text);
  const code = graph?.code ?? null;
  const rule = code !== null ? ERROR_CODES.get(code) ?? null : null;
  const providerError: ProviderError = {
    code: String(code ?? status),
    title: graph?.title ?? rule?.title ?? null,
    message: graph?.message ?? null,
    details: graph?.details ?? null,
  };
  const error = code !== null
    ? `whatsapp error ${code}${graph?.message ? `: ${graph.message.slice(0, 300)}` : ''} (HTTP ${status})`
    : `whatsapp HTTP ${status} (HTTP ${status})`;
  const base = { error, code: String(code ?? status), providerError };
  const after = retryAfterMs(retryAfter);
  const waitUntil = (ms: number) => now + ms;
  if (!rule) {
    const retryable = isRetryableStatus(status);
    return { result: { status: 'failed', retryable, ...base, retryAfterMs: retryable ? after : undefined }, rule, code, retryAfterMs: after };
  }
  const reason = `${code}: ${providerError.title}`;
  switch (rule.action) {
    case 'retry':
    case 'slow_down':
      return { result: { status: 'failed', retryable: true, ...base, retryAfterMs: after }, rule, code, retryAfterMs: after };
    case 'pair':
      return { result: { status: 'failed', retryable: true, ...base, retryAfterMs: Math.max(after ?? 0, PAIR_BACKOFF_MS), reason: WAIT_REASONS.pairRate }, rule, code, retryAfterMs: after };
    case 'marketing_held':
      return { result: { status: 'wait', reason: WAIT_REASONS.marketingHeld, until: waitUntil(Math.max(after ?? 0, MARKETING_HOLD_MS)), ...base }, rule, code };
    case 'opt_out':
      return { result: { status: 'failed', retryable: false, ...base, effects: [{ kind: 'opt_out', source: 'whatsapp', evidence: { error_code: code } }] }, rule, code };
    case 'fail':
      return { result: { status: 'failed', retryable: false, ...base }, rule, code };
    case 'pause':
      return {
        result: { status: 'wait', reason: WAIT_REASONS.channelPaused, until: waitUntil(PAUSE_HOLD_MS), ...base, effects: [{ kind: 'pause_channel', reason }], recheck: true },
        rule, code,
      };
    case 'template':
      return rule.templateStatus === 'PAUSED'
        ? { result: { status: 'wait', reason: WAIT_REASONS.templatePaused, until: waitUntil(PAUSE_HOLD_MS), ...base, recheck: true }, rule, code }
        : { result: { status: 'failed', retryable: false, ...base, recheck: true }, rule, code };
  }
}
