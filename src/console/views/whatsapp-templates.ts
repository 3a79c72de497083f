/**
 * The WhatsApp Templates page of the console (routes/whatsapp-templates.ts; docs/whatsapp.md "In the
 * console"): the company's synced template catalogue (name, language, status in words with its meaning
 * on hover and in a legend, category, quality, rejection reason, parameters, when it was synced), the
 * "Sync now" form and the form that submits a new template to Meta. Also the words the automation and
 * campaign editor uses for a template's parameters ({@link describeParameters}) and the value of its
 * template select ({@link templateChoice}, {@link parseTemplateChoice}).
 */
import type { StoredTemplate, TemplateParameters } from '../../domain/whatsapp-templates.ts';
import { readOnlyNote, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Path of the Templates page. */
export const TEMPLATES_PATH = `${BASE}/whatsapp/templates`;

/**
 * Whether the company's channel can have a catalogue: `ready` (WhatsApp with a WABA id), `no_waba`
 * (WhatsApp without one), `not_whatsapp` (another provider, named in `provider`).
 */
export type CatalogueState = { state: 'ready' } | { state: 'no_waba' } | { state: 'not_whatsapp'; provider: string };

/** What Meta's template statuses mean, for the hover text and the legend (Meta's spelling as key). */
export const STATUS_MEANINGS: Record<string, string> = {
  APPROVED: 'Meta approved it: automations and campaigns may use it.',
  PENDING: 'Meta is reviewing it (minutes to a day); it cannot be used yet.',
  REJECTED: 'Meta rejected it (see the reason); submit a corrected template under another name.',
  PAUSED: 'Meta paused it because recipients reported or blocked it; messages using it wait until it is approved again.',
  DISABLED: 'Meta disabled it after repeated low quality; messages using it fail.',
  IN_APPEAL: 'The rejection is being appealed; it cannot be used yet.',
  PENDING_DELETION: 'It is being deleted in Meta\'s WhatsApp Manager; it cannot be used.',
  DELETED: 'It was deleted in Meta\'s WhatsApp Manager; it cannot be used.',
  LIMIT_EXCEEDED: 'The business account has more templates than Meta allows; it cannot be used.',
  ARCHIVED: 'It was archived in Meta\'s WhatsApp Manager; it cannot be used.',
};

/** The meaning of a status (Meta's spelling), or a generic sentence for one this list does not know. */
export function statusMeaning(status: string): string {
  return STATUS_MEANINGS[status] ?? 'As Meta reports it; only approved templates can be used.';
}

/** A status as a word (`PAUSED` reads "paused") with its meaning on hover; the word carries the meaning, colour repeats it. */
export function statusBadge(status: string): SafeHtml {
  const word = status.toLowerCase().replace(/_/g, ' ');
  return html`<span class="badge badge-${status.toLowerCase().replace(/[^a-z_]/g, '')}" title="${statusMeaning(status)}">${word}</span>`;
}

const QUALITY: Record<string, string> = { GREEN: 'high (green)', YELLOW: 'medium (yellow)', RED: 'low (red)', UNKNOWN: 'not rated yet' };

/** Meta's quality rating in words (`GREEN` reads "high (green)"); "—" when Meta gave none. */
export function qualityWords(score: string | null): string {
  return score === null ? '—' : QUALITY[score] ?? score.toLowerCase();
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * A template's parameters in words, e.g. "image header; 2 body parameters; URL buttons: 1 with a
 * parameter, 1 without". `header` 0 reads "no header parameter" only when there is nothing else to say.
 */
export function describeParameters(p: TemplateParameters): string {
  const parts: string[] = [];
  if (typeof p.header === 'string') parts.push(`${p.header} header`);
  else if (p.header === 1) parts.push('text header with 1 parameter');
  parts.push(p.body === 0 ? 'no body parameters' : plural(p.body, 'body parameter'));
  const url = p.buttons.filter((n) => n > 0).length;
  if (p.buttons.length) parts.push(`${plural(p.buttons.length, 'button')}${url ? ` (${url} with a URL parameter)` : ''}`);
  return parts.join('; ');
}

/**
 * What an automation's or campaign's template must have to use `p` (the editor's help beside the
 * template select), in words: the body outputs, the header, the URL buttons.
 */
export function mappingHelp(p: TemplateParameters): string {
  const body = p.body === 0
    ? 'The body must have no {{ }} outputs.'
    : `The body must have exactly ${plural(p.body, 'top-level {{ }} output')}: they fill ${Array.from({ length: p.body }, (_, i) => `{{${i + 1}}}`).join(', ')} in order.`;
  const header = typeof p.header === 'string'
    ? `Header: ${p.header} (choose header type ${p.header}${p.header === 'image' || p.header === 'video' ? ' with its media URL' : ''}).`
    : p.header === 1 ? 'Header: text with one {{ }} output.' : 'Header: none.';
  const withParam = p.buttons.map((n, i) => (n > 0 ? i + 1 : 0)).filter((i) => i > 0);
  const buttons = p.buttons.length === 0 ? 'No buttons.'
    : `${plural(p.buttons.length, 'button')}${withParam.length ? `; ${withParam.length === 1 ? `URL button ${withParam[0]} needs` : `URL buttons ${withParam.join(' and ')} need`} a URL button here at the same position (its URL fills the parameter)` : ''}.`;
  return `${body} ${header} ${buttons}`;
}

/** The value of a template in the editor's select: `name|language` (a language never contains `|`). */
export function templateChoice(name: string, language: string): string {
  return `${name}|${language}`;
}

/** The name and language of a select value of {@link templateChoice} (src/console/template-form.ts). */
export { parseTemplateChoice } from '../template-form.ts';

/** The submit form's fields as text, exactly as the user typed them. */
export interface SubmitForm {
  name: string; language: string; category: string; header_text: string; header_example: string;
  body: string; body_examples: string; button_text: string; button_url: string; button_example: string;
}

/** Problems of the submit form by field name. */
export type SubmitErrors = Partial<Record<keyof SubmitForm, string>>;

/** An empty submit form. */
export const EMPTY_SUBMIT: SubmitForm = {
  name: '', language: 'en_US', category: 'UTILITY', header_text: '', header_example: '', body: '', body_examples: '', button_text: '', button_url: '', button_example: '',
};

/** The Templates page model. */
export interface TemplatesPage {
  csrf: string;
  channel: CatalogueState;
  templates: StoredTemplate[];
  /** Whether the role may sync and submit (permissions.ts). */
  canEdit: boolean;
  /** A refusal to show above the page (Meta's error in words, or why the channel has no catalogue). */
  problem?: string;
  submit: SubmitForm;
  submitErrors: SubmitErrors;
}

function err(errors: SubmitErrors, name: keyof SubmitForm): SafeHtml | '' {
  return errors[name] ? html`<small id="t_${name}-error" class="error" role="alert">${errors[name]}</small>` : '';
}

function described(errors: SubmitErrors, name: keyof SubmitForm, hint?: string): SafeHtml | '' {
  const ids = [hint, errors[name] ? `t_${name}-error` : undefined].filter(Boolean).join(' ');
  return html`${errors[name] ? html` aria-invalid="true"` : ''}${ids ? html` aria-describedby="${ids}"` : ''}`;
}

function input(f: SubmitForm, errors: SubmitErrors, name: keyof SubmitForm, label: string, attrs: SafeHtml, hint?: string): SafeHtml {
  return html`<label for="t_${name}">${label}</label>
<input id="t_${name}" name="${name}" type="text" value="${f[name]}" ${attrs}${described(errors, name, hint ? `t_${name}-hint` : undefined)}>
${hint ? html`<small id="t_${name}-hint" class="muted">${hint}</small>` : ''}
${err(errors, name)}`;
}

/** Why there is no catalogue for the channel, in words for the company's people. */
export function channelProblem(c: CatalogueState): string | undefined {
  if (c.state === 'not_whatsapp') {
    return `Your company's channel is ${c.provider}, not WhatsApp: message templates belong to WhatsApp. Ask your operator to connect a WhatsApp number if you want to send through WhatsApp.`;
  }
  if (c.state === 'no_waba') {
    return 'Your WhatsApp channel has no WhatsApp Business Account id (waba_id), and Meta keeps templates per business account. Ask your operator to add it to the channel; then you can sync and submit templates here.';
  }
  return undefined;
}

function catalogueTable(templates: StoredTemplate[]): SafeHtml {
  if (templates.length === 0) return html`<p data-empty-catalogue>No templates yet. Sync to read your templates from Meta, or submit one below.</p>`;
  return dataTable({
    label: 'WhatsApp templates',
    columns: [{ head: 'Name' }, { head: 'Language' }, { head: 'Status' }, { head: 'Category' }, { head: 'Quality' }, { head: 'Rejection reason' }, { head: 'Parameters' }, { head: 'Synced' }],
    rows: templates.map((t) => ({
      attrs: html`data-template="${templateChoice(t.name, t.language)}"`,
      cells: [
        html`<code>${t.name}</code>`, html`<code>${t.language}</code>`, statusBadge(t.status),
        t.category ? t.category.toLowerCase() : '—', qualityWords(t.quality_score),
        t.rejected_reason ? t.rejected_reason.toLowerCase().replace(/_/g, ' ') : '—',
        describeParameters(t.parameters), time(t.synced_at),
      ],
    })),
  });
}

function legend(): SafeHtml {
  return html`<details>
<summary>What the statuses mean</summary>
<dl class="status-legend">${Object.keys(STATUS_MEANINGS).map((s) => html`<dt>${statusBadge(s)}</dt><dd>${STATUS_MEANINGS[s]}</dd>`)}</dl>
</details>`;
}

function submitForm(csrf: string, f: SubmitForm, errors: SubmitErrors): SafeHtml {
  return html`<form method="post" action="${TEMPLATES_PATH}" novalidate data-submit-template>
<input type="hidden" name="_csrf" value="${csrf}">
<div class="grid">
  <div>${input(f, errors, 'name', 'Name', html`required maxlength="512" autocomplete="off"`, 'Lower-case letters, digits and underscores, e.g. order_shipped.')}</div>
  <div>${input(f, errors, 'language', 'Language', html`required maxlength="16"`, 'A language code Meta knows, e.g. en_US or de.')}</div>
  <div><label for="t_category">Category</label>
  <select id="t_category" name="category"${described(errors, 'category')}>
    ${['UTILITY', 'MARKETING', 'AUTHENTICATION'].map((c) => html`<option value="${c}"${f.category === c ? html` selected` : ''}>${c.toLowerCase()}</option>`)}
  </select>
  ${err(errors, 'category')}</div>
</div>
<fieldset>
  <legend>Header (optional)</legend>
  <div class="grid">
    <div>${input(f, errors, 'header_text', 'Header text', html`maxlength="60"`, 'At most 60 characters and one placeholder {{1}}.')}</div>
    <div>${input(f, errors, 'header_example', 'Sample value for the header\'s {{1}}', html`maxlength="60"`)}</div>
  </div>
</fieldset>
<label for="t_body">Body</label>
<textarea id="t_body" name="body" rows="5" required maxlength="1024"${described(errors, 'body', 't_body-hint')}>${f.body}</textarea>
<small id="t_body-hint" class="muted">Numbered placeholders {{1}}, {{2}}, … in order; your automations and campaigns fill them.</small>
${err(errors, 'body')}
<label for="t_body_examples">Sample values for the body's placeholders (one per line, in order)</label>
<textarea id="t_body_examples" name="body_examples" rows="3"${described(errors, 'body_examples')}>${f.body_examples}</textarea>
${err(errors, 'body_examples')}
<fieldset>
  <legend>URL button (optional)</legend>
  <div class="grid">
    <div>${input(f, errors, 'button_text', 'Button text', html`maxlength="25"`)}</div>
    <div>${input(f, errors, 'button_url', 'Button URL', html`maxlength="2000" inputmode="url"`, 'https://…; may end with {{1}}.')}</div>
    <div>${input(f, errors, 'button_example', 'Sample URL for the {{1}}', html`maxlength="2000" inputmode="url"`)}</div>
  </div>
</fieldset>
<button type="submit">Submit to Meta for review</button>
</form>`;
}

/** The whole Templates page (see the module comment). */
export function templatesView(m: TemplatesPage): SafeHtml {
  const ready = m.channel.state === 'ready';
  const channelNote = channelProblem(m.channel);
  return html`<h1>WhatsApp templates</h1>
<p>Meta owns your WhatsApp message templates and reviews each one. This is the service's copy of them: it is read from Meta every hour, when Meta reports a change, and when you press Sync now. Automations and campaigns can only use approved templates.</p>
${m.problem ? html`<p class="error" role="alert" data-problem>${m.problem}</p>` : ''}
${channelNote && m.problem !== channelNote ? html`<p class="notice" role="note" data-channel-note>${channelNote}</p>` : ''}
<section aria-labelledby="catalogue-title">
<h2 id="catalogue-title">Catalogue</h2>
${ready && m.canEdit ? html`<form method="post" action="${TEMPLATES_PATH}/sync" class="sync-form" data-sync><input type="hidden" name="_csrf" value="${m.csrf}"><button type="submit" class="secondary">Sync now</button></form>` : ''}
${catalogueTable(m.templates)}
${legend()}
</section>
<section aria-labelledby="submit-title">
<h2 id="submit-title">Submit a new template</h2>
${!m.canEdit ? readOnlyNote('templates') : ready
    ? html`<p>The template goes to Meta for review and appears above as pending; it becomes usable once Meta approves it (sync to see).</p>
${submitForm(m.csrf, m.submit, m.submitErrors)}`
    : html`<p>Not possible until the channel is set up (see above).</p>`}
</section>`;
}
