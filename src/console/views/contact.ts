/**
 * One contact (routes/contact.ts): its fields, variables, tags, segments, the facts the service keeps
 * (country of the number, last message in, last sent / delivered / read), opt-out state with source
 * and time and its history (changes by hand), the messages sent to it with
 * their status and its inbound messages, newest first. For roles that may change contacts: the edit
 * form (names and variables; errors beside the field, input kept), the tags form (add several, remove
 * one; errors beside the field), the opt-out button and the link to erase it. Its consent history: every
 * change of its opt-out state with source and evidence, oldest first (the consent ledger,
 * docs/audience.md). The erase confirmation page is `contactEraseView`.
 */
import type { ConsentEntry } from '../../domain/consent.ts';
import type { ContactView } from '../../domain/contacts.ts';
import { VARIABLE_VALUE_MAX } from '../../domain/contacts.ts';
import { badge, num, readOnlyNote, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { kindLabel, reasonOf } from './sends.ts';
import { dataTable } from './table.ts';
import { tagList } from './contacts.ts';

/** One variable row of the edit form as shown (values as text). */
export interface VariableRow { name: string; value: string }

/** The edit form's state: values as typed, and problems by field (`first_name`, `last_name`, `variables`). */
export interface ContactForm { first_name: string; last_name: string; variables: VariableRow[] }
export type ContactFormErrors = Partial<Record<'first_name' | 'last_name' | 'variables', string>>;

/** Empty variable rows offered below the existing ones. */
export const EXTRA_VARIABLE_ROWS = 3;

/** A stored variable value as the form shows it (strings as they are, anything else as JSON). */
export function variableText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The form filled from the stored contact. */
export function formOf(c: ContactView): ContactForm {
  return {
    first_name: c.first_name ?? '', last_name: c.last_name ?? '',
    variables: Object.entries(c.variables ?? {}).map(([name, v]) => ({ name, value: variableText(v) })),
  };
}

export interface ContactPageModel {
  contact: ContactView; consent: ConsentEntry[]; csrf: string; canChange: boolean; form: ContactForm; errors: ContactFormErrors;
  /** The name of each message's automation or campaign, by batch id (the send is linked by it). */
  sourceNames?: Map<string, string | null>;
  /** The tags form as sent and its problem (after a refused change). */
  tagsInput?: string;
  tagsError?: string;
}

/** The opt-out button's wording (also the consent ledger's evidence of a change made with it). */
export const OPT_OUT_WORDING = 'Opt out of campaigns';
export const OPT_IN_WORDING = 'Opt back in to campaigns';

/** A ledger entry's evidence as text: its fields as `name: value`, in the order given (src/domain/consent.ts). */
export function evidenceText(e: Record<string, unknown> | null): string {
  if (!e) return '—';
  const parts = Object.entries(e).map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length ? parts.join('; ') : '—';
}

function consentTable(entries: ConsentEntry[]): SafeHtml {
  if (!entries.length) return html`<p>No change of consent recorded: subscribed to campaigns by default.</p>`;
  return dataTable({
    label: 'Consent history',
    columns: [{ head: 'When' }, { head: 'Change' }, { head: 'Source' }, { head: 'Category' }, { head: 'Evidence' }],
    rows: entries.map((e) => ({ cells: [time(e.at), e.opted_out ? 'Opted out' : 'Opted in', e.source, e.category, evidenceText(e.evidence)] })),
  });
}

const err = (e: ContactFormErrors, k: keyof ContactFormErrors) => (e[k] ? html`<small id="${k}-error" class="error" role="alert">${e[k]}</small>` : '');
const inv = (e: ContactFormErrors, k: keyof ContactFormErrors) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-error"` : '');

function editForm(m: ContactPageModel, key: string): SafeHtml {
  const rows = [...m.form.variables, ...Array.from({ length: EXTRA_VARIABLE_ROWS }, () => ({ name: '', value: '' }))];
  return html`<section aria-labelledby="edit-h" class="narrow">
<h2 id="edit-h">Edit</h2>
<form method="post" action="${BASE}/contacts/${encodeURIComponent(key)}/edit" novalidate>
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <input type="hidden" name="var_count" value="${rows.length}">
  <label for="first_name">First name</label>
  <input id="first_name" name="first_name" type="text" maxlength="255" autocomplete="off" value="${m.form.first_name}"${inv(m.errors, 'first_name')}>
  ${err(m.errors, 'first_name')}
  <label for="last_name">Last name</label>
  <input id="last_name" name="last_name" type="text" maxlength="255" autocomplete="off" value="${m.form.last_name}"${inv(m.errors, 'last_name')}>
  ${err(m.errors, 'last_name')}
  <fieldset${m.errors.variables ? html` aria-describedby="variables-error"` : ''}>
    <legend>Variables</legend>
    <p id="vars-hint" class="muted">Used by templates as <code>{{ name }}</code>. Clear a name to remove its variable; the empty rows add new ones.</p>
    ${err(m.errors, 'variables')}
    ${rows.map((r, i) => html`<div class="grid">
      <div><label for="var_name_${i}">Name ${i + 1}</label><input id="var_name_${i}" name="var_name_${i}" type="text" maxlength="64" autocomplete="off" value="${r.name}"${m.errors.variables ? html` aria-invalid="true"` : ''}></div>
      <div><label for="var_value_${i}">Value ${i + 1}</label><input id="var_value_${i}" name="var_value_${i}" type="text" maxlength="${VARIABLE_VALUE_MAX}" autocomplete="off" value="${r.value}"></div>
    </div>`)}
  </fieldset>
  <button type="submit">Save changes</button>
</form>
</section>`;
}

function tagsForm(m: ContactPageModel, key: string): SafeHtml {
  const c = m.contact;
  const action = `${BASE}/contacts/${encodeURIComponent(key)}/tags`;
  return html`<section aria-labelledby="tags-h" class="narrow" data-tags-form>
<h2 id="tags-h">Tags</h2>
${c.tags.length ? html`<ul class="tag-list" aria-label="Tags of this contact">${c.tags.map((t) => html`<li><span class="tag">${t}</span>
  <form method="post" action="${action}" class="inline-form"><input type="hidden" name="_csrf" value="${m.csrf}"><input type="hidden" name="remove" value="${t}"><button type="submit" class="secondary outline small">Remove<span class="visually-hidden"> tag ${t}</span></button></form></li>`)}</ul>`
    : html`<p>No tags yet.</p>`}
<form method="post" action="${action}" novalidate>
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <label for="add_tags">Add tags <small>(separate several with commas; each 1 to 64 characters, at most 100 per contact)</small></label>
  <div role="group">
    <input id="add_tags" name="add" type="text" autocomplete="off" maxlength="2000" value="${m.tagsInput ?? ''}"${m.tagsError ? html` aria-invalid="true" aria-describedby="tags-error"` : ''}>
    <button type="submit">Add tags</button>
  </div>
  ${m.tagsError ? html`<small id="tags-error" class="error" role="alert">${m.tagsError}</small>` : ''}
</form>
</section>`;
}

function optOutForm(m: ContactPageModel, key: string): SafeHtml {
  const c = m.contact;
  return html`<form method="post" action="${BASE}/contacts/${encodeURIComponent(key)}/opt-out" class="inline-form">
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <input type="hidden" name="opted_out" value="${c.opted_out ? 'false' : 'true'}">
  <button type="submit" class="secondary small">${c.opted_out ? OPT_IN_WORDING : OPT_OUT_WORDING}</button>
</form>`;
}

function historyTable(c: ContactView): SafeHtml {
  if (!c.history.length) return html`<p>No changes by hand.</p>`;
  return dataTable({
    label: 'History',
    columns: [{ head: 'When' }, { head: 'Who' }, { head: 'What' }],
    rows: c.history.map((h) => {
      const d = h.details as { changed?: string[]; opted_out?: boolean; tags_added?: string[]; tags_removed?: string[] };
      const tagsChange = () => [d.tags_added?.length ? `tags added: ${d.tags_added.join(', ')}` : '', d.tags_removed?.length ? `tags removed: ${d.tags_removed.join(', ')}` : ''].filter(Boolean).join('; ') || 'tags changed';
      const what = h.action === 'contact.update'
        ? [
          ...(d.changed ?? []).filter((f) => f !== 'opted_out').map((f) => (f === 'tags' ? tagsChange() : `${f.replace('_', ' ')} changed`)),
          ...(d.changed?.includes('opted_out') ? [d.opted_out ? 'opted out of campaigns' : 'opted back in'] : []),
        ].join(', ')
        : h.action;
      return { cells: [time(h.at), h.actor.replace(/^console:/, ''), what] };
    }),
  });
}

/** A link to a send, named by its source (the first characters of its id when the source is gone). */
function sendLink(batchId: string, name: string | null | undefined): SafeHtml {
  return name ? html`<a href="${BASE}/sends/${batchId}">${name}</a>` : html`<a href="${BASE}/sends/${batchId}">send <code>${batchId.slice(0, 8)}</code></a>`;
}

/** The page body. */
export function contactView(m: ContactPageModel): SafeHtml {
  const c = m.contact;
  const key = c.phone;
  const vars = Object.entries(c.variables ?? {});
  const inbound = c.inbound.length
    ? dataTable({
      label: 'Inbound messages',
      columns: [{ head: 'Received' }, { head: 'Type' }, { head: 'Text' }, { head: 'Payload' }],
      rows: c.inbound.map((x) => ({ cells: [time(x.received_at), x.type, x.text ?? '—', x.payload ?? '—'] })),
    })
    : html`<p>No inbound messages.</p>`;
  const sent = c.messages.length
    ? dataTable({
      label: 'Messages sent',
      columns: [{ head: 'Send' }, { head: 'Kind' }, { head: 'Status' }, { head: 'Reason' }, { head: 'Sent' }, { head: 'Delivered' }, { head: 'Read' }, { head: 'Failed' }],
      rows: c.messages.map((x) => ({
        cells: [sendLink(x.batch_id, m.sourceNames?.get(x.batch_id)), kindLabel(x.kind), badge(x.status), reasonOf(x),
          time(x.sent_at), time(x.delivered_at), time(x.read_at), time(x.failed_at)],
      })),
    })
    : html`<p>No messages sent.</p>`;
  return html`<h1>${[c.first_name, c.last_name].filter(Boolean).join(' ') || c.phone}</h1>
<section aria-labelledby="contact-h">
<h2 id="contact-h">${c.phone}</h2>
<dl class="facts">
  <dt>Phone</dt><dd>${c.phone}</dd>
  <dt>Name</dt><dd>${[c.first_name, c.last_name].filter(Boolean).join(' ') || '—'}</dd>
  <dt>Campaigns</dt><dd data-opted-out="${String(c.opted_out)}">${c.opted_out ? badge('opted_out') : badge('subscribed')} ${m.canChange ? optOutForm(m, key) : ''}</dd>
  <dt>Opt-out source</dt><dd data-opt-out-source>${c.opt_out_source ?? '—'}</dd>
  <dt>Opt-out changed</dt><dd>${time(c.opt_out_at)}</dd>
  <dt>Tags</dt><dd data-tags>${tagList(c.tags)}</dd>
  <dt>Country of the number</dt><dd data-country>${c.country || '—'}</dd>
  <dt>Last message in</dt><dd data-last-inbound-at>${time(c.last_inbound_at)}</dd>
  <dt>Last message sent</dt><dd data-last-sent-at>${time(c.last_sent_at)}</dd>
  <dt>Last delivered</dt><dd data-last-delivered-at>${time(c.last_delivered_at)}</dd>
  <dt>Last read</dt><dd data-last-read-at>${time(c.last_read_at)}</dd>
  <dt>Reply window until</dt><dd data-window-open-until>${time(c.window_open_until)}</dd>
  <dt>Segments</dt><dd data-segments>${c.segments.length ? c.segments.map((s, i) => html`${i ? ', ' : ''}<a href="${BASE}/segments/${s.segment_id}">${s.name}</a>`) : '—'}</dd>
  <dt>Created</dt><dd>${time(c.created_at)}</dd>
  <dt>Variables</dt><dd data-variables>${vars.length ? vars.map(([k, v]) => html`<code>${k}</code> = ${variableText(v)}<br>`) : '—'}</dd>
</dl>
</section>
${m.canChange ? tagsForm(m, key) : ''}
${m.canChange ? editForm(m, key) : ''}
<h2>History</h2>
${historyTable(c)}
<h2 id="consent-h">Consent history</h2>
<div data-consent>${consentTable(m.consent)}</div>
<h2>Messages sent</h2>
${sent}
<h2>Inbound messages</h2>
${inbound}
${m.canChange ? html`<h2>Erase</h2>
<p>Erasing removes this person's number, names and variables from the contact, its messages and replies (a right-to-erasure request). Counts of sends are kept.</p>
<p><a href="${BASE}/contacts/${encodeURIComponent(key)}/erase" class="danger-link">Erase this contact…</a></p>` : ''}`;
}

/** The erase confirmation page (without `canErase`, the read-only note instead of the form). */
export function contactEraseView(m: { contact: ContactView; csrf: string; error?: string; canErase?: boolean }): SafeHtml {
  const c = m.contact;
  return html`<h1>Erase ${c.phone}?</h1>
<section class="narrow" aria-labelledby="erase-h">
<h2 id="erase-h">What happens</h2>
<ul>
  <li>The number, first and last name and ${Object.keys(c.variables ?? {}).length} variables of this contact are removed for good.</li>
  <li>The ${num(c.messages.length)} messages sent to it lose the number and their text; their statuses stay, so send counts do not change.</li>
  <li>Its ${num(c.inbound.length)} replies lose their text; it leaves its ${num(c.segments.length)} segments.</li>
  <li>This cannot be undone. If the number is sent to again later, a new contact is created.</li>
  <li>Its consent history is kept without personal data (under a one-way digest of the number): ${c.opted_out ? html`<strong>the number stays opted out of campaigns</strong> if it comes back, until it opts in again` : 'a new contact for the number starts in the state it has now'}.</li>
</ul>
${m.canErase === false ? html`${readOnlyNote('contacts')}<p><a href="${BASE}/contacts/${encodeURIComponent(c.phone)}">Back to the contact</a></p>` : html`<form method="post" action="${BASE}/contacts/${encodeURIComponent(c.phone)}/erase">
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <label for="confirm"><input id="confirm" name="confirm" type="checkbox" value="yes" required${m.error ? html` aria-invalid="true" aria-describedby="confirm-error"` : ''}> I understand that the personal data of this contact is removed for good</label>
  ${m.error ? html`<small id="confirm-error" class="error" role="alert">${m.error}</small>` : ''}
  <div class="actions"><button type="submit" class="danger">Erase contact</button><a href="${BASE}/contacts/${encodeURIComponent(c.phone)}">Cancel</a></div>
</form>`}
</section>`;
}
