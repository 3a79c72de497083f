/**
 * Automations and campaigns pages (routes/automations.ts): the list, the template
 * editor (header none / text / image / video, Liquid body, up to two URL buttons, the WhatsApp mapping:
 * for a company whose channel is WhatsApp a select of the approved templates of its catalogue with the
 * chosen one's parameters beside it, otherwise name, language and parameter counts typed in),
 * each problem shown beside its field with the input kept, the live preview beside the editor (a phone
 * message bubble, see {@link livePreview}), the template's warnings after a save, the saved template's
 * preview (re-rendered by a GET with the chosen phone or sample data), the test-send form and, for
 * automations, activate / deactivate.
 * A role that may only read (`canEdit` false) sees the template in disabled fields and the GET preview,
 * without the create, save, activate, send and test-send buttons and forms.
 */
import type { SourceKind, SourceRow } from '../../domain/automations.ts';
import { describeEmptyParameter, previewEmptyParameters, type EmptyParameter } from '../../domain/render.ts';
import type { PreviewResult } from '../../domain/source-tools.ts';
import { RESULTS_DAYS, type SourceResults } from '../../domain/source-results.ts';
import type { Template } from '../../domain/templates.ts';
import type { StoredTemplate } from '../../domain/whatsapp-templates.ts';
import { badge, num, percent, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';
import { describeParameters, mappingHelp, statusMeaning, TEMPLATES_PATH, templateChoice } from './whatsapp-templates.ts';
import { templateOfForm } from '../template-form.ts';

/** Path of a kind's list page. */
export const sourcesPath = (kind: SourceKind) => `${BASE}/${kind}s`;
/** Label of a kind, capitalised and plural. */
export const kindTitle = (kind: SourceKind) => (kind === 'automation' ? 'Automations' : 'Campaigns');

/** The editor's fields as text, exactly as the user typed them. */
export interface SourceForm {
  name: string; type: string; header_type: string; header_text: string; header_url: string; body: string;
  b1_text: string; b1_url: string; b2_text: string; b2_url: string;
  wa_name: string; wa_language: string; wa_body_parameters: string; wa_header_parameters: string;
  /** Phone of the editor's preview (not part of the template): a contact's data, or sample data when empty. */
  editor_preview_phone?: string;
  /** Sample first name of the editor's preview (when no contact is used). */
  editor_preview_first_name?: string;
  /** Sample variables of the editor's preview, a JSON object (when no contact is used). */
  editor_preview_variables?: string;
}

/** Problems by field name of SourceForm (and `test_phone`, `preview`). */
export type FieldErrors = Partial<Record<keyof SourceForm | 'test_phone' | 'preview_phone' | 'preview_variables', string>>;

/** The id of the editor's form (the live preview's fields belong to it through their `form` attribute). */
export const EDITOR_FORM_ID = 'template-form';

/** The form of a stored source. */
export function formOf(s: { name: string; type?: string; template: Template }): SourceForm {
  const t = s.template;
  const b = t.buttons ?? [];
  return {
    name: s.name, type: s.type ?? 'api', header_type: t.header.type,
    header_text: t.header.type === 'text' ? t.header.text : '',
    header_url: t.header.type === 'image' || t.header.type === 'video' ? t.header.url : '',
    body: t.body, b1_text: b[0]?.text ?? '', b1_url: b[0]?.url ?? '', b2_text: b[1]?.text ?? '', b2_url: b[1]?.url ?? '',
    wa_name: t.whatsapp?.name ?? '', wa_language: t.whatsapp?.language ?? '',
    wa_body_parameters: t.whatsapp?.body_parameters?.toString() ?? '', wa_header_parameters: t.whatsapp?.header_parameters?.toString() ?? '',
  };
}

/** An empty editor. */
export const EMPTY_FORM: SourceForm = formOf({ name: '', template: { header: { type: 'none' }, body: '', buttons: [] } });

const count = { format: num };
const share = { format: percent };

/** What each status of a list means (the badge's title). */
export const SOURCE_STATUS_MEANING: Record<string, string> = {
  active: 'It can be triggered through the API.',
  inactive: 'Triggers are refused until it is activated.',
  archived: 'Hidden from the list; it cannot be sent or triggered until it is restored.',
  draft: 'Never sent.',
  scheduled: 'Its latest send waits for its scheduled time.',
  sending: 'Its latest send is being delivered.',
  paused: 'Its latest send is paused.',
  sent: 'Its latest send is finished.',
  cancelled: 'Its latest send was cancelled.',
};

/** A source's status as a badge with its meaning on hover (and for screen readers, in its title). */
export function sourceBadge(status: string): SafeHtml {
  return html`<span data-status="${status}">${badge(status, SOURCE_STATUS_MEANING[status])}</span>`;
}

/**
 * The list page (the archived ones with `archived`): each row with its status, last send and the
 * results of its last {@link RESULTS_DAYS} days (src/domain/source-results.ts); without `canEdit` no
 * New, Send, Archive or Restore controls, and each row's link says View.
 */
export function sourcesView(kind: SourceKind, rows: SourceRow[], canEdit = true, o: { results?: Map<number, SourceResults>; archived?: boolean; csrf?: string } = {}): SafeHtml {
  const base = sourcesPath(kind);
  const results = o.results ?? new Map<number, SourceResults>();
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : share.format(x));
  const table = rows.length === 0
    ? html`<p>${o.archived ? `No archived ${kind}s.` : `No ${kind}s yet.`}</p>`
    : dataTable({
      label: o.archived ? `Archived ${kind}s` : kindTitle(kind),
      columns: [
        { head: 'Name' }, ...(kind === 'automation' ? [{ head: 'Type' }] : []), { head: 'Status' }, { head: 'Last send' },
        { head: 'Messages', num: true }, { head: 'Delivered', num: true }, { head: 'Read', num: true }, { head: 'Failed', num: true },
        { head: 'Actions', hiddenHead: true },
      ],
      rows: rows.map((r) => {
        const res = results.get(r.id);
        const actions: (SafeHtml | string)[] = [html`<a href="${base}/${r.id}">${canEdit && !o.archived ? 'Edit' : 'View'}<span class="visually-hidden"> ${r.name}</span></a>`];
        if (kind === 'campaign' && canEdit && !r.archived_at) actions.push(html`<a href="${base}/${r.id}/send">Send<span class="visually-hidden"> ${r.name}</span></a>`);
        if (canEdit && r.archived_at && o.csrf) {
          actions.push(html`<form method="post" action="${base}/${r.id}/restore" class="inline-form"><input type="hidden" name="_csrf" value="${o.csrf}"><button type="submit" class="secondary outline small">Restore<span class="visually-hidden"> ${r.name}</span></button></form>`);
        }
        return {
          attrs: html`data-${kind}-id="${r.id}"`,
          cells: [
            html`${r.name}<br><small class="excerpt muted">${r.template.body.length > 60 ? r.template.body.slice(0, 60) + '…' : r.template.body}</small>`,
            ...(kind === 'automation' ? [html`<code>${r.type}</code>`] : []),
            sourceBadge(res?.status ?? (r.archived_at ? 'archived' : kind === 'automation' ? (r.active ? 'active' : 'inactive') : 'draft')),
            time(res?.last_sent_at ?? null, 'never'),
            html`<span data-result="messages">${count.format(res?.messages ?? 0)}</span>`,
            html`<span data-result="delivered" title="${res ? `${count.format(res.delivered)} of ${count.format(res.sent)} sent` : ''}">${pct(res?.delivered_rate)}</span>`,
            html`<span data-result="read" title="${res ? `${count.format(res.read)} of ${count.format(res.sent)} sent` : ''}">${pct(res?.read_rate)}</span>`,
            html`<span data-result="failed">${count.format(res?.failed ?? 0)}</span>`,
            html`<span class="actions">${actions}</span>`,
          ],
        };
      }),
    });
  const intro = kind === 'automation'
    ? 'Automations are messages your own systems send through the API when something happens, such as an order confirmation. Only active automations can be sent.'
    : 'Campaigns are messages you send to a segment or a list of numbers, now or at a scheduled time. Opted-out contacts are skipped; delivery hours hold messages until they open.';
  return html`<h1>${o.archived ? `Archived ${kind}s` : kindTitle(kind)}</h1>
<p>${o.archived ? `Archived ${kind}s cannot be ${kind === 'automation' ? 'triggered' : 'sent'}. Restore one to use it again.` : intro}</p>
${canEdit && !o.archived ? html`<p><a href="${base}/new" role="button">New ${kind}</a></p>` : ''}
${table}
<p class="muted">Messages, delivered, read and failed count the sends of the last ${RESULTS_DAYS} days; delivered and read are shares of the messages sent.</p>
<p>${o.archived ? html`<a href="${base}">Back to the ${kind}s</a>` : html`<a href="${base}?archived=true" data-archived-link>Archived ${kind}s</a>`}</p>`;
}

function err(errors: FieldErrors, name: keyof FieldErrors): SafeHtml | '' {
  return errors[name] ? html`<small id="${name}-error" class="error" role="alert">${errors[name]}</small>` : '';
}

function inv(errors: FieldErrors, name: keyof FieldErrors): SafeHtml | '' {
  return errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '';
}

function input(f: SourceForm, errors: FieldErrors, name: keyof SourceForm, label: string, attrs: SafeHtml | string = '', help = ''): SafeHtml {
  const describedBy = [help ? `${name}-help` : '', errors[name] ? `${name}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="text" value="${f[name]}"${attrs ? html` ${attrs}` : ''}${errors[name] ? html` aria-invalid="true"` : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}>
${help ? html`<small id="${name}-help">${help}</small>` : ''}
${err(errors, name)}`;
}

/**
 * The template editor (create when `id` is absent): the form, and beside it (below it on a phone) the
 * live preview ({@link livePreview}) showing `preview` (the server's render of the saved template, or of
 * the unsaved one after "Preview changes"), which the browser then keeps up to date. Without `canEdit`:
 * the same fields, disabled, in no form (nothing to submit), and neither the save nor the "Preview
 * changes" buttons. `catalogue`: the company's WhatsApp templates when its channel is WhatsApp (the
 * mapping is then picked from the approved ones), undefined otherwise.
 */
export function editorForm(kind: SourceKind, csrf: string, f: SourceForm, errors: FieldErrors, id?: number, preview?: PreviewResult, canEdit = true, catalogue?: StoredTemplate[], problem?: string): SafeHtml {
  const action = id === undefined ? `${sourcesPath(kind)}/new` : `${sourcesPath(kind)}/${id}`;
  const editor = canEdit
    ? html`<form method="post" action="${action}" class="template-editor" id="${EDITOR_FORM_ID}" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
${editorFields(kind, f, errors, catalogue)}
<button type="submit" name="intent" value="save">${id === undefined ? `Create ${kind}` : 'Save changes'}</button>
</form>`
    : html`<div class="template-editor" data-read-only-template><fieldset disabled>
<legend class="visually-hidden">The saved template (read-only)</legend>
${editorFields(kind, f, errors, catalogue)}
</fieldset></div>`;
  return html`<div class="editor-layout" data-editor>
${editor}
${livePreview(kind, f, errors, preview, canEdit, problem)}
</div>
<script type="module" src="${BASE}/assets/editor-preview.js"></script>`;
}

/** Liquid's name of a WhatsApp template parameter. */
const placeholder = (i: number) => `{{${i + 1}}}`;

/**
 * The message as a phone shows it: a chat bubble with the header (text, or the media's URL), the body
 * (white space kept) and the URL buttons under it; or the render error every message would fail
 * with; or `problem`, the first problem of a template that cannot be saved as it is; or, without a
 * template yet, what to do. Then, for a WhatsApp mapping, what each parameter of the approved template
 * becomes and, given the `template` it was rendered from, which parameters would be empty
 * ({@link emptyParametersNote}). `who` says who it is for (default: a contact, or sample data).
 * editor-preview.js builds the same markup in the browser.
 */
export function messageBubble(r: PreviewResult | undefined, problem?: string, who?: string, template?: Template): SafeHtml {
  if (!r && problem) return html`<div class="bubble-frame"><p class="bubble-error" data-bubble-error>Fix the template to see the message: ${problem}</p></div>`;
  if (!r) return html`<div class="bubble-frame"><p class="bubble-empty" data-bubble-empty>Type a body to see the message here.</p></div>`;
  if (!r.ok) return html`<div class="bubble-frame"><p class="bubble-error" data-bubble-error>Every message would fail: ${r.error}</p></div>`;
  const m = r.rendered;
  const wa = m.whatsapp;
  const param = (label: string, value: string) => html`<dt>${label}</dt><dd${value === '' ? html` class="empty"` : ''}>${value === '' ? '(empty)' : value}</dd>`;
  return html`<div class="bubble-frame">
<p class="bubble-to" data-bubble-to>To ${m.to} · ${who ?? (r.contact_found ? 'a contact of your company' : 'sample data')}</p>
<div class="bubble" data-bubble>
${m.header.type === 'text' ? html`<p class="bubble-header" data-bubble-header>${m.header.text}</p>` : m.header.type === 'none' ? '' : html`<p class="bubble-media" data-bubble-media>${m.header.type === 'image' ? 'Image' : 'Video'}: <span>${m.header.url}</span></p>`}
<div class="bubble-body" data-bubble-body>${m.body}</div>
</div>
${m.buttons.length ? html`<ul class="bubble-buttons" data-bubble-buttons>${m.buttons.map((b) => html`<li><span class="bubble-button">${b.text}</span> <small>${b.url}</small></li>`)}</ul>` : ''}
</div>
${wa ? html`<div class="wa-mapping" data-bubble-whatsapp>
<p>WhatsApp template <strong>${wa.name}</strong> (${wa.language}): its parameters become</p>
<dl class="wa-parameters">
${wa.header_parameters.map((v, i) => param(`Header ${placeholder(i)}`, v))}
${wa.body_parameters.map((v, i) => param(`Body ${placeholder(i)}`, v))}
${wa.button_parameters.map((v, i) => (v === null ? '' : param(`Button ${i + 1} {{1}}`, v)))}
</dl>
${wa.header_parameters.length + wa.body_parameters.length === 0 ? html`<p class="muted">No parameters: the approved text is sent as it is.</p>` : ''}
${template ? emptyParametersNote(previewEmptyParameters(template, m)) : ''}
</div>` : ''}`;
}

/** The first line of the empty-parameters note (editor-preview.js has the same). */
export const EMPTY_PARAMETERS_INTRO = 'Meta refuses an empty parameter: on a WhatsApp channel, a recipient like this one is skipped (reason empty_parameter).';

/** The `default` filter that avoids `p` (`{{ first_name | default: "there" }}`), or undefined for a button's parameter. */
export function defaultHint(p: EmptyParameter): string | undefined {
  if (p.component === 'button' || p.variables.length === 0) return undefined;
  return `{{ ${p.source.replace(/^\{\{-?\s*|\s*-?\}\}$/g, '')} | default: "there" }}`;
}

/**
 * Under the WhatsApp parameters of a bubble: each parameter of `list` (render.ts `emptyParameters`)
 * named with the variables it reads, and the `default` filter that avoids it (docs/whatsapp.md
 * "Empty parameters"); nothing when the list is empty.
 */
export function emptyParametersNote(list: readonly EmptyParameter[]): SafeHtml | '' {
  if (list.length === 0) return '';
  return html`<div class="warnings" data-empty-parameters>
<p><strong>${EMPTY_PARAMETERS_INTRO}</strong></p>
<ul>${list.map((p) => {
    const hint = defaultHint(p);
    return html`<li data-empty-parameter>${describeEmptyParameter(p)}.${hint ? html` Give it a default: <code>${hint}</code>` : ''}</li>`;
  })}</ul>
</div>`;
}

/**
 * The live preview beside the editor: the bubble of `preview` ({@link messageBubble}), who it is for
 * (a contact by phone, or a sample first name and variables: fields of the editor's form through
 * their `form` attribute) and, for script-less browsers, the "Preview changes" button (a server round
 * trip). editor-preview.js re-renders the bubble in the browser as the fields change, with the
 * server's own modules (docs/console.md "Editor and live preview"), and hides that button.
 */
function livePreview(kind: SourceKind, f: SourceForm, errors: FieldErrors, preview: PreviewResult | undefined, canEdit: boolean, problem?: string): SafeHtml {
  const of = canEdit ? html` form="${EDITOR_FORM_ID}"` : '';
  return html`<aside class="live-preview" aria-labelledby="live-preview-title" data-live-preview data-contact-url="${sourcesPath(kind)}/preview-contact.json">
<h2 id="live-preview-title">Preview</h2>
<div class="phone" data-bubble-root>
${messageBubble(preview, problem, undefined, templateOfForm(f).template)}
</div>
<p class="muted preview-note" data-preview-note>Rendered by the server with the code that sends your messages.${canEdit ? ' Preview changes shows unsaved changes.' : ''}</p>
<fieldset class="preview-data">
  <legend>Preview for</legend>
  <label for="editor_preview_phone">Contact phone (empty: sample data)</label>
  <input id="editor_preview_phone" name="editor_preview_phone" type="tel" autocomplete="off" value="${f.editor_preview_phone ?? ''}"${of}${inv(errors, 'editor_preview_phone')}>
  ${err(errors, 'editor_preview_phone')}
  <p class="muted contact-status" data-contact-status aria-live="polite"></p>
  <label for="editor_preview_first_name">Sample first name</label>
  <input id="editor_preview_first_name" name="editor_preview_first_name" type="text" autocomplete="off" value="${f.editor_preview_first_name ?? ''}"${of}>
  <label for="editor_preview_variables">Sample variables (JSON object)</label>
  <input id="editor_preview_variables" name="editor_preview_variables" type="text" autocomplete="off" spellcheck="false" value="${f.editor_preview_variables ?? ''}" placeholder='{"city": "Berlin"}'${of}${inv(errors, 'editor_preview_variables')}>
  <small id="editor_preview_variables-error" class="error" data-variables-error${errors.editor_preview_variables ? '' : html` hidden`}>${errors.editor_preview_variables ?? ''}</small>
</fieldset>
${canEdit ? html`<button type="submit" name="intent" value="preview" class="secondary" form="${EDITOR_FORM_ID}" data-server-preview>Preview changes</button>` : ''}
</aside>`;
}

/**
 * The warnings of a template (src/domain/source-tools.ts `templateWarnings`: variables no contact
 * has, a WhatsApp mapping that does not map), where the marketer acted: after a save, on a send's
 * review. Nothing when there are none.
 */
export function warningsView(warnings: readonly string[], intro = 'Check this before you send:'): SafeHtml | '' {
  if (warnings.length === 0) return '';
  return html`<div class="warnings" role="status" data-warnings>
<p><strong>${intro}</strong></p>
<ul>${warnings.map((w) => html`<li data-warning>${w.charAt(0).toUpperCase() + w.slice(1)}${/[.!?]$/.test(w) ? '' : '.'}</li>`)}</ul>
</div>`;
}

/** The template's fields of the editor (name, type, header, body, buttons, WhatsApp mapping). */
function editorFields(kind: SourceKind, f: SourceForm, errors: FieldErrors, catalogue?: StoredTemplate[]): SafeHtml {
  return html`${input(f, errors, 'name', 'Name', html`required maxlength="255"`)}
${kind === 'automation' ? input(f, errors, 'type', 'Type', html`required maxlength="32"`, 'Use api to let your own systems send it through the API (for example an order confirmation). Any other word keeps it from being sent that way.') : ''}
<fieldset>
  <legend>Header</legend>
  <label for="header_type">Header type</label>
  <select id="header_type" name="header_type"${inv(errors, 'header_type')}>
    ${['none', 'text', 'image', 'video'].map((t) => html`<option value="${t}"${f.header_type === t ? html` selected` : ''}>${t}</option>`)}
  </select>
  ${err(errors, 'header_type')}
  ${input(f, errors, 'header_text', 'Header text (Liquid; text headers)', html`maxlength="1024"`)}
  ${input(f, errors, 'header_url', 'Default media URL (image and video headers)', html`maxlength="2048" inputmode="url"`)}
</fieldset>
<label for="body">Body (Liquid: {{ first_name }}, {{ last_name }}, {{ phone }}, any contact variable)</label>
<textarea id="body" name="body" rows="8" required maxlength="4096"${inv(errors, 'body')}>
${f.body}</textarea>
${err(errors, 'body')}
<fieldset>
  <legend>URL buttons (up to two)</legend>
  <div class="grid">
    <div>${input(f, errors, 'b1_text', 'Button 1 text', html`maxlength="25"`)}</div>
    <div>${input(f, errors, 'b1_url', 'Button 1 URL', html`maxlength="2048" inputmode="url"`)}</div>
  </div>
  <div class="grid">
    <div>${input(f, errors, 'b2_text', 'Button 2 text', html`maxlength="25"`)}</div>
    <div>${input(f, errors, 'b2_url', 'Button 2 URL', html`maxlength="2048" inputmode="url"`)}</div>
  </div>
</fieldset>
${catalogue ? whatsappPicker(f, errors, catalogue) : html`<fieldset>
  <legend>WhatsApp template mapping (optional)</legend>
  <div class="grid">
    <div>${input(f, errors, 'wa_name', 'Approved template name', html`maxlength="512"`)}</div>
    <div>${input(f, errors, 'wa_language', 'Language (e.g. en_US)', html`maxlength="16"`)}</div>
  </div>
  <div class="grid">
    <div>${input(f, errors, 'wa_body_parameters', 'Body parameters (count)', html`inputmode="numeric"`)}</div>
    <div>${input(f, errors, 'wa_header_parameters', 'Header parameters (0 or 1)', html`inputmode="numeric"`)}</div>
  </div>
</fieldset>`}`;
}

/** The help beside the template select for one catalogue entry: its parameters and what this template must fill. */
function pickerHelp(t: StoredTemplate): string {
  return `${t.name} (${t.language}): ${describeParameters(t.parameters)}. ${mappingHelp(t.parameters)}`;
}

/**
 * The WhatsApp mapping of a company whose channel is WhatsApp: a select (`wa_template`, value
 * `name|language`) of the catalogue's APPROVED templates, each labelled with its parameters, and the
 * chosen one's parameters beside it (updated by console.js when the choice changes). A saved mapping
 * that is not approved (or not in the catalogue) stays listed, marked, so the page shows the truth;
 * saving it is refused by the domain's check. With no approved templates it says so and links the
 * Templates page.
 */
function whatsappPicker(f: SourceForm, errors: FieldErrors, catalogue: StoredTemplate[]): SafeHtml {
  const approved = catalogue.filter((t) => t.status === 'APPROVED');
  const chosen = f.wa_name.trim() === '' ? undefined : templateChoice(f.wa_name.trim(), f.wa_language.trim());
  const current = chosen === undefined || approved.some((t) => templateChoice(t.name, t.language) === chosen)
    ? undefined : catalogue.find((t) => templateChoice(t.name, t.language) === chosen);
  const selected = chosen === undefined ? undefined : catalogue.find((t) => templateChoice(t.name, t.language) === chosen);
  const problem = errors.wa_name ?? errors.wa_language;
  const describedBy = ['wa_template-help', problem ? 'wa_template-error' : ''].filter(Boolean).join(' ');
  const option = (t: StoredTemplate, note = '') => {
    const value = templateChoice(t.name, t.language);
    return html`<option value="${value}" data-help="${pickerHelp(t)}"${value === chosen ? html` selected` : ''}>${t.name} (${t.language})${note} · ${describeParameters(t.parameters)}</option>`;
  };
  return html`<fieldset data-wa-picker>
  <legend>WhatsApp template</legend>
  <p class="muted">Your channel is WhatsApp: every message uses one of your approved templates. The body, header and buttons above fill its parameters.</p>
  ${approved.length === 0 ? html`<p data-no-approved-templates>Your WhatsApp catalogue has no approved templates${catalogue.length ? ` (${num(catalogue.length)} not usable: pending, rejected or paused)` : ''}. <a href="${TEMPLATES_PATH}">Open the Templates page</a> to sync with Meta or submit one.</p>` : ''}
  <label for="wa_template">Approved template (name and language)</label>
  <select id="wa_template" name="wa_template" data-wa-template aria-describedby="${describedBy}"${problem ? html` aria-invalid="true"` : ''}>
    <option value="" data-help="Choose a template to see its parameters.">Choose a template</option>
    ${approved.map((t) => option(t))}
    ${current ? option(current, ` (${current.status.toLowerCase()}: ${statusMeaning(current.status)})`) : ''}
    ${chosen !== undefined && !selected ? html`<option value="${chosen}" data-help="This template is not in your catalogue: sync it on the Templates page or choose another." selected>${f.wa_name} (${f.wa_language}) (not in your catalogue)</option>` : ''}
  </select>
  ${problem ? html`<small id="wa_template-error" class="error" role="alert">${problem}</small>` : ''}
  <p id="wa_template-help" class="wa-parameters" data-wa-parameters aria-live="polite">${selected ? pickerHelp(selected) : chosen !== undefined ? 'This template is not in your catalogue: sync it on the Templates page or choose another.' : 'Choose a template to see its parameters.'}</p>
</fieldset>`;
}

/** What the preview section shows. */
export interface PreviewModel { phone: string; first_name: string; variables: string; result?: PreviewResult }

/** A rendered preview (or the error every message would fail with). */
function previewOutput(r: PreviewResult): SafeHtml {
  let out: SafeHtml = html``;
  if (r.ok) {
    const m = r.rendered;
    out = html`<article class="preview" aria-label="Rendered message" data-preview>
  <p><small>To ${m.to}${r.contact_found ? ' (a contact of your company)' : ' (no contact with this number: sample data)'}</small></p>
  ${m.header.type === 'text' ? html`<p><strong data-preview-header>${m.header.text}</strong></p>` : m.header.type === 'none' ? '' : html`<p><small>${m.header.type}: <code>${m.header.url}</code></small></p>`}
  <pre class="preview-body" data-preview-body>${m.body}</pre>
  ${m.buttons.length ? html`<ul>${m.buttons.map((b) => html`<li>${b.text}: <code>${b.url}</code></li>`)}</ul>` : ''}
  ${m.whatsapp ? html`<p><small>WhatsApp ${m.whatsapp.name} (${m.whatsapp.language}): body parameters ${JSON.stringify(m.whatsapp.body_parameters)}, header parameters ${JSON.stringify(m.whatsapp.header_parameters)}</small></p>` : ''}
</article>`;
  } else {
    out = html`<p class="error" role="alert" data-preview-error>Every message would fail: ${r.error}</p>`;
  }
  return out;
}

function previewSection(kind: SourceKind, id: number, p: PreviewModel, errors: FieldErrors): SafeHtml {
  const out = p.result ? previewOutput(p.result) : '';
  return html`<section aria-labelledby="preview-title">
<h2 id="preview-title">Preview of the saved template</h2>
<p>The template as saved, rendered by the same code that sends your messages, for a contact (by phone) or sample data.</p>
<form method="get" action="${sourcesPath(kind)}/${id}#preview-title">
  <div class="grid">
    <div><label for="preview_phone">Contact phone</label>
    <input id="preview_phone" name="preview_phone" type="tel" value="${p.phone}"${inv(errors, 'preview_phone')}>${err(errors, 'preview_phone')}</div>
    <div><label for="preview_first_name">Sample first name</label>
    <input id="preview_first_name" name="preview_first_name" type="text" value="${p.first_name}"></div>
  </div>
  <label for="preview_variables">Sample variables (JSON object)</label>
  <input id="preview_variables" name="preview_variables" type="text" value="${p.variables}" placeholder='{"city": "Berlin"}'${inv(errors, 'preview_variables')}>
  ${err(errors, 'preview_variables')}
  <input type="hidden" name="preview" value="1">
  <button type="submit" class="secondary">Preview</button>
</form>
${out}
</section>`;
}

/** The edit page of one source: editor, status, preview, test send. */
export function sourceView(m: {
  kind: SourceKind; csrf: string; source: SourceRow; form: SourceForm; errors: FieldErrors; preview: PreviewModel; testPhone: string;
  /** The editor's preview: the saved template's, or the "Preview changes" result of the unsaved form. */
  editorPreview?: PreviewResult;
  /** Why the editor's form has no preview (its first problem), when it has none. */
  editorProblem?: string;
  /** False for a role that may only read (no status, send, save or test-send forms); default true. */
  canEdit?: boolean;
  /** The company's WhatsApp catalogue when its channel is WhatsApp (see {@link editorForm}). */
  catalogue?: StoredTemplate[];
  /** The saved template's warnings ({@link warningsView}). */
  warnings?: readonly string[];
}): SafeHtml {
  const canEdit = m.canEdit ?? true;
  const { kind, source: s } = m;
  const base = `${sourcesPath(kind)}/${s.id}`;
  const hidden = html`<input type="hidden" name="_csrf" value="${m.csrf}">`;
  const archive = canEdit ? html`<form method="post" action="${base}/${s.archived_at ? 'restore' : 'archive'}" class="inline" data-archive-form>${hidden}<button type="submit" class="secondary outline small">${s.archived_at ? `Restore this ${kind}` : `Archive this ${kind}`}</button></form>` : '';
  return html`<h1>${s.name}</h1>
${s.archived_at ? html`<p class="warnings" role="status" data-archived>${sourceBadge('archived')} Archived on ${time(s.archived_at)}: it is hidden from the list and cannot be ${kind === 'automation' ? 'triggered' : 'sent'}. ${archive}</p>` : ''}
${warningsView(m.warnings ?? [])}
${kind === 'automation' ? html`<section aria-labelledby="status-title">
<h2 id="status-title">Status</h2>
<p>${badge(s.active ? 'active' : 'inactive')} Automation id <code>${s.id}</code></p>
${canEdit ? html`<form method="post" action="${base}/active" class="inline">${hidden}<input type="hidden" name="active" value="${s.active ? 'false' : 'true'}"><button type="submit" class="secondary outline">${s.active ? 'Deactivate' : 'Activate'}</button></form>` : ''}
</section>` : html`<p>Campaign id <code>${s.id}</code>${canEdit && !s.archived_at ? html` · <a href="${base}/send">Send this campaign</a>` : ''}</p>
<p data-frequency-cap="${s.ignore_frequency_cap ? 'ignored' : 'applies'}">Frequency cap: ${s.ignore_frequency_cap ? "ignored: this campaign's messages are sent however many campaign messages a contact got (they still count toward the cap)" : "applies: a contact who already got the company's maximum of campaign messages is skipped"}.
${canEdit ? html`<form method="post" action="${base}/frequency-cap" class="inline">${hidden}<input type="hidden" name="ignore" value="${s.ignore_frequency_cap ? 'false' : 'true'}"><button type="submit" class="secondary outline small">${s.ignore_frequency_cap ? 'Apply the frequency cap' : 'Ignore the frequency cap'}</button></form>` : ''}</p>`}
<section aria-labelledby="editor-title">
<h2 id="editor-title">Template</h2>
${editorForm(kind, m.csrf, m.form, m.errors, s.id, m.editorPreview, canEdit, m.catalogue, m.editorProblem)}
</section>
${previewSection(kind, s.id, m.preview, m.errors)}
${canEdit && !s.archived_at ? html`<section aria-labelledby="test-title">
<h2 id="test-title">Test send</h2>
<p>Sends the saved template to one number through the real pipeline; it appears in Sends.${kind === 'campaign' ? ' As a campaign message, an opted-out number is skipped and delivery hours apply.' : ''}</p>
<form method="post" action="${base}/test-send">${hidden}
  <label for="test_phone">Phone number</label>
  <input id="test_phone" name="test_phone" type="tel" required value="${m.testPhone}"${inv(m.errors, 'test_phone')}>
  ${err(m.errors, 'test_phone')}
  <button type="submit">Send test message</button>
</form>
</section>` : ''}
${canEdit && !s.archived_at ? html`<section aria-labelledby="archive-title">
<h2 id="archive-title">Archive</h2>
<p>An archived ${kind} is hidden from the list and cannot be ${kind === 'automation' ? 'triggered' : 'sent'}; its sends and results stay. You can restore it from the archived ${kind}s.</p>
${archive}
</section>` : ''}`;
}
