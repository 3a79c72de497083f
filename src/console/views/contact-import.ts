/**
 * Contact import pages (routes/contact-import.ts): the upload form (file, with the
 * format explained and the error beside the field), the company's recent imports, and one import's
 * progress (a progress bar, counts, the rows not imported with their line numbers). A role that may
 * not import sees the note instead of the form, and no link to import another file.
 */
import type { ContactImport } from '../../domain/contact-imports.ts';
import { MAX_IMPORT_BYTES } from '../../domain/contact-imports.ts';
import { VARIABLE_VALUE_MAX } from '../../domain/contact-rules.ts';
import { badge, num, readOnlyNote, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { dataTable } from './table.ts';

const n = num;
const DELIMITER_NAMES: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'vertical bar' };

/** The upload page: the form and the recent imports. */
export function contactImportView(m: { csrf: string; error?: string; recent: ContactImport[]; canImport?: boolean }): SafeHtml {
  return html`<h1>Import contacts</h1>
<section aria-labelledby="format-h" class="narrow">
<h2 id="format-h">The file</h2>
<p>A CSV file (UTF-8, at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB) whose first row names the columns:
<code>phone</code> (required), <code>first_name</code>, <code>last_name</code>, <code>opted_out</code> (yes / no);
every other column becomes a template variable of that name (a letter or <code>_</code>, then letters, digits or
<code>_</code>; values at most ${VARIABLE_VALUE_MAX} characters, as on a contact's page). Columns may be separated by commas, semicolons,
tabs or <code>|</code>. Empty cells leave what is stored. Existing contacts (same number) are updated. An export
of this console imports as it is.</p>
</section>
${m.canImport === false ? readOnlyNote('contacts') : html`<form method="post" action="${BASE}/contacts/import" enctype="multipart/form-data" class="narrow">
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <label for="file">CSV file</label>
  <input id="file" name="file" type="file" accept=".csv,text/csv,text/plain" required${m.error ? html` aria-invalid="true" aria-describedby="file-error"` : ''}>
  ${m.error ? html`<small id="file-error" class="error" role="alert">${m.error}</small>` : ''}
  <button type="submit">Upload and import</button>
</form>`}
<h2>Recent imports</h2>
${m.recent.length ? importsTable(m.recent) : html`<p>No imports yet.</p>`}`;
}

function importsTable(rows: ContactImport[]): SafeHtml {
  return dataTable({
    label: 'Recent imports',
    columns: [{ head: 'Started' }, { head: 'File' }, { head: 'Status' }, { head: 'Rows', num: true }, { head: 'Created', num: true }, { head: 'Updated', num: true }, { head: 'Not imported', num: true }],
    rows: rows.map((i) => ({
      cells: [html`<a href="${BASE}/contacts/imports/${i.import_id}">${time(i.created_at)}</a>`, i.filename || '—', badge(i.status), n(i.total), n(i.created), n(i.updated), n(i.failed)],
    })),
  });
}

/** One import's progress (the "Import another file" link only with `canImport`). */
export function importProgressView(i: ContactImport, canImport = true): SafeHtml {
  const running = i.status === 'queued' || i.status === 'running';
  const pct = i.total ? Math.floor((i.processed / i.total) * 100) : 100;
  return html`<h1>Import of ${i.filename || 'a CSV file'}</h1>
<section aria-labelledby="progress-h">
<h2 id="progress-h">Progress</h2>
<p data-import-status="${i.status}">${badge(i.status)} ${running ? 'This page refreshes itself every 2 seconds.' : i.status === 'completed' ? html`Finished ${time(i.finished_at)}.` : ''}</p>
<label for="import-progress">${n(i.processed)} of ${n(i.total)} rows (${pct} %)</label>
<progress id="import-progress" max="${i.total}" value="${i.processed}">${pct} %</progress>
<dl class="stats">
  <div><dt>Created</dt><dd data-count="created">${n(i.created)}</dd></div>
  <div><dt>Updated</dt><dd data-count="updated">${n(i.updated)}</dd></div>
  <div><dt>Not imported</dt><dd data-count="failed">${n(i.failed)}</dd></div>
</dl>
<p class="muted">Columns separated by ${DELIMITER_NAMES[i.delimiter] ?? i.delimiter}. Started ${time(i.created_at)}.</p>
${running ? html`<p><a href="${BASE}/contacts/imports/${i.import_id}">Refresh now</a></p>` : html`<p class="actions"><a href="${BASE}/contacts" role="button">Go to contacts</a>${canImport ? html`<a href="${BASE}/contacts/import">Import another file</a>` : ''}</p>`}
${i.error ? html`<p class="error">${i.error}</p>` : ''}
</section>
${i.errors.length ? html`<h2>Rows not imported</h2>
${i.failed > i.errors.length ? html`<p>The first ${n(i.errors.length)} of ${n(i.failed)}:</p>` : ''}
${dataTable({ label: 'Rows not imported', columns: [{ head: 'Line', num: true }, { head: 'Problem' }], rows: i.errors.map((e) => ({ cells: [n(e.line), e.error] })) })}` : ''}`;
}
