/**
 * Client of the service's HTTP API for the `cms` CLI and for integrators (docs/client.md):
 * openapi-fetch's `createClient<paths>()` over the types generated from `/openapi.json`
 * (`src/cli/api/openapi.ts`, `npm run gen:client`), with
 *
 * - the base URL, `Authorization: Bearer <token>` and `Accept: application/json` on every request;
 * - a timeout per request, connect to last byte of the answer (default 120 000 ms);
 * - the CLI's error mapping (errors.ts): an answer outside 2xx throws `ApiError` (status, method, path,
 *   parsed body); a server that cannot be reached, or does not answer in time, throws `ConnectionError`.
 *   So a call that returns has succeeded; {@link data} takes its typed body.
 *
 *   const api = createOperatorClient({ baseUrl: 'http://127.0.0.1:8000', token });
 *   const company = await data(api.GET('/admin/companies/{company_id}', { params: { path: { company_id: 7 } } }));

 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './api/openapi.ts';
import { ApiError, ConnectionError, UsageError } from './errors.ts';

/** The typed client: `GET/POST/PUT/PATCH/DELETE(path, { params, body })` resolve to `{ data, response }`. */
export type OperatorApi = Client<paths>;

/** Options of {@link createOperatorClient}. `timeoutMs` bounds each request (default 120 000 ms). */
export interface ClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8000` (a trailing slash is ignored). */
  baseUrl: string;
  /** The operator token (`ADMIN_TOKEN`), sent as `Authorization: Bearer <token>`. */
  token: string;
  timeoutMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** Default limit of one request, connect to last byte (ms). */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Maximum contacts per PUT /admin/companies/{company_id}/contacts request (docs/operator-api.md). */
export const MAX_CONTACTS_PER_REQUEST = 10_000;

/** A typed client of the API at `opts.baseUrl` (see the module doc for the errors it throws). */
export function createOperatorClient(opts: ClientOptions): OperatorApi {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  return createClient<paths>({
    baseUrl,
    headers: { authorization: `Bearer ${opts.token}`, accept: 'application/json' },
    fetch: checkedFetch(baseUrl, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.fetch ?? fetch),
  });
}

/**
 * The body of a successful call: `await data(api.POST(...))`. The client has already thrown `ApiError` for
 * any answer outside 2xx; a 204 gives `undefined`.
 */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data: body, error, response } = await call;
  // Unreachable with createOperatorClient (its fetch throws first); a client built otherwise gets the same error.
  if (error !== undefined || !response.ok) throw new ApiError(response.status, 'request to', new URL(response.url || 'http://-/').pathname, error);
  return body as T;
}

/**
 * A path parameter that the API documents as an integer, from the command line: `"7"` → 7. Throws
 * `UsageError` (exit code 2) naming `what` for anything else, before any request is sent.
 */
export function integerId(value: string, what: string): number {
  const v = value.trim();
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n)) throw new UsageError(`${what} must be a whole number, got "${value}"`);
  return n;
}

/**
 * The fetch handed to openapi-fetch: adds the timeout, reads the whole answer within it, throws
 * `ConnectionError` when there is no answer and `ApiError` for a status outside 2xx; otherwise returns the
 * answer rebuilt from the text it read (so a body cut off mid-way is a ConnectionError, not a JSON error).
 */
function checkedFetch(baseUrl: string, timeoutMs: number, fetchImpl: typeof fetch): (request: Request) => Promise<Response> {
  return async (request) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetchImpl(request, { signal });
      text = await res.text();
    } catch (err) {
      throw new ConnectionError(baseUrl, errorCode(err), err);
    }
    if (!res.ok) {
      const url = request.url.startsWith(baseUrl) ? request.url.slice(baseUrl.length) : new URL(request.url).pathname;
      throw new ApiError(res.status, request.method, url, parseBody(text));
    }
    const empty = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(empty ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** Parsed JSON, the text itself when it is not JSON, `undefined` when empty. */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Why a fetch failed: the system error code (ECONNREFUSED, ENOTFOUND, ...), `timeout`, or the
 * innermost cause's message (e.g. undici's "bad port").
 */
function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  let message: string | undefined;
  for (let depth = 0; depth < 5 && e; depth++) {
    const o = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof o.code === 'string') return o.code;
    if (o.name === 'TimeoutError' || o.name === 'AbortError') return 'timeout';
    if (typeof o.message === 'string' && o.message !== '') message = o.message;
    if (Array.isArray(o.errors) && o.errors.length > 0) e = o.errors[0];
    else e = o.cause;
  }
  return message;
}
