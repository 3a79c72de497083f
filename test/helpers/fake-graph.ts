/**
 * A fake WhatsApp Cloud (Graph) API for tests, on node:http at 127.0.0.1 (docs/decisions.md#9-whatsapp-webhooks-in).
 *
 * - Accepts `POST /<version>/<phone_number_id>/messages` (template messages, any body) and answers as
 *   Meta does: `{"messaging_product":"whatsapp","contacts":[{"input","wa_id"}],"messages":[{"id":"wamid.…"}]}`
 *   with a fresh `wamid` per request, or whatever `script` answers (errors, hangs).
 * - Records every request (`requests`) and every wamid it handed out (`sent`: wamid → request);
 *   each request has its arrival time `at`, and `maxPerWindow` gives the most requests per phone
 *   number id in any sliding 1-s window (the throughput checks).
 * - Posts webhooks to the service the way Meta does: `postStatuses` / `postInbound` / `postPayload`
 *   build Meta's exact payload (`object: "whatsapp_business_account"`, `entry[].changes[].value` with
 *   `messaging_product`, `metadata {display_phone_number, phone_number_id}`, `statuses[]` / `messages[]`
 *   and `contacts[]`) and sign the raw body: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret)>`.
 *
 * - Keeps message templates per WABA id (`templates`), as Meta's template endpoints do:
 *   `GET /<version>/<waba_id>/message_templates?limit=N[&after=cursor]` answers
 *   `{"data":[{id,name,language,status,category,quality_score:{score},rejected_reason,components}],
 *   "paging":{"cursors":{before,after},"next":"<full url>"}}` (`next` only while more remain) and
 *   `POST /<version>/<waba_id>/message_templates` `{name, language, category, components}` stores a
 *   PENDING template and answers `{id, status:"PENDING", category}`. Both want
 *   `Authorization: Bearer <graph.accessToken>` (`GRAPH_TOKEN` unless changed); another token is
 *   Meta's 190 error. `script` is asked first for these requests too (`kind: 'templates'`), so a test
 *   makes the endpoint fail with e.g. `graph.script = (r) => r.kind === 'templates' ? graphError(500, 2, '…') : undefined`.
 *
 * Usage: `const graph = await startFakeGraph(); channel api_base_url = graph.baseUrl; … graph.close()`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake Graph API received. */
export interface GraphRequest {
  method: string;
  path: string;
  /** The phone_number_id of the path (`/v21.0/<id>/messages`). */
  phoneNumberId: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The wamid answered (when the answer was a success). */
  wamid?: string;
  /** Which endpoint: `messages`, `templates` (`<waba_id>/message_templates`) or anything else. */
  kind: 'messages' | 'templates' | 'other';
  /** The WABA id of a templates request (`/v21.0/<waba_id>/message_templates`). */
  wabaId?: string;
  /** When the request arrived (ms, performance.now() of the process running the fake; headers read). */
  at: number;
}

/** A message template as Meta's template endpoints answer it. */
export interface GraphTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  quality_score?: { score: string; date?: number };
  rejected_reason?: string;
  components: Record<string, unknown>[];
  [k: string]: unknown;
}

/** The access token the fake's template endpoints want unless `graph.accessToken` is changed. */
export const GRAPH_TOKEN = 'EAAG-fake-graph-token-0123456789';

/** What the fake answers one request with: a status and JSON body, or `hang` (never answers). */
export type GraphAnswer = { status: number; body: unknown; headers?: Record<string, string> } | 'hang';

/** A webhook status as Meta sends it (`statuses[]`). `timestamp` is unix seconds as a string. */
export interface WaStatus {
  id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed' | string;
  timestamp: string;
  recipient_id: string;
  errors?: { code: number; title: string; message?: string; error_data?: { details: string } }[];
  [k: string]: unknown;
}

/** An inbound message as Meta sends it (`messages[]`). */
export interface WaMessage {
  from: string;
  id: string;
  timestamp: string;
  type: 'text' | 'button' | 'interactive' | string;
  text?: { body: string };
  button?: { payload: string; text: string };
  interactive?: { type: 'button_reply' | 'list_reply'; button_reply?: { id: string; title: string }; list_reply?: { id: string; title: string; description?: string } };
  [k: string]: unknown;
}

/** The answer of a webhook POST to the service. */
export interface PostResult { status: number; text: string; json: any }

export interface FakeGraph {
  /** `http://127.0.0.1:<port>/v21.0`: the channel's `api_base_url`. */
  baseUrl: string;
  requests: GraphRequest[];
  /** Every wamid answered, with its request. */
  sent: Map<string, GraphRequest>;
  /** Decides each answer; default: success with a new wamid. Set `graph.script = …` in a test. */
  script: (req: GraphRequest, n: number) => GraphAnswer | undefined | Promise<GraphAnswer | undefined>;
  /** Message templates per WABA id (Meta's shape); tests add, change and remove entries freely. */
  templates: Map<string, GraphTemplate[]>;
  /** The bearer token the template endpoints accept (default GRAPH_TOKEN). */
  accessToken: string;
  close(): Promise<void>;
}

let templateIds = 0;

/**
 * A template in Meta's shape: `header` none | `'text'` (one `{{1}}`) | `'text0'` (no placeholder) |
 * `'image'` | `'video'` | `'document'`; `body` placeholders `{{1}}`..`{{n}}`; `buttons`: one URL
 * button per entry, with a `{{1}}` placeholder when true.
 */
export function graphTemplate(name: string, language: string, opts: { status?: string; category?: string; header?: 'text' | 'text0' | 'image' | 'video' | 'document'; body?: number; buttons?: boolean[]; quality?: string; rejected_reason?: string; id?: string } = {}): GraphTemplate {
  const components: Record<string, unknown>[] = [];
  const h = opts.header;
  if (h === 'text' || h === 'text0') components.push({ type: 'HEADER', format: 'TEXT', text: h === 'text' ? 'Hello {{1}}' : 'Hello' });
  else if (h) components.push({ type: 'HEADER', format: h.toUpperCase(), example: { header_handle: ['https://scontent.example/h.png'] } });
  const n = opts.body ?? 0;
  components.push({ type: 'BODY', text: ['Message', ...Array.from({ length: n }, (_, i) => `{{${i + 1}}}`)].join(' ') + '.' });
  if (opts.buttons?.length) {
    components.push({ type: 'BUTTONS', buttons: opts.buttons.map((p, i) => ({ type: 'URL', text: `Link ${i + 1}`, url: `https://shop.example/b${i}/${p ? '{{1}}' : ''}` })) });
  }
  return {
    id: opts.id ?? String(900000000000000 + ++templateIds * 1_000_000 + Math.floor(Math.random() * 1e6)),
    name, language, status: opts.status ?? 'APPROVED', category: opts.category ?? 'UTILITY',
    ...(opts.quality !== undefined ? { quality_score: { score: opts.quality, date: 1767600000 } } : { quality_score: { score: 'UNKNOWN', date: 1767600000 } }),
    ...(opts.rejected_reason !== undefined ? { rejected_reason: opts.rejected_reason } : { rejected_reason: 'NONE' }),
    components,
  };
}

/** Meta's success answer for a message to `to` with id `wamid`. */
export function graphOk(to: string, wamid: string) {
  return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: wamid }] } };
}

/** A Graph API error answer (`{"error":{message,type,code,error_subcode?,fbtrace_id}}`). */
export function graphError(status: number, code: number, message: string) {
  return { status, body: { error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'Afake' } } };
}

/** A new unique wamid in Meta's style (`wamid.` and base64). */
export function newWamid(): string {
  return 'wamid.' + randomBytes(24).toString('base64url');
}

/** Starts the fake Graph API on a free port. */
export async function startFakeGraph(): Promise<FakeGraph> {
  const requests: GraphRequest[] = [];
  const sent = new Map<string, GraphRequest>();
  const counts = new Map<string, number>();
  const graph: FakeGraph = {
    baseUrl: '',
    requests,
    sent,
    script: () => undefined,
    templates: new Map(),
    accessToken: GRAPH_TOKEN,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let body: any;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { body = undefined; }
      const m = /^\/[^/]+\/([^/]+)\/messages$/.exec(req.url ?? '');
      const t = /^\/[^/]+\/([^/?]+)\/message_templates(?:\?.*)?$/.exec(req.url ?? '');
      const r: GraphRequest = { method: req.method ?? '', path: req.url ?? '', phoneNumberId: m?.[1] ?? '', headers: req.headers, body, kind: m ? 'messages' : t ? 'templates' : 'other', ...(t ? { wabaId: t[1] } : {}), at };
      requests.push(r);
      if (t) {
        const a = (await graph.script(r, 0)) ?? templatesAnswer(graph, r, t[1]);
        if (a === 'hang') return;
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
        res.end(JSON.stringify(a.body));
        return;
      }
      const to = String(body?.to ?? '');
      const n = (counts.get(to) ?? 0) + 1;
      counts.set(to, n);
      let a = await graph.script(r, n);
      if (a === 'hang') return;
      if (!a) {
        if (req.method !== 'POST' || !m || !body || typeof body.to !== 'string') a = graphError(400, 100, 'Invalid parameter');
        else a = graphOk(to, newWamid());
      }
      const wamid = (a.body as any)?.messages?.[0]?.id;
      if (a.status < 300 && typeof wamid === 'string') {
        r.wamid = wamid;
        sent.set(wamid, r);
      }
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  graph.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v21.0`;
  return graph;
}

/** What Meta's template endpoints answer (see the module comment). */
function templatesAnswer(graph: FakeGraph, r: GraphRequest, wabaId: string): { status: number; body: unknown; headers?: Record<string, string> } {
  if (r.headers.authorization !== `Bearer ${graph.accessToken}`) {
    return { status: 401, body: { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'Afake' } } };
  }
  const list = graph.templates.get(wabaId) ?? [];
  if (r.method === 'GET') {
    const url = new URL(r.path, 'http://x');
    const limit = Math.max(1, Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, 1000));
    const after = url.searchParams.get('after');
    const start = after ? Number(Buffer.from(after, 'base64url').toString('utf8')) : 0;
    const page = list.slice(start, start + limit);
    const cursor = (i: number) => Buffer.from(String(i), 'utf8').toString('base64url');
    const paging: Record<string, unknown> = { cursors: { before: cursor(start), after: cursor(start + page.length) } };
    if (start + limit < list.length) paging.next = `${graph.baseUrl}/${wabaId}/message_templates?limit=${limit}&after=${cursor(start + limit)}`;
    return { status: 200, body: { data: page, paging } };
  }
  if (r.method === 'POST') {
    const b = r.body;
    if (!b || typeof b.name !== 'string' || typeof b.language !== 'string' || typeof b.category !== 'string' || !Array.isArray(b.components)) {
      return graphError(400, 100, 'Invalid parameter');
    }
    if (list.some((x) => x.name === b.name && x.language === b.language)) {
      return { status: 400, body: { error: { message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2388024, error_user_msg: 'Content in this language already exists', fbtrace_id: 'Afake' } } };
    }
    const created: GraphTemplate = { ...graphTemplate(b.name, b.language, { status: 'PENDING', category: b.category }), components: b.components };
    graph.templates.set(wabaId, [...list, created]);
    return { status: 200, body: { id: created.id, status: 'PENDING', category: b.category } };
  }
  return graphError(400, 100, 'Unsupported request');
}

/** The highest number of `times` (ms) in any window of `windowMs` (a window is [t, t + windowMs)). */
export function maxInWindow(times: number[], windowMs = 1000): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < t.length; j++) {
    while (t[j] - t[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

/** Per phone number id, the highest number of requests that arrived in any sliding 1-s window (`windowMs`). */
export function maxPerWindow(requests: readonly GraphRequest[], windowMs = 1000): Map<string, number> {
  const byNumber = new Map<string, number[]>();
  for (const r of requests) {
    const list = byNumber.get(r.phoneNumberId) ?? [];
    list.push(r.at);
    byNumber.set(r.phoneNumberId, list);
  }
  return new Map([...byNumber].map(([id, times]) => [id, maxInWindow(times, windowMs)]));
}

/** `sha256=<hex HMAC-SHA256 of body with secret>`: Meta's X-Hub-Signature-256 value. */
export function hubSignature(appSecret: string, body: string | Buffer): string {
  return 'sha256=' + createHmac('sha256', appSecret).update(body).digest('hex');
}

/** Unix seconds (as Meta writes them: a decimal string) of a millisecond time. */
export function unixSeconds(ms: number): string {
  return String(Math.floor(ms / 1000));
}

/** One `entry[].changes[].value` for a phone number (`display_phone_number` made up from the id). */
export function changeValue(phoneNumberId: string, fields: { statuses?: WaStatus[]; messages?: WaMessage[]; contacts?: { profile: { name: string }; wa_id: string }[] }) {
  return {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: '15550' + phoneNumberId.slice(-6), phone_number_id: phoneNumberId },
    ...fields,
  };
}

/**
 * The WABA of each phone number whose channel a test helper set (test/helpers/whatsapp.ts), so that
 * {@link webhookPayload} names it in `entry[].id` as Meta does (docs/whatsapp.md: an entry naming a
 * number must name that number's WABA).
 */
const wabaOfNumber = new Map<string, string>();

/** Remembers that `phoneNumberId`'s channel belongs to WABA `wabaId` (null: the channel has none). */
export function rememberWaba(phoneNumberId: string, wabaId: string | null): void {
  if (wabaId) wabaOfNumber.set(phoneNumberId, wabaId);
  else wabaOfNumber.delete(phoneNumberId);
}

/**
 * Meta's whole webhook payload around one or more change values. `entry[].id` is the WABA remembered
 * for the first value's number ({@link rememberWaba}), else `1029384756` (a WABA no channel has), or
 * `wabaId` when given.
 */
export function webhookPayload(values: ReturnType<typeof changeValue>[], wabaId?: string) {
  const id = wabaId ?? wabaOfNumber.get(values[0]?.metadata?.phone_number_id ?? '') ?? '1029384756';
  return {
    object: 'whatsapp_business_account',
    entry: [{ id, changes: values.map((value) => ({ value, field: 'messages' })) }],
  };
}

/**
 * POSTs a raw body to `<serviceUrl>/webhooks/whatsapp`, signed with `appSecret` (pass `signature` to
 * send a given header instead, `null` to send none).
 */
export async function postPayload(serviceUrl: string, appSecret: string, body: string | Buffer | object, opts: { signature?: string | null; contentType?: string } = {}): Promise<PostResult> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  const sig = opts.signature === undefined ? hubSignature(appSecret, raw) : opts.signature;
  if (sig !== null) headers['x-hub-signature-256'] = sig;
  const res = await fetch(serviceUrl + '/webhooks/whatsapp', { method: 'POST', headers, body: raw as BodyInit });
  const text = await res.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, text, json };
}

/** Posts Meta-shaped status webhooks (`statuses[]`) for one phone number, signed. */
export function postStatuses(serviceUrl: string, appSecret: string, phoneNumberId: string, statuses: WaStatus[]): Promise<PostResult> {
  return postPayload(serviceUrl, appSecret, webhookPayload([changeValue(phoneNumberId, { statuses })]));
}

/** Posts Meta-shaped inbound messages (`messages[]` with their `contacts[]`) for one phone number, signed. */
export function postInbound(serviceUrl: string, appSecret: string, phoneNumberId: string, messages: WaMessage[], names: Record<string, string> = {}): Promise<PostResult> {
  const froms = [...new Set(messages.map((m) => m.from))];
  const contacts = froms.map((wa_id) => ({ profile: { name: names[wa_id] ?? 'Customer' }, wa_id }));
  return postPayload(serviceUrl, appSecret, webhookPayload([changeValue(phoneNumberId, { messages, contacts })]));
}

/** A status of a message (`wamid`) to `recipient` at `atMs`; `failed` statuses take `errors`. */
export function waStatus(wamid: string, status: string, recipient: string, atMs: number, errors?: WaStatus['errors']): WaStatus {
  return { id: wamid, status, timestamp: unixSeconds(atMs), recipient_id: recipient, ...(errors ? { errors } : {}),
    ...(status !== 'failed' ? { conversation: { id: 'conv' + wamid.slice(-8), origin: { type: 'marketing' } }, pricing: { billable: true, pricing_model: 'CBP', category: 'marketing' } } : {}) };
}

/** An inbound text message from `from` (digits without +) at `atMs`. */
export function waText(from: string, body: string, atMs: number, id = newWamid()): WaMessage {
  return { from, id, timestamp: unixSeconds(atMs), type: 'text', text: { body } };
}

/** An inbound quick-reply button press. */
export function waButton(from: string, payload: string, text: string, atMs: number, id = newWamid()): WaMessage {
  return { from, id, timestamp: unixSeconds(atMs), type: 'button', button: { payload, text } };
}

/** A random phone_number_id (15 digits) so companies on a shared database never collide. */
export function randomPhoneNumberId(): string {
  return '1' + String(Math.floor(Math.random() * 1e14)).padStart(14, '0');
}
