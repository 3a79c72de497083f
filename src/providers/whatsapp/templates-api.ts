/**
 * A client of Meta's message-template endpoints (docs/whatsapp.md "Template catalogue"):
 *
 * - `list`: `GET {api_base_url}/{waba_id}/message_templates?limit=100` with `Authorization: Bearer
 *   <access token>`, following `paging.next` until absent; resolves to every entry of every page's
 *   `data`, as Meta sent them (the caller validates them).
 * - `submit`: `POST {api_base_url}/{waba_id}/message_templates` `{name, language, category,
 *   components}`; resolves to Meta's answer (`{id, status, category}`).
 *
 * Requests go through the service's one outbound client (delivery/client.ts, use `templates`):
 * network-guarded (private addresses refused at connect time), each bounded by DELIVERY_TIMEOUT
 * (connect to last byte), each answer read at most TEMPLATES_RESPONSE_CAP bytes (4 MiB; a larger one
 * is refused without reading on). A `paging.next` outside the channel's API origin is not followed
 * (the access token stays with Meta). Any failure rejects with a {@link GraphApiError} whose message
 * names Meta's error and never the access token.
 *
 * It implements the catalogue's port (src/domain/whatsapp-templates.ts `TemplatesApi`).
 */
import type { DeliveryClient } from '../../delivery/client.ts';
import { TEMPLATES_RESPONSE_CAP } from '../../delivery/exchange.ts';
import type { GraphConnection, TemplatesApi } from '../../domain/whatsapp-templates.ts';

export type { GraphConnection, TemplatesApi } from '../../domain/whatsapp-templates.ts';

/** Meta refused, was unreachable, or answered something that is not Meta's shape. */
export class GraphApiError extends Error {
  /** The HTTP status of Meta's answer (0 when there was none). */
  readonly status: number;
  /** Meta's error code (`error.code`), when it gave one. */
  readonly code: number | undefined;
  constructor(message: string, status: number, code?: number) {
    super(message);
    this.name = 'GraphApiError';
    this.status = status;
    this.code = code;
  }
}

/** Most pages one `list` follows (100 templates each): beyond that Meta's answer is not believed. */
export const MAX_TEMPLATE_PAGES = 200;

/** `(#code) message` of a Graph API error body, or the HTTP status alone. */
function metaError(status: number, text: string): GraphApiError {
  try {
    const err = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown; error_user_msg?: unknown } }).error;
    if (err && typeof err === 'object') {
      const code = typeof err.code === 'number' ? err.code : undefined;
      const message = [err.message, err.error_user_msg].filter((m) => typeof m === 'string' && m).join(': ').slice(0, 500);
      return new GraphApiError(`Meta answered HTTP ${status}${code !== undefined ? `, error ${code}` : ''}${message ? `: ${message}` : ''}`, status, code);
    }
  } catch {
    // not JSON: the status alone
  }
  return new GraphApiError(`Meta answered HTTP ${status}`, status);
}

/** Creates the template endpoints' client over the service's outbound client (see the module comment). */
export function createTemplatesApi(opts: { client: DeliveryClient }): TemplatesApi {
  const { client } = opts;

  async function call(url: string, conn: GraphConnection, method: 'GET' | 'POST', body?: unknown): Promise<unknown> {
    const x = await client.request('templates', {
      method, url, cap: TEMPLATES_RESPONSE_CAP,
      headers: { authorization: `Bearer ${conn.accessToken}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!x.answered) {
      if (x.statusCode !== null) throw new GraphApiError(`Meta answered HTTP ${x.statusCode} with a body larger than ${TEMPLATES_RESPONSE_CAP} bytes`, x.statusCode);
      throw new GraphApiError(`Meta could not be reached: ${x.failure.error}`, 0);
    }
    const status = x.statusCode;
    const text = x.body.toString('utf8');
    if (status < 200 || status >= 300) throw metaError(status, text);
    try {
      return JSON.parse(text);
    } catch {
      throw new GraphApiError(`Meta answered HTTP ${status} with a body that is not JSON`, status);
    }
  }

  const base = (conn: GraphConnection) => `${conn.apiBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(conn.wabaId)}/message_templates`;

  return {
    async list(conn) {
      const origin = new URL(conn.apiBaseUrl).origin;
      const out: unknown[] = [];
      let url: string | undefined = `${base(conn)}?limit=100`;
      for (let page = 0; url !== undefined; page++) {
        if (page >= MAX_TEMPLATE_PAGES) throw new GraphApiError(`Meta's template list did not end after ${MAX_TEMPLATE_PAGES} pages`, 200);
        const answer = await call(url, conn, 'GET') as { data?: unknown; paging?: { next?: unknown } } | null;
        if (!answer || typeof answer !== 'object' || !Array.isArray(answer.data)) {
          throw new GraphApiError('Meta answered a template list without a `data` array', 200);
        }
        out.push(...answer.data);
        const next = answer.paging && typeof answer.paging === 'object' ? answer.paging.next : undefined;
        if (next === undefined || next === null) break;
        let parsed: URL | undefined;
        try { parsed = typeof next === 'string' ? new URL(next) : undefined; } catch { parsed = undefined; }
        if (!parsed || parsed.origin !== origin) throw new GraphApiError('Meta answered a `paging.next` that is not a URL of the channel\'s API base', 200);
        url = parsed.href;
      }
      return out;
    },
    async submit(conn, template) {
      const answer = await call(base(conn), conn, 'POST', template);
      if (!answer || typeof answer !== 'object' || Array.isArray(answer)) throw new GraphApiError('Meta answered a submitted template with something that is not an object', 200);
      return answer as Record<string, unknown>;
    },
  };
}
