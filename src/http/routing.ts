/**
 * Routing exactly as Starlette routes (docs/decisions.md#1-request-handling-order, step 1), for the whole app:
 *
 * - The path is percent-decoded before routing, as uvicorn does (`unquote`, invalid UTF-8 replaced by
 *   U+FFFD), and a path parameter matches one non-empty segment without `/`: `/api/segments//contacts`
 *   and `/api/segments/1%2F2/contacts` are `404 {"detail":"Not Found"}` (Fastify would have matched them).
 * - An unknown path is `404 {"detail":"Not Found"}`; a known path with a wrong method is
 *   `405 {"detail":"Method Not Allowed"}` with an `Allow` header.
 * - A path that matches no route, but matches one (any method) once its trailing slashes are removed
 *   (Starlette strips all of them) or one slash is added, is `307` with an empty body and `Location:`
 *   the same URL with the slash toggled and the query string kept. The scheme is `X-Forwarded-Proto`
 *   (`http`, `https`) when the peer is a trusted proxy (uvicorn's default: 127.0.0.1 and ::1), else `http`;
 *   the authority is the `Host` header when it is a valid host[:port], else the server's own address;
 *   the URL is quoted as Starlette's `RedirectResponse` quotes it.
 *
 * Fastify answers unknown paths with its not-found handler, so the app records each route's pattern
 * and methods (`RouteTable.add` from an `onRoute` hook), runs `starletteRouting` first of its
 * `onRequest` hooks and answers 404/405 from `notFound`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendDetail } from './errors.ts';

interface Route {
  re: RegExp;
  methods: Set<string>;
}

/** Patterns (Fastify route URLs) and their methods; matches decoded request paths as Starlette would. */
export class RouteTable {
  readonly #routes = new Map<string, Route>();

  /**
   * Records a Fastify route (`/api/segments/:segment_id/contacts`, `/docs/*`) and its methods.
   * `withSlash`: the route is a plugin's `/` under a prefix, which Fastify also serves at `url + '/'`
   * (prefixTrailingSlash `both`) without an `onRoute` call of its own.
   */
  add(url: string, methods: string | string[], withSlash = false): void {
    let entry = this.#routes.get(url);
    if (!entry) {
      entry = { re: withSlash ? new RegExp(`${patternOf(url).source.slice(0, -1)}/?$`) : patternOf(url), methods: new Set() };
      this.#routes.set(url, entry);
    }
    for (const m of [methods].flat()) entry.methods.add(m.toUpperCase());
  }

  /** The methods allowed on a decoded path, or undefined when no route matches it. */
  allowed(path: string): string[] | undefined {
    const found = new Set<string>();
    for (const { re, methods } of this.#routes.values()) {
      if (re.test(path)) for (const m of methods) found.add(m);
    }
    return found.size ? [...found] : undefined;
  }

  /** Whether the route registered as `url` matches the decoded `path`. */
  routeMatches(url: string, path: string): boolean {
    const entry = this.#routes.get(url);
    return entry ? entry.re.test(path) : false;
  }
}

/** `/a/:id/b` -> `^/a/[^/]+/b$`; a trailing `*` matches anything (static files). */
function patternOf(url: string): RegExp {
  const pattern = url.split('/').map((part) => {
    if (part.startsWith(':')) return '[^/]+';
    if (part === '*') return '.*';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  return new RegExp(`^${pattern}$`);
}

/** Python's `urllib.parse.unquote` (UTF-8, errors='replace'), which uvicorn applies to the raw path. */
export function unquotePath(raw: string): string {
  if (!raw.includes('%')) return raw;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '%' && /^[0-9a-fA-F]{2}$/.test(raw.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...enc.encode(c));
    }
  }
  return new TextDecoder('utf-8').decode(new Uint8Array(bytes));
}

/**
 * Fastify's `rewriteUrl`: a request target whose path does not percent-decode as UTF-8 (`%FF`, `%E2%82`,
 * a `%` without two hex digits) is rewritten so that it routes as uvicorn would: invalid UTF-8 becomes
 * U+FFFD (`%EF%BF%BD`) and a stray `%` stays a literal `%` (`%25`). Fastify would refuse such a URL
 * with its own 400 before any hook; valid targets are returned unchanged.
 */
export function rewriteBadPercentEncoding(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.includes('%')) return url;
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    // fall through: repair below
  }
  const fixed = path.replace(/(?:%[0-9A-Fa-f]{2})+|%/g, (run) => {
    if (run === '%') return '%25';
    const bytes = Uint8Array.from(run.slice(1).split('%'), (h) => Number.parseInt(h, 16));
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      return run;
    } catch {
      return [...new TextEncoder().encode(new TextDecoder('utf-8').decode(bytes))].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
    }
  });
  return q < 0 ? fixed : fixed + url.slice(q);
}

const QUOTE_SAFE = new Set([..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~", ...":/%#?=@[]!$&'()*+,;"]);

/** Python's `urllib.parse.quote(url, safe=":/%#?=@[]!$&'()*+,;")`, as Starlette's RedirectResponse. */
function quoteLocation(url: string): string {
  let out = '';
  for (const ch of url) {
    if (QUOTE_SAFE.has(ch)) out += ch;
    else for (const b of new TextEncoder().encode(ch)) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

const HOST_RE = /^(?<host>[a-z0-9._~%!$&'()*+,;=-]+|\[(?:(?<ipv6>[a-f0-9]*:[a-f0-9.:]+)|v[a-f0-9]+\.[a-z0-9._~!$&'()*+,;=:-]+)\])(?::(?<port>[0-9]+))?$/i;
const TRUSTED_PROXIES = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** The authority of the redirect: a valid `Host` header, else the server's own address (Starlette's URL). */
function authority(request: FastifyRequest, scheme: string): string {
  const host = request.headers.host;
  const m = host === undefined ? null : HOST_RE.exec(host);
  if (m) {
    const port = m.groups!.port?.replace(/^0+/, '');
    const validIpv6 = m.groups!.ipv6 === undefined || URL.canParse(`http://[${m.groups!.ipv6}]/`);
    if (validIpv6 && (port === undefined || (port.length <= 5 && Number(port || '0') <= 65535))) return host!;
  }
  let local = request.socket.localAddress ?? '127.0.0.1';
  if (local.startsWith('::ffff:')) local = local.slice(7);
  if (local.includes(':')) local = `[${local}]`;
  const port = request.socket.localPort;
  return port === (scheme === 'https' ? 443 : 80) ? local : `${local}:${port}`;
}

/** The scheme of the redirect: X-Forwarded-Proto from a trusted proxy (uvicorn's ProxyHeadersMiddleware). */
function scheme(request: FastifyRequest): string {
  const forwarded = request.headers['x-forwarded-proto'];
  if (typeof forwarded === 'string' && TRUSTED_PROXIES.has(request.socket.remoteAddress ?? '')) {
    const value = forwarded.trim();
    if (value === 'http' || value === 'https') return value;
  }
  return 'http';
}

/** Splits a raw request target into its path and its query (without `?`, undefined when absent). */
function splitTarget(url: string): { path: string; query: string | undefined } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: undefined } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** The decoded path of a request (what Starlette routes on). */
export function routedPath(request: FastifyRequest): string {
  return unquotePath(splitTarget(request.raw.url ?? '/').path);
}

/**
 * The `onRequest` hook that applies the rules above before anything else (body parsing, auth):
 * answers 307 itself, and hands what Starlette would not route to the not-found handler of the
 * request's scope (`notFoundReply` for the app: 405 or 404; the console's HTML page).
 */
export function starletteRouting(routes: RouteTable) {
  return async function routing(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { path: rawPath, query } = splitTarget(request.raw.url ?? '/');
    const path = unquotePath(rawPath);
    // Fast path: the route Fastify matched matches the decoded path too (one regular expression).
    if (!request.is404 && routes.routeMatches(request.routeOptions.url ?? '', path)) return;
    if (routes.allowed(path)) {
      // Fastify matched a route the decoded path does not (a parameter holding `%2F`): Starlette has none.
      if (!request.is404) return notFound(reply);
      return;
    }
    if (path !== '/' && path !== '') {
      const toggled = path.endsWith('/') ? path.replace(/\/+$/, '') : path + '/';
      if (toggled !== '' && routes.allowed(toggled)) {
        const s = scheme(request);
        const location = quoteLocation(`${s}://${authority(request, s)}${toggled}${query ? `?${query}` : ''}`);
        await reply.code(307).header('location', location).header('content-length', '0').send();
        return reply;
      }
    }
    // Fastify matched an empty or `/`-holding parameter; else its not-found handler answers.
    if (!request.is404) return notFound(reply);
  };
}

/** Hands the request to the not-found handler of its scope (the console answers an HTML page). */
function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

/** The not-found handler's answer: 405 with `Allow` when the decoded path is a route's, else 404. */
export function notFoundReply(routes: RouteTable, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const allowed = routes.allowed(routedPath(request));
  if (allowed && !allowed.includes(request.method)) {
    return sendDetail(reply, 405, 'Method Not Allowed', { Allow: allowed.filter((m) => m !== 'HEAD' || allowed.includes('GET')).join(', ') });
  }
  return sendDetail(reply, 404, 'Not Found');
}
