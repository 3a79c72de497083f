/**
 * Data tables of the console. On wide screens a normal table; on phone-sized screens (console.css)
 * each row becomes a card whose cells are labelled by their column (`data-label`), so nothing needs
 * horizontal scrolling. The wrapper is a labelled, focusable region so keyboard users can scroll it.
 */
import { num } from './format.ts';
import { html, type SafeHtml } from './html.ts';

export interface Column {
  /** Header text (also the cell label on small screens). */
  head: string;
  /** Visually hidden header (e.g. an actions column). */
  hiddenHead?: boolean;
  /** Right-aligned numbers. */
  num?: boolean;
}

export interface TableOptions {
  /** Accessible name of the table region. */
  label: string;
  columns: Column[];
  /** Cells per row, in column order; `attrs` lands on the <tr> (trusted markup only). */
  rows: { cells: unknown[]; attrs?: SafeHtml }[];
}

/** Renders the table (see module comment); a cell that is a number is shown with thousands separators. */
export function dataTable(o: TableOptions): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="${o.label}" tabindex="0">
<table class="striped responsive">
  <thead><tr>${o.columns.map((c) => html`<th scope="col"${c.num ? html` class="num"` : ''}>${c.hiddenHead ? html`<span class="visually-hidden">${c.head}</span>` : c.head}</th>`)}</tr></thead>
  <tbody>
  ${o.rows.map((r) => html`<tr${r.attrs ? html` ${r.attrs}` : ''}>${r.cells.map((cell, i) => {
    const c = o.columns[i];
    return html`<td data-label="${c.hiddenHead ? '' : c.head}"${c.num ? html` class="num"` : ''}><span class="cell">${typeof cell === 'number' ? num(cell) : cell}</span></td>`;
  })}</tr>`)}
  </tbody>
</table>
</div>`;
}
