/**
 * WhatsApp templates in the console (docs/whatsapp.md "In the console"; views/whatsapp-templates.ts):
 *
 * - `GET /whatsapp/templates`: the company's catalogue as last synced, the Sync now and submit forms
 *   (for roles that may change it), or, when the channel is not WhatsApp or has no waba_id, why not;
 * - `POST /whatsapp/templates/sync`: the operator API's sync (src/domain/whatsapp-templates.ts
 *   `syncTemplates`), 303 back to the page; Meta's refusal is the page again with Meta's error in
 *   words (502) and the catalogue unchanged; a channel without a catalogue is 409 with the reason;
 * - `POST /whatsapp/templates`: the submit form (name, language, category, body with `{{1}}`
 *   placeholders and their sample values, optional text header, optional URL button) checked by
 *   Meta's rules beside each field (422, input kept, nothing sent), built into Meta's components and
 *   handed to the operator API's `submitTemplate` (303 back to the page; 409 / 502 as for the sync).
 *
 * Roles (permissions.ts, `/console/whatsapp/*`): every role may look; owners and marketers may sync
 * and submit. The sync and the submit are domain commands (`syncCatalogue`, `submitCatalogueTemplate`)
 * that write their own audit entries as `console:<email>`; Meta is called through AppDeps.catalogue
 * (built once by src/service.ts over the one outbound client).
 *
 * {@link editorCatalogue} is what the automation and campaign editor shows in its template select.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.ts';
import { companyChannel } from '../../db/channels.ts';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  listCatalogue, submitCatalogueTemplate, syncCatalogue, TemplateDataError, type StoredTemplate,
} from '../../domain/whatsapp-templates.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, sendPage, sessionOf } from '../context.ts';
import {
  channelProblem, EMPTY_SUBMIT, TEMPLATES_PATH, templatesView, type CatalogueState, type SubmitErrors, type SubmitForm,
} from '../views/whatsapp-templates.ts';

/** Whether the company's channel can have a catalogue (see {@link CatalogueState}). */
export async function catalogueState(db: Db, companyId: number): Promise<CatalogueState> {
  const channel = await companyChannel(db, companyId);
  const provider = String(channel?.provider ?? 'outbox');
  if (provider !== 'whatsapp') return { state: 'not_whatsapp', provider };
  return typeof channel?.waba_id === 'string' && channel.waba_id !== '' ? { state: 'ready' } : { state: 'no_waba' };
}

/**
 * The catalogue the automation and campaign editor picks from: the company's templates (all of them;
 * the editor offers the approved ones), or undefined when the channel is not WhatsApp (the editor
 * then keeps its free-text mapping fields).
 */
export async function editorCatalogue(db: Db, companyId: number): Promise<StoredTemplate[] | undefined> {
  const channel = await companyChannel(db, companyId);
  if (channel?.provider !== 'whatsapp') return undefined;
  return listCatalogue(db, companyId);
}

const SUBMIT_FIELDS: (keyof SubmitForm)[] = ['name', 'language', 'category', 'header_text', 'header_example', 'body', 'body_examples', 'button_text', 'button_url', 'button_example'];

const len = (s: string) => [...s].length;
/** The `{{...}}` placeholders of a text, as written (`1`, `name`, ...). */
const placeholders = (text: string) => [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]);

/**
 * The submit form checked by Meta's rules, built into Meta's components (HEADER TEXT, BODY, BUTTONS
 * with one URL button; `example` values where there are placeholders); problems by field, none when valid.
 */
export function submission(f: SubmitForm): { template?: { name: string; language: string; category: string; components: Record<string, unknown>[] }; errors: SubmitErrors } {
  const errors: SubmitErrors = {};
  const name = f.name.trim(), language = f.language.trim(), category = f.category.trim();
  if (!/^[a-z0-9_]{1,512}$/.test(name)) errors.name = 'Use 1 to 512 lower-case letters, digits and underscores.';
  if (!/^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$/.test(language)) errors.language = 'Enter a language code such as en_US or de.';
  if (!['MARKETING', 'UTILITY', 'AUTHENTICATION'].includes(category)) errors.category = 'Choose utility, marketing or authentication.';
  const components: Record<string, unknown>[] = [];

  const header = f.header_text.trim();
  if (header !== '') {
    const ph = placeholders(header);
    if (len(header) > 60) errors.header_text = 'At most 60 characters.';
    else if (ph.length > 1 || (ph.length === 1 && ph[0] !== '1')) errors.header_text = 'A header may have one placeholder, written {{1}}.';
    else if (ph.length === 1 && f.header_example.trim() === '') errors.header_example = 'Meta wants a sample value for the header\'s {{1}}.';
    components.push({ type: 'HEADER', format: 'TEXT', text: header, ...(ph.length === 1 ? { example: { header_text: [f.header_example.trim()] } } : {}) });
  }

  const body = f.body.trim();
  const numbers = placeholders(body);
  const distinct = [...new Set(numbers)];
  const examples = f.body_examples.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  if (body === '' || len(body) > 1024) errors.body = 'Enter a body of 1 to 1024 characters.';
  else if (distinct.some((p) => !/^[1-9][0-9]*$/.test(p))) errors.body = 'Write placeholders as numbers: {{1}}, {{2}}, …';
  else if (distinct.map(Number).sort((a, b) => a - b).some((n, i) => n !== i + 1)) errors.body = `Number the placeholders from {{1}} without gaps (found ${distinct.map((p) => `{{${p}}}`).join(', ')}).`;
  else if (distinct.length > 0 && examples.length !== distinct.length) {
    errors.body_examples = `Give ${distinct.length} sample value${distinct.length === 1 ? '' : 's'}, one per line (Meta reviews the template with them); you gave ${examples.length}.`;
  }
  components.push({ type: 'BODY', text: body, ...(distinct.length ? { example: { body_text: [examples] } } : {}) });

  const text = f.button_text.trim(), url = f.button_url.trim();
  if (text !== '' || url !== '') {
    const ph = placeholders(url);
    if (text === '' || len(text) > 25) errors.button_text = 'A button needs a text of 1 to 25 characters.';
    if (!/^https?:\/\/[^\s/]+\S*$/.test(url) || len(url) > 2000) errors.button_url = 'Enter an http(s) URL.';
    else if (ph.length > 1 || (ph.length === 1 && !/\{\{1\}\}$/.test(url))) errors.button_url = 'A URL may have one placeholder, {{1}}, at its end.';
    else if (ph.length === 1 && !/^https?:\/\/\S+$/.test(f.button_example.trim())) errors.button_example = 'Meta wants a sample URL (the whole URL with a value for {{1}}).';
    components.push({ type: 'BUTTONS', buttons: [{ type: 'URL', text, url, ...(ph.length === 1 ? { example: [f.button_example.trim()] } : {}) }] });
  }
  if (Object.keys(errors).length) return { errors };
  return { template: { name, language, category, components }, errors };
}

const NOTICES: Record<string, string> = {
  synced: 'Synced with Meta: the catalogue below is Meta\'s list as of now.',
  submitted: 'Submitted to Meta for review: the template is listed below; Meta\'s decision arrives by webhook or with the next sync.',
};

/** Registers the pages of the module comment (signed-in scope). */
export function registerWhatsappTemplatePages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const catalogue = deps.catalogue;
  const path = '/whatsapp/templates';
  const canEdit = (request: FastifyRequest) => can(request, 'POST', TEMPLATES_PATH);

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, o: { flash?: string; problem?: string; submit?: SubmitForm; submitErrors?: SubmitErrors } = {}) {
    const companyId = sessionOf(request).company_id;
    const channel = await catalogueState(db, companyId);
    const templates = await listCatalogue(db, companyId);
    return sendPage(request, reply, status, {
      title: 'WhatsApp templates', section: 'templates', crumbs: [['WhatsApp templates']], flash: o.flash,
      body: (csrf) => templatesView({
        csrf, channel, templates, canEdit: canEdit(request), problem: o.problem, submit: o.submit ?? EMPTY_SUBMIT, submitErrors: o.submitErrors ?? {},
      }),
    });
  }

  /** The page again for a refused sync or submit: 409 (no catalogue for the channel) or 502 (Meta), in words. */
  async function refused(request: FastifyRequest, reply: FastifyReply, err: DomainError, what: string, form?: SubmitForm) {
    const channel = await catalogueState(db, sessionOf(request).company_id);
    const problem = err.status === 502
      ? `Meta refused the ${what}: ${err.detail}. Nothing changed here: the catalogue below is as it was.`
      : channelProblem(channel) ?? `The ${what} is not possible: ${err.detail.replace(/\s*\(PUT \/admin[^)]*\)/, '')}. Ask your operator to set the WhatsApp channel again.`;
    return show(request, reply, err.status, { problem, submit: form });
  }

  scope.get<{ Querystring: { done?: string } }>(path, async (request, reply) => show(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post(`${path}/sync`, async (request, reply) => {
    const session = sessionOf(request);
    try {
      await syncCatalogue(db, catalogue, consoleActor(session), session.company_id);
    } catch (err) {
      if (err instanceof DomainError && (err.status === 409 || err.status === 502)) return refused(request, reply, err, 'sync');
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(`${TEMPLATES_PATH}?done=synced`, 303);
  });

  scope.post(path, async (request, reply) => {
    const session = sessionOf(request);
    const form = {} as SubmitForm;
    for (const name of SUBMIT_FIELDS) form[name] = field(request.body, name);
    const { template, errors } = submission(form);
    if (!template) return show(request, reply, 422, { submit: form, submitErrors: errors });
    try {
      await submitCatalogueTemplate(db, catalogue, consoleActor(session), session.company_id, template);
    } catch (err) {
      if (err instanceof DomainError && (err.status === 409 || err.status === 502)) return refused(request, reply, err, 'submission', form);
      if (err instanceof TemplateDataError) return show(request, reply, 422, { submit: form, submitErrors: { body: `The template cannot be built: ${err.message}.` } });
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(`${TEMPLATES_PATH}?done=submitted`, 303);
  });
}
