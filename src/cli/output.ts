/**
 * Printing for the CLI: JSON for `--json` (stdout, 2-space indented); otherwise tables, drawn as
 * cli-table3 boxes when stdout is a terminal and as tab-separated values (TSV) when it is not (a pipe, a
 * file), so that `cut`, `awk -F'\t'` or a spreadsheet read them. Errors go to stderr, as JSON
 * `{"error": ...}` in `--json` mode.
 */
import Table from 'cli-table3';
import type { ErrorReport } from './errors.ts';
import type { CliIo } from './io.ts';

/** One column of `printTable`: the row key, its header, and an optional formatter. */
export interface Column<T> {
  key: keyof T & string;
  header?: string;
  format?: (value: unknown, row: T) => string;
}

const plainStyle = { head: [] as string[], border: [] as string[] };

/** Write a line (or several) to the run's stdout. */
export function printLine(io: CliIo, text = ''): void {
  io.stdout.write(`${text}\n`);
}

/** Write `value` as indented JSON to the run's stdout. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`);
}

/** Render one cell: '' for null/undefined, `HH:MM-HH:MM@Zone` for delivery hours, compact JSON for objects. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  const o = value as Record<string, unknown>;
  if (typeof o.start === 'string' && typeof o.end === 'string' && typeof o.timezone === 'string') {
    return `${o.start}-${o.end}@${o.timezone}`;
  }
  return JSON.stringify(value);
}

/** Whether tables are drawn as boxes: only when the run's stdout is a terminal. */
function drawBoxes(io: CliIo): boolean {
  return io.stdout.isTTY === true;
}

/**
 * One TSV field: `text` with backslash, tab, line feed and carriage return written as `\\`, `\t`,
 * `\n` and `\r`, so that every record stays one line of tab-separated fields.
 */
export function tsvField(text: string): string {
  return text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** Write one TSV line of `fields`. */
function printTsv(io: CliIo, fields: readonly string[]): void {
  printLine(io, fields.map(tsvField).join('\t'));
}

/**
 * Print an object as a two-column key/value table (keys in the object's order); not on a terminal, one
 * `key<TAB>value` line per key.
 */
export function printRecord(io: CliIo, record: Record<string, unknown> | null | undefined, title?: string): void {
  if (title) printLine(io, title);
  if (!drawBoxes(io)) {
    for (const [key, value] of Object.entries(record ?? {})) printTsv(io, [key, formatValue(value)]);
    return;
  }
  const table = new Table({ style: plainStyle });
  for (const [key, value] of Object.entries(record ?? {})) {
    table.push({ [key]: formatValue(value) });
  }
  printLine(io, table.toString());
}

/**
 * Print rows as a table with the given columns; on a terminal a box table, or `empty` when there are no
 * rows. Not on a terminal: TSV, a header line of the column names and one line per row (only the
 * header when there are none).
 */
export function printTable<T>(io: CliIo, rows: readonly T[], columns: Column<T>[], empty = '(none)'): void {
  const head = columns.map((c) => c.header ?? c.key);
  const cells = (row: T) => columns.map((c) => {
    const v = (row as Record<string, unknown>)[c.key];
    return c.format ? c.format(v, row) : formatValue(v);
  });
  if (!drawBoxes(io)) {
    printTsv(io, head);
    for (const row of rows) printTsv(io, cells(row));
    return;
  }
  if (rows.length === 0) {
    printLine(io, empty);
    return;
  }
  const table = new Table({ head, style: plainStyle });
  for (const row of rows) table.push(cells(row));
  printLine(io, table.toString());
}

/** `text` on one line (whitespace runs become one space), cut to at most `max` characters with `…`. */
export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Print an automation or a campaign (GET /admin/automations/{id}, /admin/campaigns/{id}): its fields as a
 * key/value table under `title`, then its template as indented JSON (the form `--template FILE` takes).
 */
export function printSource(io: CliIo, source: { template: unknown }, title: string): void {
  const { template, ...fields } = source;
  printRecord(io, fields, title);
  printLine(io, 'Template:');
  printJson(io, template);
}

/** Print an error report to stderr: `cms: error: ...` or, with `json`, `{"error": ...}`. */
export function printError(io: CliIo, report: ErrorReport, json: boolean): void {
  if (json) io.stderr.write(`${JSON.stringify(report.json)}\n`);
  else io.stderr.write(`cms: error: ${report.message}\n`);
}
