/**
 * Export of all of a company's contacts as CSV, streamed in constant memory whatever
 * their number: keyset pages of EXPORT_PAGE_SIZE contacts (by phone) are read one at a time, only when
 * the reader has taken the previous page (backpressure through `Readable.from` and csv-stringify).
 *
 * Columns: `phone`, `first_name`, `last_name`, `opted_out` (true/false), `opt_out_source`, `opt_out_at`
 * (ISO 8601), `tags` (separated by `|`, contacts-csv.ts joinTags), the facts the service keeps
 * (docs/contacts.md "Tags and facts"): `phone_country` (ISO 3166 alpha-2 of the number, empty when it
 * has none), `last_inbound_at`, `last_sent_at`, `last_delivered_at`, `last_read_at` (ISO 8601), then
 * one column per variable name any contact uses (sorted; a value that is not a string is written as
 * JSON). Every cell, header cells included, is formula-safe (contacts-csv.ts formulaSafe: a leading `'`
 * when a spreadsheet could run it: `=`, `+`, `-`, `@` first after leading white space, also after NFKC
 * normalisation, or a tab or CR first), but an E.164 phone, written as it is; a cell with white space at
 * either end is quoted, so the import, which trims unquoted cells, reads it back whole. This is the import's format (contacts-csv.ts): importing an export
 * changes nothing (the opt-out's source and time and the facts are ignored on import). Erased contacts
 * are left out.
 * Served by `GET /console/contacts/export.csv`, `GET /admin/companies/{id}/contacts/export` and
 * `cms contacts export`.
 */
import { Readable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import { stringify } from 'csv-stringify';
import type { Db } from '../db/database.ts';
import { exportPage, variableNamesStep } from '../db/contacts.ts';
import { audit, type Actor } from './actor.ts';
import { formulaSafe, isE164, joinTags } from './contacts-csv.ts';
import { countryOf } from './phone.ts';

/** Contacts read per query. */
export const EXPORT_PAGE_SIZE = 1000;
/** Contacts whose variable names one statement reads (the header's columns). */
export const NAMES_STEP = 10_000;

const FIXED = ['phone', 'first_name', 'last_name', 'opted_out', 'opt_out_source', 'opt_out_at', 'tags',
  'phone_country', 'last_inbound_at', 'last_sent_at', 'last_delivered_at', 'last_read_at'] as const;

const isoOrEmpty = (d: Date | string | null) => (d ? new Date(d).toISOString() : '');

/** The file name offered for a company's export. */
export function exportFileName(companyId: number, now: Date): string {
  return `contacts-${companyId}-${now.toISOString().slice(0, 10)}.csv`;
}

/**
 * The variable names any of the company's live contacts uses, sorted by code point: read in bounded
 * steps of NAMES_STEP contacts, the event loop turning between them (on the embedded database other
 * requests' statements run in between: docs/security.md "Bounded work per request").
 */
async function variableNames(db: Db, companyId: number): Promise<string[]> {
  const names = new Set<string>();
  for (let after = 0; ;) {
    const step = await variableNamesStep(db, companyId, after, NAMES_STEP);
    for (const n of step.names) names.add(n);
    if (step.last === null) break;
    after = step.last;
    await turn();
  }
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The CSV of the company's contacts as a byte stream (see the module comment). The header is known
 * before the first row is read (the variable names, read in steps). Each page is one statement, and
 * the event loop turns between pages, so an export holds the service's thread for one page at a time.
 * A database error mid-way destroys the stream with that error.
 */
export async function contactsCsvStream(db: Db, companyId: number): Promise<Readable> {
  const vars = await variableNames(db, companyId);
  const columns = [...FIXED, ...vars];
  async function* rows(): AsyncGenerator<string[]> {
    // The header is a row like the others: a variable may be named `=…` (the public API takes any name).
    yield columns.map(formulaSafe);
    let after = '';
    for (;;) {
      const page = await exportPage(db, companyId, after, EXPORT_PAGE_SIZE);
      for (const c of page) {
        const v = c.variables ?? {};
        yield [
          isE164(c.phone) ? c.phone : formulaSafe(c.phone),
          ...[
            c.first_name ?? '', c.last_name ?? '', String(c.opted_out), c.opt_out_source ?? '',
            isoOrEmpty(c.opt_out_at), joinTags(c.tags ?? []),
            // A contact stored before migration 026 has no country yet: computed here (fillCountries stores it later).
            c.country ?? countryOf(c.phone), isoOrEmpty(c.last_inbound_at), isoOrEmpty(c.last_sent_at), isoOrEmpty(c.last_delivered_at), isoOrEmpty(c.last_read_at),
            ...vars.map((k) => {
              const x = v[k];
              return x === undefined || x === null ? '' : typeof x === 'string' ? x : JSON.stringify(x);
            }),
          ].map(formulaSafe),
        ];
      }
      if (page.length < EXPORT_PAGE_SIZE) return;
      after = page[page.length - 1].phone;
      await turn();
    }
  }
  const source = Readable.from(rows(), { highWaterMark: 64 });
  // A cell with white space at either end is quoted: the import trims unquoted cells (a file's stray
  // spaces), so only a quoted one comes back as it was written.
  const csv = stringify({ quoted_match: /^\s|\s$/ });
  source.on('error', (err) => csv.destroy(err));
  return source.pipe(csv);
}

/**
 * Command: the export of the company's contacts for `actor` (contactsCsvStream), audit-logged as
 * `contacts.export` on `company:<id>` (no details) once the stream is ready: personal data leaves the
 * service.
 */
export async function exportContacts(db: Db, actor: Actor, companyId: number): Promise<Readable> {
  const stream = await contactsCsvStream(db, companyId);
  await audit(db, actor, { action: 'contacts.export', target: `company:${companyId}`, companyId });
  return stream;
}
