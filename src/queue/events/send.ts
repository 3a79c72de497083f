/**
 * One HTTP attempt to deliver an event (receipts-and-events.md §5): POST of the stored body, exactly,
 * signed with the official `standardwebhooks` library:
 *
 *   webhook-id:        the event id (the same on every attempt)
 *   webhook-timestamp: unix seconds of the attempt (real time: receivers compare it with their clock)
 *   webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body"> with the endpoint's whsec_ secret
 *
 * Bounded: the whole attempt (connect to last byte) by `timeoutMs`; the answer is read up to
 * RESPONSE_CAP bytes, the first EXCERPT_CHARS characters kept; a larger or never-ending answer aborts
 * the request and is a failed attempt. Connections go through an undici Agent whose lookup is the
 * network guard's (`guardedLookup`): a URL that resolves to a private address is refused at connect
 * time too. Never throws: every outcome is an AttemptOutcome.
 */
import { Agent, request } from 'undici';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, type AddressPolicy } from '../../domain/network-guard.ts';

/** Most bytes of an answer read (64 KiB); more is a failed attempt. */
export const RESPONSE_CAP = 64 * 1024;

/** Characters of the answer kept in the attempt log. */
export const EXCERPT_CHARS = 256;

export interface AttemptOutcome {
  ok: boolean;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  /** Retry-After of the answer (ms), when given. */
  retry_after_ms?: number;
}

/** A keep-alive agent for event deliveries that connects only where `policy` allows; close it on stop. */
export function createEventAgent(policy: AddressPolicy, timeoutMs: number, connections = 64): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy), timeout: timeoutMs },
    connections,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

/** Retry-After (seconds or an HTTP date) in ms, or undefined. */
export function parseRetryAfter(header: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

function errorText(err: unknown, timeoutMs: number, timedOut: boolean): string {
  const e = err as { code?: string; name?: string; message?: string };
  const code = e?.code ?? e?.name ?? 'error';
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'TimeoutError') {
    return `timeout after ${timeoutMs} ms`;
  }
  if (code === 'EADDRNOTALLOWED') return 'refused to connect: private or reserved address';
  if (typeof code === 'string' && code.startsWith('HPE_')) return 'invalid HTTP response';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'connection closed by the receiver';
  return `connection error: ${code}`;
}

/**
 * POSTs `body` to `url` signed for `id` with `signer` (a `standardwebhooks` Webhook of the endpoint's
 * secret). `signal` interrupts it (service stopping).
 */
export async function sendEvent(opts: { url: string; id: string; body: string; signer: Webhook; agent: Agent; timeoutMs: number; signal?: AbortSignal }): Promise<AttemptOutcome> {
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, opts.timeoutMs);
  const onOuter = () => controller.abort();
  opts.signal?.addEventListener('abort', onOuter, { once: true });
  const duration = () => Math.round(performance.now() - started);
  try {
    const now = new Date();
    const res = await request(opts.url, {
      method: 'POST',
      dispatcher: opts.agent,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'cms-events/1',
        'webhook-id': opts.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': opts.signer.sign(opts.id, now, opts.body),
      },
      body: opts.body,
      signal: controller.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      if (size < EXCERPT_CHARS * 4) chunks.push(buf);
      size += buf.length;
      if (size > RESPONSE_CAP) {
        tooLarge = true;
        controller.abort();
        break;
      }
    }
    const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS) || null;
    const status = res.statusCode;
    if (tooLarge) {
      return { ok: false, status_code: status, error: `response larger than ${RESPONSE_CAP} bytes`, response_excerpt: excerpt, duration_ms: duration() };
    }
    const ok = status >= 200 && status < 300;
    return {
      ok, status_code: status, error: ok ? null : `HTTP ${status}`, response_excerpt: excerpt, duration_ms: duration(),
      retry_after_ms: ok ? undefined : parseRetryAfter(res.headers['retry-after']),
    };
  } catch (err) {
    if (opts.signal?.aborted && !timedOut) return { ok: false, status_code: null, error: 'delivery interrupted', response_excerpt: null, duration_ms: duration() };
    return { ok: false, status_code: null, error: errorText(err, opts.timeoutMs, timedOut), response_excerpt: null, duration_ms: duration() };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuter);
  }
}
