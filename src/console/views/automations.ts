/**
 * Automations and campaigns pages (routes/automations.ts): the list, the template
 * editor (header none / text / image / video, Liquid body, up to two URL buttons, the WhatsApp mapping:
 * for a company whose channel is WhatsApp a select of the approved templates of its catalogue with the
 * chosen one's parameters beside it, otherwise name, language and parameter counts typed in),
 * each problem shown beside its field with the input kept, the live preview (re-rendered by a GET with
 * the chosen phone or sample data), the test-send form and, for automations, activate / deactivate.
 * A role that may only read (`canEdit` false) sees the template in disabled fields and the GET preview,
 * without the create, save, activate, send and test-send buttons and forms.
 */
import type { SourceKind, SourceRow } from '../../domain/automations.ts';
import type { PreviewResult } from '../../domain/source-tools.ts';
import type { Template } from '../../domain/templates.ts';
import type { StoredTemplate } from '../../domain/whatsapp-templates.ts';
import { badge, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';
import { describeParameters, mappingHelp, statusMeaning, TEMPLATES_PATH, templateChoice } from './whatsapp-templates.ts';

/** Path of a kind's list page. */
export const sourcesPath = (kind: SourceKind) => `${BASE}/${kind}s`;
/** Label of a kind, capitalised and plural. */
export const kindTitle = (kind: SourceKind) => (kind === 'automation' ? 'Automations' : 'Campaigns');

/** The editor's fields as text, exactly as the user typed them. */
export interface SourceForm {
  name: string; type: string; header_type: string; header_text: string; header_url: string; body: string;
  b1_text: string; b1_url: string; b2_text: string; b2_url: string;
  wa_name: string; wa_language: string; wa_body_parameters: string; wa_header_parameters: string;
  /** Phone of the editor's "Preview changes" (not part of the template). */
  editor_preview_phone?: string;
}

/** Problems by field name of SourceForm (and `test_phone`, `preview`). */
export type FieldErrors = Partial<Record<keyof SourceForm | 'test_phone' | 'preview_phone' | 'preview_variables', string>>;

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

/** The list page; without `canEdit` no New or Send links, and each row's link says View. */
export function sourcesView(kind: SourceKind, rows: SourceRow[], canEdit = true): SafeHtml {
  const base = sourcesPath(kind);
  const table = rows.length === 0
    ? html`<p>No ${kind}s yet.</p>`
    : dataTable({
      label: kindTitle(kind),
      columns: [{ head: 'Name' }, ...(kind === 'automation' ? [{ head: 'Type' }, { head: 'Status' }] : []), { head: 'Body' }, { head: 'Created' }, { head: 'Actions', hiddenHead: true }],
      rows: rows.map((r) => ({
        attrs: html`data-${kind}-id="${r.id}"`,
        cells: [
          r.name,
          ...(kind === 'automation' ? [html`<code>${r.type}</code>`, badge(r.active ? 'active' : 'inactive')] : []),
          html`<span class="excerpt">${r.template.body.length > 80 ? r.template.body.slice(0, 80) + '…' : r.template.body}</span>`,
          time(r.created_at),
          html`<a href="${base}/${r.id}">${canEdit ? 'Edit' : 'View'}<span class="visually-hidden"> ${r.name}</span></a>${kind === 'campaign' && canEdit ? html` · <a href="${base}/${r.id}/send">Send<span class="visually-hidden"> ${r.name}</span></a>` : ''}`,
        ],
      })),
    });
  return html`<h1>${kindTitle(kind)}</h1>
<p>${kind === 'automation'
    ? 'Automations are messages your integration triggers through the API (operation 4.3). Only active automations can be triggered.'
    : 'Campaigns are messages you send to a segment or a list of numbers, now or at a scheduled time. Opted-out contacts are skipped; delivery hours hold messages until they open.'}</p>
${canEdit ? html`<p><a href="${base}/new" role="button">New ${kind}</a></p>` : ''}
${table}`;
}

function err(errors: FieldErrors, name: keyof FieldErrors): SafeHtml | '' {
  return errors[name] ? html`<small id="${name}-error" class="error" role="alert">${errors[name]}</small>` : '';
}

function inv(errors: FieldErrors, name: keyof FieldErrors): SafeHtml | '' {
  return errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '';
}

function input(f: SourceForm, errors: FieldErrors, name: keyof SourceForm, label: string, attrs: SafeHtml | string = ''): SafeHtml {
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="text" value="${f[name]}"${attrs ? html` ${attrs}` : ''}${inv(errors, name)}>
${err(errors, name)}`;
}

/**
 * The template editor form (create when `id` is absent). Without `canEdit`: the same fields, disabled,
 * in no form (nothing to submit), and neither the save nor the "Preview changes" buttons. `catalogue`:
 * the company's WhatsApp templates when its channel is WhatsApp (the mapping is then picked from the
 * approved ones), undefined otherwise.
 */
export function editorForm(kind: SourceKind, csrf: string, f: SourceForm, errors: FieldErrors, id?: number, preview?: PreviewResult, canEdit = true, catalogue?: StoredTemplate[]): SafeHtml {
  const action = id === undefined ? `${sourcesPath(kind)}/new` : `${sourcesPath(kind)}/${id}`;
  if (!canEdit) {
    return html`<div class="template-editor" data-read-only-template><fieldset disabled>
<legend class="visually-hidden">The saved template (read-only)</legend>
${editorFields(kind, f, errors, catalogue)}
</fieldset></div>`;
  }
  return html`<form method="post" action="${action}" class="template-editor" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
${editorFields(kind, f, errors, catalogue)}
<fieldset>
  <legend>Preview before saving</legend>
  <label for="editor_preview_phone">Contact phone for the preview (optional; empty: sample data)</label>
  <input id="editor_preview_phone" name="editor_preview_phone" type="tel" value="${f.editor_preview_phone ?? ''}"${inv(errors, 'editor_preview_phone')}>
  ${err(errors, 'editor_preview_phone')}
</fieldset>
<div class="grid">
<button type="submit" name="intent" value="save">${id === undefined ? `Create ${kind}` : 'Save changes'}</button>
<button type="submit" name="intent" value="preview" class="secondary">Preview changes</button>
</div>
</form>
${preview ? previewOutput(preview) : ''}`;
}

/** The template's fields of the editor (name, type, header, body, buttons, WhatsApp mapping). */
function editorFields(kind: SourceKind, f: SourceForm, errors: FieldErrors, catalogue?: StoredTemplate[]): SafeHtml {
  return html`${input(f, errors, 'name', 'Name', html`required maxlength="255"`)}
${kind === 'automation' ? input(f, errors, 'type', 'Type (api: triggered through operation 4.3)', html`required maxlength="32"`) : ''}
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
<textarea id="body" name="body" rows="6" required maxlength="4096"${inv(errors, 'body')}>${f.body}</textarea>
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
  ${approved.length === 0 ? html`<p data-no-approved-templates>Your WhatsApp catalogue has no approved templates${catalogue.length ? ` (${catalogue.length} not usable: pending, rejected or paused)` : ''}. <a href="${TEMPLATES_PATH}">Open the Templates page</a> to sync with Meta or submit one.</p>` : ''}
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
<h2 id="preview-title">Preview</h2>
<p>Rendered by the same code that sends your messages, for a contact (by phone) or sample data.</p>
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
  /** The "Preview changes" result of the unsaved form. */
  editorPreview?: PreviewResult;
  /** False for a role that may only read (no status, send, save or test-send forms); default true. */
  canEdit?: boolean;
  /** The company's WhatsApp catalogue when its channel is WhatsApp (see {@link editorForm}). */
  catalogue?: StoredTemplate[];
}): SafeHtml {
  const canEdit = m.canEdit ?? true;
  const { kind, source: s } = m;
  const base = `${sourcesPath(kind)}/${s.id}`;
  const hidden = html`<input type="hidden" name="_csrf" value="${m.csrf}">`;
  return html`<h1>${s.name}</h1>
${kind === 'automation' ? html`<section aria-labelledby="status-title">
<h2 id="status-title">Status</h2>
<p>${badge(s.active ? 'active' : 'inactive')} Automation id <code>${s.id}</code></p>
${canEdit ? html`<form method="post" action="${base}/active" class="inline">${hidden}<input type="hidden" name="active" value="${s.active ? 'false' : 'true'}"><button type="submit" class="secondary outline">${s.active ? 'Deactivate' : 'Activate'}</button></form>` : ''}
</section>` : html`<p>Campaign id <code>${s.id}</code>${canEdit ? html` · <a href="${base}/send">Send this campaign</a>` : ''}</p>
<p data-frequency-cap="${s.ignore_frequency_cap ? 'ignored' : 'applies'}">Frequency cap: ${s.ignore_frequency_cap ? "ignored: this campaign's messages are sent however many campaign messages a contact got (they still count toward the cap)" : "applies: a contact who already got the company's maximum of campaign messages is skipped"}.
${canEdit ? html`<form method="post" action="${base}/frequency-cap" class="inline">${hidden}<input type="hidden" name="ignore" value="${s.ignore_frequency_cap ? 'false' : 'true'}"><button type="submit" class="secondary outline small">${s.ignore_frequency_cap ? 'Apply the frequency cap' : 'Ignore the frequency cap'}</button></form>` : ''}</p>`}
<section aria-labelledby="editor-title">
<h2 id="editor-title">Template</h2>
${editorForm(kind, m.csrf, m.form, m.errors, s.id, m.editorPreview, canEdit, m.catalogue)}
</section>
${previewSection(kind, s.id, m.preview, m.errors)}
${canEdit ? html`<section aria-labelledby="test-title">
<h2 id="test-title">Test send</h2>
<p>Sends the saved template to one number through the real pipeline; it appears in Sends.${kind === 'campaign' ? ' As a campaign message, an opted-out number is skipped and delivery hours apply.' : ''}</p>
<form method="post" action="${base}/test-send">${hidden}
  <label for="test_phone">Phone number</label>
  <input id="test_phone" name="test_phone" type="tel" required value="${m.testPhone}"${inv(m.errors, 'test_phone')}>
  ${err(m.errors, 'test_phone')}
  <button type="submit">Send test message</button>
</form>
</section>` : ''}`;
}
