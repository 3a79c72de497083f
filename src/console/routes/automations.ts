/**
 * Automations and campaigns in the console, registered once per kind:
 * - `GET /{kind}s`: the list; `GET /{kind}s/new`, `POST /{kind}s/new`: create (303 to its page);
 * - the editor's "Preview changes" (`intent=preview` on either POST): display only, the unsaved template
 *   rendered for a phone or sample data, nothing written;
 * - `GET /{kind}s/{id}`: editor, preview (`?preview=1&preview_phone=&preview_first_name=&preview_variables=`
 *   re-renders with the pipeline's code, src/domain/source-tools.ts), test-send form;
 *   `POST /{kind}s/{id}`: save (303 `?done=saved`);
 * - `POST /automations/{id}/active`: activate / deactivate (303);
 * - `POST /campaigns/{id}/frequency-cap` `ignore=true|false`: whether the campaign ignores the
 *   company's frequency cap (303; docs/audience.md);
 * - `POST /{kind}s/{id}/test-send`: a batch of one through the accept step, 303 to its Sends page.
 * Templates are checked on save by the operator API's function (`checkTemplate`): each problem is shown
 * beside its field with the input kept (422) and nothing is written. Another company's id is 404.
 * A role that may only read these pages (permissions.ts) gets them without the buttons and forms it
 * could not use (`can`), and `GET /{kind}s/new` says so instead of showing the editor.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../../domain/audit.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  createAutomation, createCampaign, findSource, listAutomations, listCampaigns, updateAutomation, updateCampaign, type SourceKind, type SourceRow,
} from '../../domain/automations.ts';
import { previewSource, testSend, type PreviewResult } from '../../domain/source-tools.ts';
import { checkTemplate, type Template } from '../../domain/templates.ts';
import { whatsappMappingProblems } from '../../domain/whatsapp-templates.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, parseId, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { readOnlyNote } from '../views/format.ts';
import { html } from '../views/html.ts';
import { EMPTY_FORM, editorForm, formOf, kindTitle, sourcesPath, sourcesView, sourceView, type FieldErrors, type PreviewModel, type SourceForm } from '../views/automations.ts';
import { parseTemplateChoice } from '../views/whatsapp-templates.ts';
import { editorCatalogue } from './whatsapp-templates.ts';

const FIELDS: (keyof SourceForm)[] = ['name', 'type', 'header_type', 'header_text', 'header_url', 'body', 'b1_text', 'b1_url', 'b2_text', 'b2_url', 'wa_name', 'wa_language', 'wa_body_parameters', 'wa_header_parameters', 'editor_preview_phone'];

/** The editor's fields of a parsed form body. */
export function sourceForm(body: unknown): SourceForm {
  const f = {} as SourceForm;
  for (const name of FIELDS) f[name] = field(body, name);
  // A WhatsApp company's editor picks the template in one select (`name|language`).
  if (typeof (body as Record<string, unknown> | undefined)?.wa_template === 'string') {
    const { name, language } = parseTemplateChoice(field(body, 'wa_template'));
    Object.assign(f, { wa_name: name, wa_language: language, wa_body_parameters: '', wa_header_parameters: '' });
  }
  return f;
}

const len = (s: string) => [...s].length;

/**
 * The template of a form, checked by the operator API's rules (lengths of `templateSchema`, then
 * `checkTemplate`); problems by field, none when valid.
 */
export function formTemplate(kind: SourceKind, f: SourceForm): { template?: Template; errors: FieldErrors } {
  const errors: FieldErrors = {};
  if (f.name.trim() === '' || len(f.name) > 255) errors.name = 'Enter a name of 1 to 255 characters.';
  if (kind === 'automation' && (f.type.trim() === '' || len(f.type) > 32)) errors.type = 'Enter a type of 1 to 32 characters (api for operation 4.3).';
  if (f.body === '' || len(f.body) > 4096) errors.body = 'Enter a body of 1 to 4096 characters.';
  let header: Template['header'] = { type: 'none' };
  if (f.header_type === 'text') {
    if (len(f.header_text) > 1024) errors.header_text = 'At most 1024 characters.';
    header = { type: 'text', text: f.header_text };
  } else if (f.header_type === 'image' || f.header_type === 'video') {
    header = { type: f.header_type, url: f.header_url.trim() };
  } else if (f.header_type !== 'none') errors.header_type = 'Choose none, text, image or video.';
  const buttons: Template['buttons'] = [];
  for (const i of [1, 2] as const) {
    const text = f[`b${i}_text`].trim();
    const url = f[`b${i}_url`].trim();
    if (text === '' && url === '') continue;
    if (text === '' || len(text) > 25) errors[`b${i}_text`] = 'A button needs a text of 1 to 25 characters.';
    buttons.push({ type: 'url', text, url });
  }
  let whatsapp: Template['whatsapp'];
  const waName = f.wa_name.trim(), waLang = f.wa_language.trim();
  if (waName || waLang || f.wa_body_parameters.trim() || f.wa_header_parameters.trim()) {
    if (waName === '') errors.wa_name = 'Enter the approved template name (or clear the mapping).';
    if (len(waLang) < 2) errors.wa_language = 'Enter the template language, e.g. en_US.';
    whatsapp = { name: waName, language: waLang };
    const count = (text: string, max: number, key: 'wa_body_parameters' | 'wa_header_parameters') => {
      if (text.trim() === '') return undefined;
      if (!/^[0-9]{1,3}$/.test(text.trim()) || Number(text) > max) { errors[key] = `A whole number from 0 to ${max}.`; return undefined; }
      return Number(text);
    };
    const bp = count(f.wa_body_parameters, 100, 'wa_body_parameters');
    const hp = count(f.wa_header_parameters, 1, 'wa_header_parameters');
    if (bp !== undefined) whatsapp.body_parameters = bp;
    if (hp !== undefined) whatsapp.header_parameters = hp;
  }
  const template: Template = { header, body: f.body, buttons, ...(whatsapp ? { whatsapp } : {}) };
  if (Object.keys(errors).length) return { errors };
  for (const p of checkTemplate(template).problems) {
    const [a, b, c] = p.loc;
    const key: keyof FieldErrors = a === 'body' ? 'body' : a === 'header' ? (b === 'text' ? 'header_text' : 'header_url')
      : a === 'buttons' && b !== undefined && c === 'url' ? (b === '0' ? 'b1_url' : 'b2_url') : 'b1_text';
    errors[key] = errors[key] ? `${errors[key]} ${p.msg}` : capitalise(p.msg) + '.';
  }
  return Object.keys(errors).length ? { errors } : { template, errors };
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Field errors of a template that does not map to an approved WhatsApp template of the company's
 * catalogue (the operator API's check, src/domain/whatsapp-templates.ts); {} when it maps or the
 * channel is not WhatsApp.
 */
async function mappingErrors(db: AppDeps['database']['db'], companyId: number, template: Template): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  for (const p of await whatsappMappingProblems(db, companyId, template)) {
    const [a, b, c] = p.loc;
    const key: keyof FieldErrors = a === 'whatsapp' ? 'wa_name' : a === 'body' ? 'body'
      : a === 'header' ? (b === 'text' ? 'header_text' : 'header_type')
        : a === 'buttons' && b !== undefined ? (b === '1' ? (c === 'url' ? 'b2_url' : 'b2_text') : (c === 'url' ? 'b1_url' : 'b1_text')) : 'wa_name';
    errors[key] = errors[key] ? `${errors[key]} ${capitalise(p.msg)}.` : capitalise(p.msg) + '.';
  }
  return errors;
}

/**
 * "Preview changes": the unsaved template rendered for the editor's phone (or sample data) by the
 * pipeline's code; nothing is written. Resolves to the result, or to an error of the phone field.
 */
async function previewUnsaved(db: AppDeps['database']['db'], base: SourceRow, template: Template, form: SourceForm): Promise<{ result?: PreviewResult; errors: FieldErrors }> {
  try {
    return { result: await previewSource(db, { ...base, template }, { phone: form.editor_preview_phone ?? '' }), errors: {} };
  } catch (err) {
    if (!(err instanceof DomainError && err.status === 422)) throw err;
    return { errors: { editor_preview_phone: 'Not a phone number.' } };
  }
}

const NOTICES: Record<string, string> = {
  created: 'Created.', saved: 'Saved.', activated: 'Activated: it can be triggered now.', deactivated: 'Deactivated: triggers are refused.',
  cap_ignored: 'This campaign now ignores the frequency cap.', cap_applies: 'The frequency cap applies to this campaign again.',
};

/** Registers the pages of the module comment for `kind` (signed-in scope). */
export function registerSourcePages(scope: FastifyInstance, deps: AppDeps, kind: SourceKind): void {
  const db = deps.database.db;
  const base = `/${kind}s`;
  const title = kindTitle(kind);
  const crumbs = (extra?: string): [string, string?][] => extra ? [[title, sourcesPath(kind)], [extra]] : [[title]];
  const actor = (request: FastifyRequest) => `console:${sessionOf(request).email}`;
  /** Whether the request's role may change this kind (create, save, activate, send, test-send). */
  const canEdit = (request: FastifyRequest) => can(request, 'POST', `${sourcesPath(kind)}/new`);

  scope.get(base, async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const rows = kind === 'automation' ? await listAutomations(db, companyId) : await listCampaigns(db, companyId);
    return sendPage(request, reply, 200, { title, section: `${kind}s`, crumbs: crumbs(), body: () => sourcesView(kind, rows, canEdit(request)) });
  });

  async function showNew(request: FastifyRequest, reply: FastifyReply, status: number, form: SourceForm, errors: FieldErrors, preview?: PreviewResult) {
    const catalogue = await editorCatalogue(db, sessionOf(request).company_id);
    return sendPage(request, reply, status, {
      title: `New ${kind}`, section: `${kind}s`, crumbs: crumbs(`New ${kind}`),
      body: (csrf) => canEdit(request)
        ? html`<h1>New ${kind}</h1>
${editorForm(kind, csrf, form, errors, undefined, preview, true, catalogue)}`
        : html`<h1>New ${kind}</h1>
${readOnlyNote(`${kind}s`)}
<p><a href="${sourcesPath(kind)}">Back to the ${kind}s</a></p>`,
    });
  }

  scope.get(`${base}/new`, async (request, reply) => showNew(request, reply, 200, EMPTY_FORM, {}));

  scope.post(`${base}/new`, async (request, reply) => {
    const session = sessionOf(request);
    const form = sourceForm(request.body);
    const { template, errors } = formTemplate(kind, form);
    if (!template) return showNew(request, reply, 422, form, errors);
    if (field(request.body, 'intent') === 'preview') {
      const draft: SourceRow = { kind, id: 0, company_id: session.company_id, name: form.name, template, expire_after: null, created_at: new Date(0) };
      const p = await previewUnsaved(db, draft, template, form);
      return showNew(request, reply, p.result ? 200 : 422, form, p.errors, p.result);
    }
    const unmapped = await mappingErrors(db, session.company_id, template);
    if (Object.keys(unmapped).length) return showNew(request, reply, 422, form, unmapped);
    let id: number;
    if (kind === 'automation') {
      const a = await createAutomation(db, deps.automationLookups, session.company_id, { name: form.name.trim(), type: form.type.trim(), active: false, template });
      id = a.automation_id;
    } else {
      id = (await createCampaign(db, session.company_id, { name: form.name.trim(), template })).campaign_id;
    }
    await recordAudit(db, { actor: actor(request), action: `${kind}.create`, target: `${kind}:${id}`, company_id: session.company_id, details: { name: form.name.trim() } });
    return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${id}?done=created`, 303);
  });

  async function showSource(request: FastifyRequest, reply: FastifyReply, status: number, source: SourceRow, o: {
    form?: SourceForm; errors?: FieldErrors; flash?: string; testPhone?: string; preview?: PreviewModel; editorPreview?: PreviewResult;
  }) {
    const catalogue = await editorCatalogue(db, source.company_id);
    return sendPage(request, reply, status, {
      title: source.name, section: `${kind}s`, crumbs: crumbs(source.name), flash: o.flash,
      body: (csrf) => sourceView({
        kind, csrf, source, form: o.form ?? formOf(source), errors: o.errors ?? {},
        preview: o.preview ?? { phone: '', first_name: '', variables: '' }, testPhone: o.testPhone ?? '', editorPreview: o.editorPreview,
        canEdit: canEdit(request), catalogue,
      }),
    });
  }

  scope.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(`${base}/:id`, async (request, reply) => {
    const source = await findSource(db, kind, parseId(request.params.id), sessionOf(request).company_id);
    const q = request.query;
    const errors: FieldErrors = {};
    let preview: PreviewModel | undefined;
    if (q.preview) {
      preview = { phone: String(q.preview_phone ?? ''), first_name: String(q.preview_first_name ?? ''), variables: String(q.preview_variables ?? '') };
      let variables: Record<string, unknown> | null = null;
      if (preview.variables.trim() !== '') {
        try {
          const parsed: unknown = JSON.parse(preview.variables);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
          variables = parsed as Record<string, unknown>;
        } catch {
          errors.preview_variables = 'Enter a JSON object, e.g. {"city": "Berlin"}.';
        }
      }
      if (!errors.preview_variables) {
        try {
          preview.result = await previewSource(db, source, { phone: preview.phone, first_name: preview.first_name || null, variables });
        } catch (err) {
          if (!(err instanceof DomainError && err.status === 422)) throw err;
          errors.preview_phone = 'Not a phone number.';
        }
      }
    }
    return showSource(request, reply, Object.keys(errors).length ? 422 : 200, source, { flash: NOTICES[String(q.done ?? '')], preview, errors });
  });

  scope.post<{ Params: { id: string } }>(`${base}/:id`, async (request, reply) => {
    const session = sessionOf(request);
    const source = await findSource(db, kind, parseId(request.params.id), session.company_id);
    const form = sourceForm(request.body);
    const { template, errors } = formTemplate(kind, form);
    if (!template) return showSource(request, reply, 422, source, { form, errors });
    if (field(request.body, 'intent') === 'preview') {
      const p = await previewUnsaved(db, source, template, form);
      return showSource(request, reply, p.result ? 200 : 422, source, { form, errors: p.errors, editorPreview: p.result, flash: p.result ? 'Preview of your unsaved changes: save them to keep them.' : undefined });
    }
    const unmapped = await mappingErrors(db, session.company_id, template);
    if (Object.keys(unmapped).length) return showSource(request, reply, 422, source, { form, errors: unmapped });
    if (kind === 'automation') {
      await updateAutomation(db, deps.automationLookups, source.id, { name: form.name.trim(), type: form.type.trim(), template });
    } else {
      await updateCampaign(db, source.id, { name: form.name.trim(), template });
    }
    await recordAudit(db, { actor: actor(request), action: `${kind}.update`, target: `${kind}:${source.id}`, company_id: session.company_id, details: { name: form.name.trim(), template_changed: true } });
    return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=saved`, 303);
  });

  if (kind === 'automation') {
    scope.post<{ Params: { id: string } }>(`${base}/:id/active`, async (request, reply) => {
      const session = sessionOf(request);
      const source = await findSource(db, kind, parseId(request.params.id), session.company_id);
      const active = field(request.body, 'active') === 'true';
      await updateAutomation(db, deps.automationLookups, source.id, { active });
      await recordAudit(db, { actor: actor(request), action: 'automation.update', target: `automation:${source.id}`, company_id: session.company_id, details: { active } });
      return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=${active ? 'activated' : 'deactivated'}`, 303);
    });
  }

  if (kind === 'campaign') {
    // Whether the campaign ignores the company's frequency cap (docs/audience.md "Frequency caps").
    scope.post<{ Params: { id: string } }>(`${base}/:id/frequency-cap`, async (request, reply) => {
      const session = sessionOf(request);
      const source = await findSource(db, kind, parseId(request.params.id), session.company_id);
      const ignore = field(request.body, 'ignore') === 'true';
      await updateCampaign(db, source.id, { ignore_frequency_cap: ignore });
      await recordAudit(db, { actor: actor(request), action: 'campaign.update', target: `campaign:${source.id}`, company_id: session.company_id, details: { ignore_frequency_cap: ignore } });
      return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=${ignore ? 'cap_ignored' : 'cap_applies'}`, 303);
    });
  }

  scope.post<{ Params: { id: string } }>(`${base}/:id/test-send`, async (request, reply) => {
    const session = sessionOf(request);
    const source = await findSource(db, kind, parseId(request.params.id), session.company_id);
    const phone = field(request.body, 'test_phone').trim();
    try {
      if (phone === '') throw new DomainError(422, 'invalid phone number');
      const batchId = await testSend(db, deps.acceptor, source, phone);
      await recordAudit(db, { actor: actor(request), action: `${kind}.test_send`, target: `batch:${batchId}`, company_id: session.company_id, details: { [`${kind}_id`]: source.id } });
      return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${batchId}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError && err.status === 422)) throw err;
      return showSource(request, reply, 422, source, { errors: { test_phone: 'Enter a valid phone number (E.164, or national for your default country).' }, testPhone: phone });
    }
  });
}
