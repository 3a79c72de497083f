/**
 * The Contacts list and search page (routes/contacts.ts): a search by
 * number or name and a tag filter, the contacts found (or every contact) paged by number, each with its
 * opt-out state, last inbound message and tags, and the links to import and export. A search page
 * looks at a bounded window of contacts (docs/contacts.md "Search"): one that
 * found nothing there says so and links the next page, which searches on.
 */
import { SEARCH_SCAN_ROWS, type ContactListRow } from '../../db/contacts.ts';
import { badge, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { dataTable } from './table.ts';

export interface ContactsViewModel {
  query: string;
  /** The tag the list is narrowed to ('' none). */
  tag: string;
  /** Tags the filter field suggests. */
  knownTags: string[];
  rows: ContactListRow[];
  searched: boolean;
  /** A search that cannot run (shown beside the field). */
  error?: string;
  /** Cursor of the next page, or null on the last. */
  next: string | null;
  /** True when this is not the first page. */
  paged: boolean;
  /** The user's role may import. */
  canChange: boolean;
}

/** Link to a contact's page (by E.164 number). */
export function contactLink(phone: string): SafeHtml {
  return html`<a href="${BASE}/contacts/${encodeURIComponent(phone)}">${phone}</a>`;
}

/** "opted out" or "subscribed" as a badge. */
export function optOutState(c: { opted_out: boolean; opt_out_source: string | null }): SafeHtml {
  return c.opted_out ? badge('opted_out') : badge('subscribed');
}

/** Tags of a contact as small labels ('—' when none). */
export function tagList(tags: string[]): SafeHtml | string {
  return tags.length ? html`${tags.map((t, i) => html`${i ? ' ' : ''}<span class="tag">${t}</span>`)}` : '—';
}

function searchForm(m: ContactsViewModel): SafeHtml {
  const described = m.error ? 'q-error q-hint' : 'q-hint';
  return html`<search><form method="get" action="${BASE}/contacts" class="search">
  <div class="search-fields">
    <div>
      <label for="q">Find a contact by phone number or name</label>
      <input id="q" name="q" type="search" autocomplete="off" maxlength="64" value="${m.query}" placeholder="+49 151 12345678 or Ada Lovelace" aria-describedby="${described}"${m.error ? html` aria-invalid="true"` : ''}>
      ${m.error ? html`<small id="q-error" class="error" role="alert">${m.error}</small>` : ''}
      <small id="q-hint">A full number (without country code your company's default country is assumed), at least 4 of its digits, or the beginning of a first or last name.</small>
    </div>
    <div>
      <label for="tag">Only contacts with the tag</label>
      <input id="tag" name="tag" type="text" autocomplete="off" maxlength="64" value="${m.tag}" list="known-tags" aria-describedby="tag-hint">
      <datalist id="known-tags">${m.knownTags.map((t) => html`<option value="${t}"></option>`)}</datalist>
      <small id="tag-hint">The whole tag${m.knownTags.length ? ', e.g. ' + m.knownTags.slice(0, 3).join(', ') : ''}. Empty: any.</small>
    </div>
  </div>
  <div class="actions"><button type="submit">Search</button>${m.query || m.tag ? html`<a href="${BASE}/contacts">Show all contacts</a>` : ''}</div>
</form></search>`;
}

/** The page body. */
export function contactsView(m: ContactsViewModel): SafeHtml {
  const table = m.rows.length
    ? dataTable({
      label: m.searched ? 'Contacts found' : 'Contacts',
      columns: [{ head: 'Phone' }, { head: 'Name' }, { head: 'Campaigns' }, { head: 'Opt-out source' }, { head: 'Since' }, { head: 'Last message in' }, { head: 'Tags' }],
      rows: m.rows.map((c) => ({
        cells: [contactLink(c.phone), [c.first_name, c.last_name].filter(Boolean).join(' ') || '—', optOutState(c),
          c.opt_out_source ?? '—', time(c.opt_out_at), time(c.last_inbound_at), tagList(c.tags ?? [])],
      })),
    })
    : html`<p>${m.searched ? (m.next ? `No contact matches among the ${SEARCH_SCAN_ROWS.toLocaleString('en')} contacts searched on this page: the next page searches on.` : 'No contact matches.') : 'No contacts yet.'}</p>`;
  const params = [m.query ? `q=${encodeURIComponent(m.query)}` : '', m.tag ? `tag=${encodeURIComponent(m.tag)}` : ''].filter(Boolean);
  const first = params.length ? `?${params.join('&')}` : '';
  const q = params.map((p) => `${p}&`).join('');
  const pager = m.next || m.paged
    ? html`<nav class="pager" aria-label="Pages">${m.paged ? html`<a href="${BASE}/contacts${first}">First page</a>` : ''}${m.next ? html`<a href="${BASE}/contacts?${q}after=${encodeURIComponent(m.next)}" rel="next">Next page</a>` : ''}</nav>`
    : '';
  return html`<h1>Contacts</h1>
<p class="actions">${m.canChange ? html`<a href="${BASE}/contacts/import" role="button">Import CSV</a>` : ''}<a href="${BASE}/contacts/export.csv" role="button" class="secondary" download>Export all as CSV</a></p>
${searchForm(m)}
<h2>${m.searched ? (m.tag ? html`Search results: tag <span class="tag">${m.tag}</span>` : 'Search results') : 'All contacts'}</h2>
${table}
${pager}`;
}
