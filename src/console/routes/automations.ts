/**
 * Automations and campaigns in the console, registered once per kind:
 * - `GET /{kind}s`: the list, each with its status, last send and recent results
 *   (src/domain/source-results.ts); `?archived=true`: the archived ones, each with a Restore button;
 *   `GET /{kind}s/new`, `POST /{kind}s/new`: create (303 to its page);
 * - the editor's live preview beside it (docs/console.md "Editor and live preview"): the server renders
 *   the saved template into it, the browser then re-renders it as the marketer types, with the
 *   server's own modules (editor-preview.js); `GET /{kind}s/preview-contact.json?phone=` answers the
 *   data of the contact a phone names (asked once per phone, never while typing);
 * - the editor's "Preview changes" (`intent=preview` on either POST; the preview for browsers without
 *   script): display only, the unsaved template rendered for the editor's phone or sample first name
 *   and variables, nothing written;
 * - `GET /{kind}s/{id}`: editor, preview (`?preview=1&preview_phone=&preview_first_name=&preview_variables=`
 *   re-renders with the pipeline's code, src/domain/source-tools.ts), test-send form;
 *   `POST /{kind}s/{id}`: save (303 `?done=saved`); after a create or a save the page shows the
 *   template's warnings (src/domain/source-tools.ts `templateWarnings`: variables no contact has, a
 *   WhatsApp mapping that does not map), otherwise only the mapping's;
 * - `POST /automations/{id}/active`: activate / deactivate (303);
 * - `POST /campaigns/{id}/frequency-cap` `ignore=true|false`: whether the campaign ignores the
 *   company's frequency cap (303; docs/audience.md);
 * - `POST /{kind}s/{id}/archive`, `POST /{kind}s/{id}/restore`: archive (hidden from the list, cannot be
 *   sent or triggered) or restore (303 to its page; src/domain/automations.ts `archiveSource`);
 * - `POST /{kind}s/{id}/test-send`: a batch of one through the accept step, 303 to its Sends page
 *   (an archived one: 404).
 * Forms become templates through src/console/template-form.ts (line endings LF, then the operator API's
 * checks, `checkTemplate`), the module the browser runs too: each problem is shown beside its field
 * with the input kept (422) and nothing is written. Another company's id is 404.
 * A role that may only read these pages (permissions.ts) gets them without the buttons and forms it
 * could not use (`can`), and `GET /{kind}s/new` says so instead of showing the editor.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  assertSendable, changeAutomation, changeCampaign, defineAutomation, defineCampaign, findSource, listAutomations, listCampaigns, setAutomationActive,
  setCampaignFrequencyCap, setSourceArchived, type SourceKind, type SourceRow,
} from '../../domain/automations.ts';
import { sourceResults } from '../../domain/source-results.ts';
import { previewData, previewSource, templateWarnings, testSendSource, type PreviewInput, type PreviewResult } from '../../domain/source-tools.ts';
import type { Template } from '../../domain/templates.ts';
import { whatsappMappingProblems } from '../../domain/whatsapp-templates.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, parseId, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { readOnlyNote } from '../views/format.ts';
import { html } from '../views/html.ts';
import { EMPTY_FORM, editorForm, formOf, kindTitle, sourcesPath, sourcesView, sourceView, type FieldErrors, type PreviewModel, type SourceForm } from '../views/automations.ts';
import { formTemplate, readSourceForm, templateOfForm } from '../template-form.ts';
import { editorCatalogue } from './whatsapp-templates.ts';

/** The editor's fields of a parsed form body (src/console/template-form.ts, as the browser reads them). */
export function sourceForm(body: unknown): SourceForm {
  return readSourceForm((name) => {
    const v = (body as Record<string, unknown> | undefined)?.[name];
    return typeof v === 'string' ? v : undefined;
  });
}

export { formTemplate };

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

/** Sample variables typed as a JSON object: the object, null when empty, or undefined when not an object. */
function sampleVariables(text: string): Record<string, unknown> | null | undefined {
  if (text.trim() === '') return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The editor's preview: `template` rendered by the pipeline's code for the form's phone, or its sample
 * first name and variables; nothing is written. Resolves to the result, or to errors of those fields.
 */
async function previewUnsaved(db: AppDeps['database']['db'], base: SourceRow, template: Template, form: SourceForm): Promise<{ result?: PreviewResult; errors: FieldErrors }> {
  const variables = sampleVariables(form.editor_preview_variables ?? '');
  if (variables === undefined) return { errors: { editor_preview_variables: 'Enter a JSON object, e.g. {"city": "Berlin"}.' } };
  const input: PreviewInput = { phone: form.editor_preview_phone ?? '', first_name: form.editor_preview_first_name || null, variables };
  try {
    return { result: await previewSource(db, { ...base, template }, input), errors: {} };
  } catch (err) {
    if (!(err instanceof DomainError && err.status === 422)) throw err;
    return { errors: { editor_preview_phone: 'Not a phone number.' } };
  }
}

const NOTICES: Record<string, string> = {
  created: 'Created.', saved: 'Saved.', activated: 'Activated: it can be triggered now.', deactivated: 'Deactivated: triggers are refused.',
  cap_ignored: 'This campaign now ignores the frequency cap.', cap_applies: 'The frequency cap applies to this campaign again.',
  archived: 'Archived: it is hidden from the list and cannot be sent or triggered.', restored: 'Restored: it is listed and can be used again.',
};

/** Registers the pages of the module comment for `kind` (signed-in scope). */
export function registerSourcePages(scope: FastifyInstance, deps: AppDeps, kind: SourceKind): void {
  const db = deps.database.db;
  const base = `/${kind}s`;
  const title = kindTitle(kind);
  const crumbs = (extra?: string): [string, string?][] => extra ? [[title, sourcesPath(kind)], [extra]] : [[title]];
  const actor = (request: FastifyRequest) => consoleActor(sessionOf(request));
  /** Whether the request's role may change this kind (create, save, activate, send, test-send). */
  const canEdit = (request: FastifyRequest) => can(request, 'POST', `${sourcesPath(kind)}/new`);

  scope.get<{ Querystring: Record<string, string | undefined> }>(base, async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const archived = request.query.archived === 'true';
    const rows = kind === 'automation' ? await listAutomations(db, companyId, { archived }) : await listCampaigns(db, companyId, { archived });
    const results = await sourceResults(db, companyId, rows, deps.clock.now());
    return sendPage(request, reply, 200, {
      title: archived ? `Archived ${kind}s` : title, section: `${kind}s`, crumbs: archived ? crumbs('Archived') : crumbs(),
      body: (csrf) => sourcesView(kind, rows, canEdit(request), { results, archived, csrf }),
    });
  });

  /**
   * The editor's preview when the page has none yet: the form's template (a 422 page keeps the input)
   * rendered for the form's preview data, or what keeps it from being shown; the saved template with
   * sample data when there is no form.
   */
  async function initialPreview(draft: SourceRow, form: SourceForm | undefined): Promise<{ result?: PreviewResult; problem?: string }> {
    if (!form) return { result: await previewSource(db, draft, {}) };
    const t = templateOfForm(form);
    if (!t.template) return { problem: form.body === '' ? undefined : Object.values(t.errors)[0] };
    const p = await previewUnsaved(db, draft, t.template, form);
    return { result: p.result };
  }

  async function showNew(request: FastifyRequest, reply: FastifyReply, status: number, form: SourceForm, errors: FieldErrors, preview?: PreviewResult) {
    const session = sessionOf(request);
    const catalogue = await editorCatalogue(db, session.company_id);
    const draft: SourceRow = { kind, id: 0, company_id: session.company_id, name: form.name, template: { header: { type: 'none' }, body: '', buttons: [] }, expire_after: null, created_at: new Date(0), archived_at: null };
    const shown = preview ? { result: preview } : await initialPreview(draft, form);
    return sendPage(request, reply, status, {
      title: `New ${kind}`, section: `${kind}s`, crumbs: crumbs(`New ${kind}`),
      body: (csrf) => canEdit(request)
        ? html`<h1>New ${kind}</h1>
${editorForm(kind, csrf, form, errors, undefined, shown.result, true, catalogue, shown.problem)}`
        : html`<h1>New ${kind}</h1>
${readOnlyNote(`${kind}s`)}
<p><a href="${sourcesPath(kind)}">Back to the ${kind}s</a></p>`,
    });
  }

  scope.get(`${base}/new`, async (request, reply) => showNew(request, reply, 200, EMPTY_FORM, {}));

  // The live preview's contact (docs/console.md "Editor and live preview"): the data the pipeline
  // would render with for this phone. JSON, never cached; 422 when the phone is not a number.
  scope.get<{ Querystring: Record<string, string | undefined> }>(`${base}/preview-contact.json`, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const data = await previewData(db, sessionOf(request).company_id, { phone: String(request.query.phone ?? '') });
      return reply.code(200).send(data);
    } catch (err) {
      if (!(err instanceof DomainError && err.status === 422)) throw err;
      return reply.code(422).send({ error: 'Not a phone number.' });
    }
  });

  scope.post(`${base}/new`, async (request, reply) => {
    const session = sessionOf(request);
    const form = sourceForm(request.body);
    const { template, errors } = formTemplate(kind, form);
    if (!template) return showNew(request, reply, 422, form, errors);
    if (field(request.body, 'intent') === 'preview') {
      const draft: SourceRow = { kind, id: 0, company_id: session.company_id, name: form.name, template, expire_after: null, created_at: new Date(0), archived_at: null };
      const p = await previewUnsaved(db, draft, template, form);
      return showNew(request, reply, p.result ? 200 : 422, form, p.errors, p.result);
    }
    const unmapped = await mappingErrors(db, session.company_id, template);
    if (Object.keys(unmapped).length) return showNew(request, reply, 422, form, unmapped);
    const id = kind === 'automation'
      ? (await defineAutomation(deps, actor(request), session.company_id, { name: form.name.trim(), type: form.type.trim(), active: false, template })).automation_id
      : (await defineCampaign(deps, actor(request), session.company_id, { name: form.name.trim(), template })).campaign_id;
    return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${id}?done=created`, 303);
  });

  async function showSource(request: FastifyRequest, reply: FastifyReply, status: number, source: SourceRow, o: {
    form?: SourceForm; errors?: FieldErrors; flash?: string; testPhone?: string; preview?: PreviewModel; editorPreview?: PreviewResult;
    warnings?: string[];
  }) {
    const catalogue = await editorCatalogue(db, source.company_id);
    const shown = o.editorPreview ? { result: o.editorPreview } : await initialPreview(source, o.form);
    return sendPage(request, reply, status, {
      title: source.name, section: `${kind}s`, crumbs: crumbs(source.name), flash: o.flash,
      body: (csrf) => sourceView({
        kind, csrf, source, form: o.form ?? formOf(source), errors: o.errors ?? {},
        preview: o.preview ?? { phone: '', first_name: '', variables: '' }, testPhone: o.testPhone ?? '', editorPreview: shown.result,
        editorProblem: shown.problem, canEdit: canEdit(request), catalogue, warnings: o.warnings,
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
    // After a create or a save, every warning of the template; otherwise only a mapping that no longer
    // maps (a WhatsApp template paused or removed since), which would fail every message.
    const justSaved = q.done === 'created' || q.done === 'saved';
    const warnings = await templateWarnings(db, source.company_id, source.template, { variables: justSaved });
    return showSource(request, reply, Object.keys(errors).length ? 422 : 200, source, { flash: NOTICES[String(q.done ?? '')], preview, errors, warnings });
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
      await changeAutomation(deps, actor(request), source.id, { name: form.name.trim(), type: form.type.trim(), template });
    } else {
      await changeCampaign(deps, actor(request), source.id, { name: form.name.trim(), template });
    }
    return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=saved`, 303);
  });

  if (kind === 'automation') {
    scope.post<{ Params: { id: string } }>(`${base}/:id/active`, async (request, reply) => {
      const active = field(request.body, 'active') === 'true';
      const automation = await setAutomationActive(deps, actor(request), parseId(request.params.id), active);
      return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${automation.automation_id}?done=${active ? 'activated' : 'deactivated'}`, 303);
    });
  }

  if (kind === 'campaign') {
    // Whether the campaign ignores the company's frequency cap (docs/audience.md "Frequency caps").
    scope.post<{ Params: { id: string } }>(`${base}/:id/frequency-cap`, async (request, reply) => {
      const ignore = field(request.body, 'ignore') === 'true';
      const source = await setCampaignFrequencyCap(deps, actor(request), parseId(request.params.id), ignore);
      return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=${ignore ? 'cap_ignored' : 'cap_applies'}`, 303);
    });
  }

  for (const action of ['archive', 'restore'] as const) {
    scope.post<{ Params: { id: string } }>(`${base}/:id/${action}`, async (request, reply) => {
      const source = await setSourceArchived(deps, actor(request), kind, parseId(request.params.id), action === 'archive');
      return reply.header('cache-control', 'no-store').redirect(`${sourcesPath(kind)}/${source.id}?done=${action === 'archive' ? 'archived' : 'restored'}`, 303);
    });
  }

  scope.post<{ Params: { id: string } }>(`${base}/:id/test-send`, async (request, reply) => {
    const session = sessionOf(request);
    const source = await findSource(db, kind, parseId(request.params.id), session.company_id);
    assertSendable(source);
    const phone = field(request.body, 'test_phone').trim();
    try {
      if (phone === '') throw new DomainError(422, 'invalid phone number');
      const batchId = await testSendSource(deps, actor(request), kind, source.id, phone);
      return reply.header('cache-control', 'no-store').redirect(`${BASE}/sends/${batchId}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError && err.status === 422)) throw err;
      return showSource(request, reply, 422, source, { errors: { test_phone: 'Enter a valid phone number (E.164, or national for your default country).' }, testPhone: phone });
    }
  });
}
