/**
 * Small fetch-based client of the operator API (`/admin/...`, operator-api.md).
 * Every method sends `Authorization: Bearer <token>` and JSON, and returns the parsed answer.
 * Errors: `ApiError` for any non-2xx answer (status, parsed body), `ConnectionError` when the
 * server cannot be reached or does not answer within `timeoutMs`.
 * Usable on its own, e.g. `new OperatorClient({ baseUrl, token }).createCompany({ name: 'Acme' })`.
 */
import type {
  ApiKeyCreated,
  AuditEntry,
  Automation,
  AutomationCreate,
  AutomationUpdate,
  Batch,
  BatchMessage,
  Campaign,
  CampaignCreate,
  ChannelSettings,
  Company,
  CompanyCreate,
  CompanyUpdate,
  ConnectorSettings,
  ContactInput,
  ContactsResult,
} from './api-types.ts';
import { ApiError, ConnectionError } from './errors.ts';

/** Ids travel in URL paths; the server decides their exact type. */
export type Id = number | string;

/** Options of `OperatorClient`. `timeoutMs` bounds each request (default 120 000 ms). */
export interface ClientOptions {
  baseUrl: string;
  token: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Maximum contacts per PUT /admin/companies/{id}/contacts request (operator-api.md). */
export const MAX_CONTACTS_PER_REQUEST = 10_000;

const seg = (id: Id): string => encodeURIComponent(String(id));

/** Typed operator API client; one method per route of operator-api.md. */
export class OperatorClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#timeoutMs = opts.timeoutMs ?? 120_000;
    this.#fetch = opts.fetch ?? fetch;
  }

  /**
   * Send one request; `path` starts with `/admin`. Returns the parsed JSON body, or
   * `undefined` for an empty answer (204). Throws `ApiError` / `ConnectionError`.
   */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.#fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw new ConnectionError(this.baseUrl, errorCode(err), err);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new ConnectionError(this.baseUrl, errorCode(err), err);
    }
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!res.ok) throw new ApiError(res.status, method, path, parsed);
    return parsed as T;
  }

  /** POST /admin/companies → 201 the company. */
  createCompany(body: CompanyCreate): Promise<Company> {
    return this.request('POST', '/admin/companies', body);
  }

  /** PATCH /admin/companies/{company_id} → 200 the company. */
  updateCompany(companyId: Id, body: CompanyUpdate): Promise<Company> {
    return this.request('PATCH', `/admin/companies/${seg(companyId)}`, body);
  }

  /** POST /admin/companies/{company_id}/api-keys → 201 `{key_id, api_key, label}`. */
  createApiKey(companyId: Id, body: { label?: string } = {}): Promise<ApiKeyCreated> {
    return this.request('POST', `/admin/companies/${seg(companyId)}/api-keys`, body);
  }

  /** DELETE /admin/api-keys/{key_id} → 204. */
  async revokeApiKey(keyId: Id): Promise<void> {
    await this.request('DELETE', `/admin/api-keys/${seg(keyId)}`);
  }

  /** PUT /admin/companies/{company_id}/contacts with at most 10 000 contacts → `{created, updated, invalid}`. */
  putContacts(companyId: Id, contacts: ContactInput[]): Promise<ContactsResult> {
    if (contacts.length > MAX_CONTACTS_PER_REQUEST) {
      throw new RangeError(`at most ${MAX_CONTACTS_PER_REQUEST} contacts per request, got ${contacts.length}`);
    }
    return this.request('PUT', `/admin/companies/${seg(companyId)}/contacts`, { contacts });
  }

  /** POST /admin/companies/{company_id}/automations → 201 `{automation_id, ...}`. */
  createAutomation(companyId: Id, body: AutomationCreate): Promise<Automation> {
    return this.request('POST', `/admin/companies/${seg(companyId)}/automations`, body);
  }

  /** PATCH /admin/automations/{automation_id} → 200 (the automation, if the server returns it). */
  updateAutomation(automationId: Id, body: AutomationUpdate): Promise<Automation | undefined> {
    return this.request('PATCH', `/admin/automations/${seg(automationId)}`, body);
  }

  /** POST /admin/companies/{company_id}/campaigns → 201 `{campaign_id, ...}`. */
  createCampaign(companyId: Id, body: CampaignCreate): Promise<Campaign> {
    return this.request('POST', `/admin/companies/${seg(companyId)}/campaigns`, body);
  }

  /** PUT /admin/companies/{company_id}/connector → 200. */
  setConnector(companyId: Id, body: ConnectorSettings): Promise<Record<string, unknown> | undefined> {
    return this.request('PUT', `/admin/companies/${seg(companyId)}/connector`, body);
  }

  /** PUT /admin/companies/{company_id}/channel → 200 (secrets are never echoed). */
  setChannel(companyId: Id, body: ChannelSettings): Promise<Record<string, unknown> | undefined> {
    return this.request('PUT', `/admin/companies/${seg(companyId)}/channel`, body);
  }

  /** GET /admin/batches/{batch_id} → the batch with its counts. */
  getBatch(batchId: Id): Promise<Batch> {
    return this.request('GET', `/admin/batches/${seg(batchId)}`);
  }

  /** GET /admin/batches/{batch_id}/messages → the batch's messages. */
  async getBatchMessages(batchId: Id): Promise<BatchMessage[]> {
    const res = await this.request<{ messages: BatchMessage[] }>('GET', `/admin/batches/${seg(batchId)}/messages`);
    return res?.messages ?? [];
  }

  /** GET /admin/audit[?company_id=&limit=] → audit entries, newest first as the server orders them. */
  async listAudit(query: { companyId?: Id; limit?: number } = {}): Promise<AuditEntry[]> {
    const qs = new URLSearchParams();
    if (query.companyId !== undefined) qs.set('company_id', String(query.companyId));
    if (query.limit !== undefined) qs.set('limit', String(query.limit));
    const suffix = qs.size > 0 ? `?${qs}` : '';
    const res = await this.request<{ entries: AuditEntry[] }>('GET', `/admin/audit${suffix}`);
    return res?.entries ?? [];
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
