/**
 * The Contacts list and search page (routes/contacts.ts): a search by number, and either the contacts
 * found or the contacts that wrote most recently, each with its opt-out state.
 */
import type { ContactListRow } from '../queries/contacts.ts';
import { badge, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { dataTable } from './table.ts';

export interface ContactsViewModel { query: string; rows: ContactListRow[]; searched: boolean }

/** Link to a contact's page (by E.164 number). */
export function contactLink(phone: string): SafeHtml {
  return html`<a href="${BASE}/contacts/${encodeURIComponent(phone)}">${phone}</a>`;
}

/** "opted out (keyword, 2026-…)" or "subscribed". */
export function optOutState(c: { opted_out: boolean; opt_out_source: string | null }): SafeHtml {
  return c.opted_out ? badge('opted_out') : badge('subscribed');
}

function searchForm(query: string): SafeHtml {
  return html`<search><form method="get" action="${BASE}/contacts" class="search">
  <label for="q">Find a contact by phone number</label>
  <div role="group">
    <input id="q" name="q" type="search" inputmode="tel" autocomplete="off" maxlength="64" value="${query}" placeholder="+49 151 12345678" aria-describedby="q-hint">
    <button type="submit">Search</button>
  </div>
  <small id="q-hint">A full number (without country code your company's default country is assumed), or at least 4 of its digits.</small>
</form></search>`;
}

/** The page body. */
export function contactsView(m: ContactsViewModel): SafeHtml {
  const table = m.rows.length
    ? dataTable({
      label: m.searched ? 'Contacts found' : 'Contacts who wrote recently',
      columns: [{ head: 'Phone' }, { head: 'Name' }, { head: 'Campaigns' }, { head: 'Opt-out source' }, { head: 'Since' }, { head: 'Last message in' }],
      rows: m.rows.map((c) => ({
        cells: [contactLink(c.phone), [c.first_name, c.last_name].filter(Boolean).join(' ') || '—', optOutState(c),
          c.opt_out_source ?? '—', time(c.opt_out_at), time(c.last_inbound_at)],
      })),
    })
    : html`<p>${m.searched ? 'No contact matches.' : 'No contact has written yet.'}</p>`;
  return html`${searchForm(m.query)}
<h2>${m.searched ? 'Search results' : 'Recent inbound'}</h2>
${table}`;
}
