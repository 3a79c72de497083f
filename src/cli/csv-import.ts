/**
 * Streaming reader of a contacts CSV for PUT /admin/companies/{id}/contacts (docs/operator-api.md), in the
 * format of src/domain/contacts-csv.ts (the console's import reads the same): the header row names the
 * columns: `phone` (required), `first_name`, `last_name`, `opted_out` (matched case-insensitively);
 * every other column becomes a variable of that name; the delimiter is detected from the header row
 * unless given.
 * Empty cells are left out (so they do not overwrite stored values); rows without a phone are
 * not sent but counted in `missingPhone`, with their line numbers in `missingPhoneLines`; rows whose
 * names or variable values break the rules of an edit (src/domain/contact-rules.ts: the server would
 * refuse the whole request) are not sent but listed in `badRows` with their line and why. Each sent
 * contact's line number is in `lines` (so that a row the server finds invalid can be named by its
 * line). Rows are yielded in chunks of at most `chunkSize`.
 * Errors: `CliError` for unreadable files, an empty file (no header row: nothing says which column is
 * the phone), a header column that is no variable name, malformed CSV and bad `opted_out` values (with
 * line number).
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { CsvError, parse } from 'csv-parse';
import type { ContactInput } from './api/types.ts';
import { MAX_CONTACTS_PER_REQUEST } from './client.ts';
import { CliError } from './errors.ts';
import {
  csvParseOptions, CsvFormatError, CsvRowRuleError, detectDelimiter, normalizeHeader as normalizeHeaderShared,
  parseOptedOut as parseOptedOutShared, recordToContact as recordToContactShared,
} from '../domain/contacts-csv.ts';

/** One batch of contacts ready to send, plus what was skipped locally while reading it. */
export interface ContactChunk {
  contacts: ContactInput[];
  /** The line number (1-based, the header is line 1) of each of `contacts`, in order. */
  lines: number[];
  /** Data rows in this chunk without a phone (not sent). */
  missingPhone: number;
  /** Their line numbers. */
  missingPhoneLines: number[];
  /** Data rows in this chunk that break the rules of names and variables (not sent), with why. */
  badRows: { line: number; problem: string }[];
  /** Data rows read so far in the whole file (sent or not). */
  rowsRead: number;
}

/** An opened CSV: its size, a live count of bytes read, and the chunk stream. */
export interface ContactsCsv {
  totalBytes: number;
  bytesRead(): number;
  chunks(): AsyncGenerator<ContactChunk>;
}

/**
 * Options of `openContactsCsv`; `chunkSize` defaults to (and may not exceed) 10 000; `delimiter`
 * 'auto' (the default) detects it from the header row as the console's upload does.
 */
export interface CsvOptions {
  chunkSize?: number;
  delimiter?: string;
  /** Directory a relative `file` is read from (the run's, src/cli/io.ts); default the process's. */
  cwd?: string;
}

/** `true/yes/y/1` → true, `false/no/n/0` → false (any case), empty → undefined, else a CliError. */
export function parseOptedOut(value: string, line: number): boolean | undefined {
  return asCliError(() => parseOptedOutShared(value, line));
}

/** Map the header row (src/domain/contacts-csv.ts); problems as CliError. */
export function normalizeHeader(header: string[]): string[] {
  return asCliError(() => normalizeHeaderShared(header));
}

/** Turn one CSV record into a contact, or null when it has no phone; problems as CliError. */
export function recordToContact(record: Record<string, string>, line: number): ContactInput | null {
  return asCliError(() => recordToContactShared(record, line));
}

function asCliError<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof CsvFormatError) throw new CliError(err.message);
    throw err;
  }
}

/** The first 64 KiB of `file` as text. */
async function head(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Open `file` for chunked reading. Throws `CliError` when the file cannot be read. */
export async function openContactsCsv(file: string, opts: CsvOptions = {}): Promise<ContactsCsv> {
  const chunkSize = opts.chunkSize ?? MAX_CONTACTS_PER_REQUEST;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CONTACTS_PER_REQUEST) {
    throw new CliError(`chunk size must be between 1 and ${MAX_CONTACTS_PER_REQUEST}`);
  }
  const where = path.resolve(opts.cwd ?? '.', file);
  let totalBytes: number;
  try {
    const s = await stat(where);
    if (!s.isFile()) throw new CliError(`${file} is not a file`);
    totalBytes = s.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const start = await head(where);
  // Nothing but a byte order mark and white space: no header row, so no phone column.
  if (start.length < 64 * 1024 && start.replace(/^\uFEFF/, '').trim() === '') {
    throw new CliError(`${file} is empty: a contacts CSV needs a header row (phone, first_name, last_name, opted_out, any variable) and one row per contact`);
  }
  const delimiter = !opts.delimiter || opts.delimiter === 'auto' ? detectDelimiter(start) : opts.delimiter;
  const input = createReadStream(where);
  return {
    totalBytes,
    bytesRead: () => input.bytesRead,
    chunks: () => readChunks(file, input, chunkSize, delimiter),
  };
}

/** Parse `input` and yield contacts in chunks of `chunkSize` (see module doc). */
async function* readChunks(
  file: string,
  input: ReturnType<typeof createReadStream>,
  chunkSize: number,
  delimiter: string,
): AsyncGenerator<ContactChunk> {
  const parser = parse({ ...csvParseOptions(delimiter), columns: (header: string[]) => normalizeHeader(header) });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let contacts: ContactInput[] = [];
  let lines: number[] = [];
  let missingPhoneLines: number[] = [];
  let badRows: ContactChunk['badRows'] = [];
  let rowsRead = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      rowsRead++;
      const contact = ruleChecked(item.record, item.info.lines);
      if (typeof contact === 'string') badRows.push({ line: item.info.lines, problem: contact });
      else if (contact) {
        contacts.push(contact);
        lines.push(item.info.lines);
      } else missingPhoneLines.push(item.info.lines);
      if (contacts.length >= chunkSize) {
        yield { contacts, lines, missingPhone: missingPhoneLines.length, missingPhoneLines, badRows, rowsRead };
        contacts = [];
        lines = [];
        missingPhoneLines = [];
        badRows = [];
      }
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof CsvError) throw new CliError(`${file}: invalid CSV: ${err.message}`);
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file}: ${code ?? String(err)}`);
  } finally {
    input.destroy();
  }
  if (contacts.length > 0 || missingPhoneLines.length > 0 || badRows.length > 0) {
    yield { contacts, lines, missingPhone: missingPhoneLines.length, missingPhoneLines, badRows, rowsRead };
  }
}

/** recordToContact, but a row that breaks the rules of names and variables is its problem (a string). */
function ruleChecked(record: Record<string, string>, line: number): ContactInput | null | string {
  try {
    return recordToContactShared(record, line);
  } catch (err) {
    if (err instanceof CsvRowRuleError) return err.message.replace(/^line \d+: /, '');
    if (err instanceof CsvFormatError) throw new CliError(err.message);
    throw err;
  }
}
