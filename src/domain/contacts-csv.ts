/**
 * The contacts CSV format, shared by `cms contacts import` (src/cli/csv-import.ts), the console's
 * upload and the `contacts-import` job, and written back by the export
 * (contacts-export.ts), so an export imports again unchanged.
 *
 * - A header row names the columns: `phone` (required), `first_name`, `last_name`, `opted_out`
 *   (matched case-insensitively), `tags`; the EXPORT_ONLY_COLUMNS (`opt_out_source`, `opt_out_at` and
 *   the facts) are written by the export and ignored on import; every other column becomes a variable
 *   of that name.
 * - The delimiter is `,`, `;`, tab or `|`: detected from the header row (`detectDelimiter`).
 * - Empty cells are left out (they do not overwrite stored values); `opted_out` is true/yes/y/1 or
 *   false/no/n/0 in any case.
 * - Names and variables keep the rules of an edit by hand (contact-rules.ts): a variable column's name
 *   must be a variable name (else the file is refused, naming the column); a row whose names or values
 *   break the rules is reported with its line and not imported (CsvRowRuleError).
 * - Cells the export writes formula-safe (formulaSafe) lose the added `'` on import (unescapeFormula).
 * Errors: `CsvFormatError` with the 1-based line number where one applies.
 */
import { contactFieldProblems, variableNameProblem } from './contact-rules.ts';

/** A problem with the file (header) or one row; `line` is 1-based when it concerns a row. */
export class CsvFormatError extends Error {
  readonly line: number | undefined;
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.line = line;
  }
}

/** One contact as read from a row (phone as written; normalised later). */
export interface CsvContact {
  phone: string;
  first_name?: string;
  last_name?: string;
  variables?: Record<string, string>;
  opted_out?: boolean;
  /** The `tags` column: replaces the contact's tags (splitTags). */
  tags?: string[];
}

const RESERVED = new Set(['phone', 'first_name', 'last_name', 'opted_out', 'tags']);

/** Tags in one CSV cell: separated by `|`; a `|` or `\` inside a tag is written `\|` / `\\` (joinTags). */
export function joinTags(tags: string[]): string {
  return tags.map((t) => t.replace(/[\\|]/g, (c) => `\\${c}`)).join('|');
}

/** The tags of a CSV cell written by joinTags (empty parts dropped). */
export function splitTags(cell: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < cell.length; i++) {
    const ch = cell[i];
    if (ch === '\\' && i + 1 < cell.length) cur += cell[++i];
    else if (ch === '|') { out.push(cur); cur = ''; } else cur += ch;
  }
  out.push(cur);
  return out.filter((t) => t !== '');
}
/**
 * Spreadsheet formula injection (OWASP "CSV Injection"): Excel, LibreOffice and Google Sheets run a cell
 * as a formula when it starts with `=`, `+`, `-`, `@`, a tab or a carriage return, and some of them
 * skip leading white space or read full-width forms (`＝`, `＋`, `－`, `＠`) as the ASCII ones first.
 * `runsAsFormula` is that test: a cell starting with tab or CR, or whose first character after leading
 * white space is one of `=+-@`, read as it is and after NFKC normalisation (which maps the full-width
 * and small forms to ASCII). The export writes such a cell, header cells included, with a leading `'`
 * (`formulaSafe`), and the import takes that `'` off again (`unescapeFormula`), so an export still
 * imports unchanged. A cell that already starts with one or more `'` before such a cell gets one
 * more, so the two are exact inverses for every string.
 * The `phone` column's cells are exempt when they are E.164 (`isE164`: `+` and digits only), which no
 * spreadsheet runs as anything but a number and other tools read as written; anything else there is
 * escaped like any cell (docs/contacts.md#exports-are-formula-safe).
 */
const FORMULA_FIRST = /^[=+\-@]/;
const LEADING_CONTROL = /^[\t\r]/;

/** True when a spreadsheet could run `cell` as a formula (see above). */
export function runsAsFormula(cell: string): boolean {
  if (LEADING_CONTROL.test(cell) || FORMULA_FIRST.test(cell.trimStart())) return true;
  const n = cell.normalize('NFKC');
  return LEADING_CONTROL.test(n) || FORMULA_FIRST.test(n.trimStart());
}

/** `cell` without its leading `'` runs as a formula: the shape formulaSafe escapes. */
const quotedFormula = (cell: string) => runsAsFormula(cell.replace(/^'+/, ''));

/** A cell as the export writes it: prefixed with `'` when a spreadsheet would run it as a formula. */
export function formulaSafe(cell: string): string {
  return quotedFormula(cell) ? `'${cell}` : cell;
}

/** The inverse of formulaSafe: a cell read on import loses the one `'` the export added. */
export function unescapeFormula(cell: string): string {
  return cell.startsWith("'") && quotedFormula(cell) ? cell.slice(1) : cell;
}

/** An E.164 number as the service stores it: `+` and 1 to 15 digits (the export writes it unescaped). */
export function isE164(cell: string): boolean {
  return /^\+[1-9][0-9]{0,14}$/.test(cell);
}

/**
 * Columns the export writes for information; not imported: the opt-out's source and time and the
 * facts the service keeps (the number's country as `phone_country`, so it never clashes with a
 * `country` variable of the company's own; the last inbound / sent / delivered / read times).
 */
export const EXPORT_ONLY_COLUMNS = ['opt_out_source', 'opt_out_at', 'phone_country', 'last_inbound_at', 'last_sent_at', 'last_delivered_at', 'last_read_at'] as const;
const IGNORED = new Set<string>(EXPORT_ONLY_COLUMNS);
const TRUE = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'f', 'no', 'n', '0']);

/** Delimiters a contacts CSV may use, in order of preference. */
export const DELIMITERS = [',', ';', '\t', '|'] as const;

/**
 * The delimiter of a CSV from its first line (the header): the first of DELIMITERS that splits it into
 * a `phone` column, else the one occurring most often, else `,`.
 */
export function detectDelimiter(firstLine: string): string {
  const line = firstLine.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0];
  for (const d of DELIMITERS) {
    if (line.split(d).some((h) => h.trim().replace(/^"|"$/g, '').trim().toLowerCase() === 'phone')) return d;
  }
  let best = ',';
  let most = 0;
  for (const d of DELIMITERS) {
    const n = line.split(d).length - 1;
    if (n > most) { best = d; most = n; }
  }
  return best;
}

/** `true/yes/y/1` → true, `false/no/n/0` → false (any case), empty → undefined, else an error. */
export function parseOptedOut(value: string, line: number): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === '') return undefined;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new CsvFormatError(`opted_out must be true/false (or yes/no, 1/0), got "${value}"`, line);
}

/**
 * Maps the header row: each cell trimmed and unescaped (unescapeFormula: the export writes header cells
 * formula-safe too), reserved names lower-cased, others kept as variable names. Throws CsvFormatError
 * (no line: it concerns the file) when there is no `phone` column, a name is empty or twice, or a
 * variable column's name is no variable name (contact-rules.ts variableNameProblem): such a file is
 * refused whole, naming the column, so no part of it is imported under a name no edit could give.
 */
export function normalizeHeader(header: string[]): string[] {
  const names = header.map((h) => {
    const t = unescapeFormula(h.trim());
    const lower = t.toLowerCase();
    return RESERVED.has(lower) || IGNORED.has(lower) ? lower : t;
  });
  if (!names.includes('phone')) {
    throw new CsvFormatError(`the CSV header has no "phone" column (columns: ${names.join(', ') || 'none'})`);
  }
  const seen = new Set<string>();
  for (const n of names) {
    if (n === '') throw new CsvFormatError('the CSV header has an empty column name');
    if (seen.has(n)) throw new CsvFormatError(`the CSV header names column "${n}" twice`);
    seen.add(n);
    if (!RESERVED.has(n) && !IGNORED.has(n) && variableNameProblem(n)) {
      throw new CsvFormatError(`the CSV header's column "${n.slice(0, 70)}" is no variable name (a letter or _, then letters, digits or _, at most 64): rename or remove the column`);
    }
  }
  return names;
}

/**
 * A row that breaks a rule of contact-rules.ts (a name or variable value too long, too many
 * variables): every reader skips the row and reports it with its line (the import job in its errors,
 * `cms contacts import` in its rows not imported), and the others are imported.
 */
export class CsvRowRuleError extends CsvFormatError {}

/**
 * One record (keys from `normalizeHeader`) as a contact, or null when it has no phone. Throws
 * CsvFormatError (with `line`) for a bad `opted_out` or `tags` cell, CsvRowRuleError when the contact
 * breaks contact-rules.ts.
 */
export function recordToContact(record: Record<string, string>, line: number): CsvContact | null {
  const phone = (record.phone ?? '').trim();
  if (phone === '') return null;
  const contact: CsvContact = { phone };
  const variables: Record<string, string> = {};
  for (const [key, raw] of Object.entries(record)) {
    const value = unescapeFormula(raw ?? '');
    if (key === 'phone' || IGNORED.has(key)) continue;
    if (key === 'opted_out') {
      const b = parseOptedOut(value, line);
      if (b !== undefined) contact.opted_out = b;
    } else if (value === '') {
      continue;
    } else if (key === 'tags') {
      const tags = splitTags(value);
      if (tags.length > 100 || tags.some((t) => [...t].length > 64)) throw new CsvFormatError('tags: at most 100, each at most 64 characters', line);
      contact.tags = tags;
    } else if (key === 'first_name') contact.first_name = value;
    else if (key === 'last_name') contact.last_name = value;
    else variables[key] = value;
  }
  if (Object.keys(variables).length > 0) contact.variables = variables;
  const [problem] = contactFieldProblems(contact);
  if (problem) throw new CsvRowRuleError(`${problem.field}: ${problem.message}`, line);
  return contact;
}

/** The csv-parse options every reader of the format uses (`columns` maps the header). */
export function csvParseOptions(delimiter: string) {
  return {
    bom: true,
    trim: true,
    delimiter,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    info: true,
    columns: (header: string[]) => normalizeHeader(header),
  } as const;
}
