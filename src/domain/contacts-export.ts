/**
 * Export of all of a company's contacts as CSV, streamed in constant memory whatever
 * their number: keyset pages of EXPORT_PAGE_SIZE contacts (by phone) are read one at a time, only when
 * the reader has taken the previous page (backpressure through `Readable.from` and csv-stringify).
 *
 * Columns: `phone`, `first_name`, `last_name`, `opted_out` (true/false), `opt_out_source`, `opt_out_at`
 * (ISO 8601), `tags` (separated by `|`, contacts-csv.ts joinTags), then one column per variable name any contact uses (sorted; a value that is not a string
 * is written as JSON). Every cell but the phone is formula-safe (contacts-csv.ts formulaSafe: a leading `'`
 * before `=`, `+`, `-`, `@`, tab or CR). This is the import's format (contacts-csv.ts): importing an export changes
 * nothing (`opt_out_source` and `opt_out_at` are ignored on import). Erased contacts are left out.
 * Served by `GET /console/contacts/export.csv`, `GET /admin/companies/{id}/contacts/export` and
 * `cms contacts export`.
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Db } from '../db/database.ts';
import { exportPage, variableNames } from '../db/contacts.ts';
import { formulaSafe, joinTags } from './contacts-csv.ts';

/** Contacts read per query. */
export const EXPORT_PAGE_SIZE = 1000;

const FIXED = ['phone', 'first_name', 'last_name', 'opted_out', 'opt_out_source', 'opt_out_at', 'tags'] as const;

/** The file name offered for a company's export. */
export function exportFileName(companyId: number, now: Date): string {
  return `contacts-${companyId}-${now.toISOString().slice(0, 10)}.csv`;
}

/**
 * The CSV of the company's contacts as a byte stream (see the module comment). The header is known
 * before the first row is read (one query for the variable names). A database error mid-way destroys
 * the stream with that error.
 */
export async function contactsCsvStream(db: Db, companyId: number): Promise<Readable> {
  const vars = await variableNames(db, companyId);
  const columns = [...FIXED, ...vars];
  async function* rows(): AsyncGenerator<string[]> {
    let after = '';
    for (;;) {
      const page = await exportPage(db, companyId, after, EXPORT_PAGE_SIZE);
      for (const c of page) {
        const v = c.variables ?? {};
        yield [
          c.phone,
          ...[
            c.first_name ?? '', c.last_name ?? '', String(c.opted_out), c.opt_out_source ?? '',
            c.opt_out_at ? new Date(c.opt_out_at).toISOString() : '', joinTags(c.tags ?? []),
            ...vars.map((k) => {
              const x = v[k];
              return x === undefined || x === null ? '' : typeof x === 'string' ? x : JSON.stringify(x);
            }),
          ].map(formulaSafe),
        ];
      }
      if (page.length < EXPORT_PAGE_SIZE) return;
      after = page[page.length - 1].phone;
    }
  }
  const source = Readable.from(rows(), { highWaterMark: 64 });
  const csv = stringify({ header: true, columns: columns as string[] });
  source.on('error', (err) => csv.destroy(err));
  return source.pipe(csv);
}
