/**
 * The Contacts list and search page (routes/contacts.ts): a search by
 * number or name, the contacts found (or every contact) paged by number, each with its opt-out state and
 * last inbound message, and the links to import and export.
 */
import type { ContactListRow } from '../../db/contacts.ts';
import { badge, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { dataTable } from './table.ts';

export interface ContactsViewModel {
  query: string;
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

function searchForm(query: string, error?: string): SafeHtml {
  const described = error ? 'q-error q-hint' : 'q-hint';
  return html`<search><form method="get" action="${BASE}/contacts" class="search">
  <label for="q">Find a contact by phone number or name</label>
  <div role="group">
    <input id="q" name="q" type="search" autocomplete="off" maxlength="64" value="${query}" placeholder="+49 151 12345678 or Ada Lovelace" aria-describedby="${described}"${error ? html` aria-invalid="true"` : ''}>
    <button type="submit">Search</button>
  </div>
  ${error ? html`<small id="q-error" class="error" role="alert">${error}</small>` : ''}
  <small id="q-hint">A full number (without country code your company's default country is assumed), at least 4 of its digits, or the beginning of a first or last name.</small>
</form></search>`;
}

/** The page body. */
export function contactsView(m: ContactsViewModel): SafeHtml {
  const table = m.rows.length
    ? dataTable({
      label: m.searched ? 'Contacts found' : 'Contacts',
      columns: [{ head: 'Phone' }, { head: 'Name' }, { head: 'Campaigns' }, { head: 'Opt-out source' }, { head: 'Since' }, { head: 'Last message in' }],
      rows: m.rows.map((c) => ({
        cells: [contactLink(c.phone), [c.first_name, c.last_name].filter(Boolean).join(' ') || '—', optOutState(c),
          c.opt_out_source ?? '—', time(c.opt_out_at), time(c.last_inbound_at)],
      })),
    })
    : html`<p>${m.searched ? 'No contact matches.' : 'No contacts yet.'}</p>`;
  const q = m.query ? `q=${encodeURIComponent(m.query)}&` : '';
  const pager = m.next || m.paged
    ? html`<nav class="pager" aria-label="Pages">${m.paged ? html`<a href="${BASE}/contacts${m.query ? `?q=${encodeURIComponent(m.query)}` : ''}">First page</a>` : ''}${m.next ? html`<a href="${BASE}/contacts?${q}after=${encodeURIComponent(m.next)}" rel="next">Next page</a>` : ''}</nav>`
    : '';
  return html`<h1>Contacts</h1>
<p class="actions">${m.canChange ? html`<a href="${BASE}/contacts/import" role="button">Import CSV</a>` : ''}<a href="${BASE}/contacts/export.csv" role="button" class="secondary" download>Export all as CSV</a></p>
${searchForm(m.query, m.error)}
<h2>${m.searched ? 'Search results' : 'All contacts'}</h2>
${table}
${pager}`;
}
