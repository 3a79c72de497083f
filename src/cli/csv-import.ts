/**
 * Streaming reader of a contacts CSV for PUT /admin/companies/{id}/contacts (operator-api.md).
 * The header row names the columns: `phone` (required), `first_name`, `last_name`, `opted_out`
 * (matched case-insensitively); every other column becomes a variable of that name.
 * Empty cells are left out (so they do not overwrite stored values); rows without a phone are
 * not sent but counted in `missingPhone`. Rows are yielded in chunks of at most `chunkSize`.
 * Errors: `CliError` for unreadable files, malformed CSV and bad `opted_out` values (with line number).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { CsvError, parse } from 'csv-parse';
import type { ContactInput } from './api-types.ts';
import { MAX_CONTACTS_PER_REQUEST } from './client.ts';
import { CliError } from './errors.ts';

/** One batch of contacts ready to send, plus what was skipped locally while reading it. */
export interface ContactChunk {
  contacts: ContactInput[];
  /** Data rows in this chunk without a phone (not sent). */
  missingPhone: number;
  /** Data rows read so far in the whole file (sent or not). */
  rowsRead: number;
}

/** An opened CSV: its size, a live count of bytes read, and the chunk stream. */
export interface ContactsCsv {
  totalBytes: number;
  bytesRead(): number;
  chunks(): AsyncGenerator<ContactChunk>;
}

/** Options of `openContactsCsv`; `chunkSize` defaults to (and may not exceed) 10 000. */
export interface CsvOptions {
  chunkSize?: number;
  delimiter?: string;
}

const RESERVED = new Set(['phone', 'first_name', 'last_name', 'opted_out']);
const TRUE = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'f', 'no', 'n', '0']);

/** `true/yes/y/1` → true, `false/no/n/0` → false (any case), empty → undefined, else an error. */
export function parseOptedOut(value: string, line: number): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === '') return undefined;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new CliError(`line ${line}: opted_out must be true/false (or yes/no, 1/0), got "${value}"`);
}

/** Map the header row: reserved names lower-cased, others kept (trimmed) as variable names. */
export function normalizeHeader(header: string[]): string[] {
  const names = header.map((h) => {
    const t = h.trim();
    return RESERVED.has(t.toLowerCase()) ? t.toLowerCase() : t;
  });
  if (!names.includes('phone')) {
    throw new CliError(`the CSV header has no "phone" column (columns: ${names.join(', ') || 'none'})`);
  }
  const seen = new Set<string>();
  for (const n of names) {
    if (n === '') throw new CliError('the CSV header has an empty column name');
    if (seen.has(n)) throw new CliError(`the CSV header names column "${n}" twice`);
    seen.add(n);
  }
  return names;
}

/** Turn one CSV record (keys from `normalizeHeader`) into a contact, or null when it has no phone. */
export function recordToContact(record: Record<string, string>, line: number): ContactInput | null {
  const phone = (record.phone ?? '').trim();
  if (phone === '') return null;
  const contact: ContactInput = { phone };
  const variables: Record<string, string> = {};
  for (const [key, raw] of Object.entries(record)) {
    const value = raw ?? '';
    if (key === 'phone') continue;
    if (key === 'opted_out') {
      const b = parseOptedOut(value, line);
      if (b !== undefined) contact.opted_out = b;
    } else if (value === '') {
      continue;
    } else if (key === 'first_name') contact.first_name = value;
    else if (key === 'last_name') contact.last_name = value;
    else variables[key] = value;
  }
  if (Object.keys(variables).length > 0) contact.variables = variables;
  return contact;
}

/** Open `file` for chunked reading. Throws `CliError` when the file cannot be read. */
export async function openContactsCsv(file: string, opts: CsvOptions = {}): Promise<ContactsCsv> {
  const chunkSize = opts.chunkSize ?? MAX_CONTACTS_PER_REQUEST;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CONTACTS_PER_REQUEST) {
    throw new CliError(`chunk size must be between 1 and ${MAX_CONTACTS_PER_REQUEST}`);
  }
  let totalBytes: number;
  try {
    const s = await stat(file);
    if (!s.isFile()) throw new CliError(`${file} is not a file`);
    totalBytes = s.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const input = createReadStream(file);
  return {
    totalBytes,
    bytesRead: () => input.bytesRead,
    chunks: () => readChunks(file, input, chunkSize, opts.delimiter ?? ','),
  };
}

/** Parse `input` and yield contacts in chunks of `chunkSize` (see module doc). */
async function* readChunks(
  file: string,
  input: ReturnType<typeof createReadStream>,
  chunkSize: number,
  delimiter: string,
): AsyncGenerator<ContactChunk> {
  const parser = parse({
    bom: true,
    trim: true,
    delimiter,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    info: true,
    columns: (header: string[]) => normalizeHeader(header),
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let contacts: ContactInput[] = [];
  let missingPhone = 0;
  let rowsRead = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      rowsRead++;
      const contact = recordToContact(item.record, item.info.lines);
      if (contact) contacts.push(contact);
      else missingPhone++;
      if (contacts.length >= chunkSize) {
        yield { contacts, missingPhone, rowsRead };
        contacts = [];
        missingPhone = 0;
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
  if (contacts.length > 0 || missingPhone > 0) yield { contacts, missingPhone, rowsRead };
}
