/**
 * Lists of phone numbers or SHA-256 digests that a person gives to add or remove segment members
 *: pasted text, or a CSV file. Pure functions (no database), shared by the console,
 * whose answers name the line of each bad item, and by `cms segment add|remove --file`.
 *
 * - **Pasted text**: one item per line; a line may also hold several items separated by commas or
 *   semicolons. Surrounding spaces are dropped; a number with inner spaces (`0151 1234 5678`) stays one
 *   item. Empty items are skipped.
 * - **CSV file**: UTF-8 (a byte-order mark is allowed), comma-separated, at most `MAX_UPLOAD_BYTES`.
 *   The items are the column headed `phone` (also `phone_number`, `number`, `mobile`, `msisdn`, `e164`)
 *   or, for digests, `digest` (also `sha256`, `hash`, `phone_sha256`) when the first row names such a
 *   column, and the first column otherwise. Empty cells are skipped. UTF-16 or other encodings, binary
 *   files, semicolon- or tab-separated files and broken quoting are refused with a `ListError` saying
 *   what to do; nothing is read from such a file.
 */
import { parse } from 'csv-parse/sync';

/** Largest CSV file accepted (bytes): 5 MiB, about 300,000 numbers. */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

/** One item of a list with its 1-based position: the line of a paste or file, or the index + 1 in an API list. */
export interface ListItem { value: string; position: number }

/** A list that cannot be read (encoding, delimiter, quoting); `message` is meant for the person who gave it. */
export class ListError extends Error {}

/** The items of pasted text (see the module comment). */
export function itemsFromText(text: string): ListItem[] {
  const items: ListItem[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    for (const part of line.split(/[,;]/)) {
      const value = part.trim();
      if (value !== '') items.push({ value, position: i + 1 });
    }
  });
  return items;
}

const PHONE_HEADS = new Set(['phone', 'phone_number', 'number', 'mobile', 'msisdn', 'e164']);
const DIGEST_HEADS = new Set(['digest', 'sha256', 'hash', 'phone_sha256']);

/** The text of a CSV file's bytes; ListError for UTF-16, binary or non-UTF-8 content. */
export function decodeCsv(bytes: Uint8Array): string {
  if (bytes.length > MAX_UPLOAD_BYTES) throw new ListError(`The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB: split it into smaller files.`);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new ListError('The file is UTF-16 text: save it as "CSV UTF-8 (comma delimited)" and upload it again.');
  }
  if (bytes.includes(0)) throw new ListError('This is not a text file: upload a CSV file (UTF-8, comma-separated).');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const text = new TextDecoder('utf-8').decode(bytes);
    const line = text.slice(0, text.indexOf('\uFFFD')).split(/\r\n|\r|\n/).length;
    throw new ListError(`The file is not UTF-8 text (line ${line}): save it as "CSV UTF-8 (comma delimited)" and upload it again.`);
  }
}

/** The name of a separator that a one-column file seems to use instead of commas, or undefined. */
function otherDelimiter(lines: string[]): string | undefined {
  for (const [ch, name] of [[';', 'semicolons'], ['\t', 'tabs'], ['|', 'vertical bars']] as const) {
    if (lines.some((l) => l.includes(ch))) return name;
  }
  return undefined;
}

/** The items of a CSV file (see the module comment); `hashed` picks the digest column names. */
export function itemsFromCsv(bytes: Uint8Array, hashed: boolean): ListItem[] {
  const text = decodeCsv(bytes);
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
  } catch (err) {
    const e = err as { lines?: number; message?: string };
    throw new ListError(`The file is not valid CSV${e.lines ? ` (line ${e.lines})` : ''}: ${String(e.message ?? err).replace(/^Invalid Record Length: |\.$/g, '')}.`);
  }
  if (records.length === 0) return [];
  if (records.every((r) => r.record.length <= 1)) {
    const other = otherDelimiter(records.slice(0, 50).map((r) => r.record[0] ?? ''));
    if (other) throw new ListError(`The file seems to be separated by ${other}: save it comma-separated ("CSV UTF-8 (comma delimited)") and upload it again.`);
  }
  const heads = hashed ? DIGEST_HEADS : PHONE_HEADS;
  const first = records[0].record.map((c) => c.trim().toLowerCase());
  const headed = first.findIndex((c) => heads.has(c));
  const column = headed >= 0 ? headed : 0;
  const items: ListItem[] = [];
  for (const [i, { record, info }] of records.entries()) {
    if (i === 0 && headed >= 0) continue;
    const value = (record[column] ?? '').trim();
    if (value !== '') items.push({ value, position: info.lines });
  }
  return items;
}
