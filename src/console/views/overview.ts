/**
 * The Overview page (routes/overview.ts): key numbers of the last 30 days, messages
 * per day by status as a server-rendered SVG stacked bar chart (d3-scale for the axes, d3-shape's
 * `stack` for the layers; no script), the same numbers in a table inside a <details>, the top failure
 * reasons with plain-words labels, and the opt-out rate.
 *
 * The chart is an image to assistive technology (`role="img"`, a <title> and a <desc> that sums it up);
 * every bar also has a <title> (a tooltip on hover). Colour is never the only carrier: the legend names
 * each colour and the table has every number.
 */
import { scaleBand, scaleLinear } from 'd3-scale';
import { stack } from 'd3-shape';
import type { MessageStatus } from '../../db/schema.ts';
import { STATUSES, type DayCounts, type Overview } from '../queries/overview.ts';
import { badge, num, percent as percentText } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Bar colours per status (legend and chart). Greens for progress, amber waiting, grey skipped, red failed. */
const COLOURS: Record<MessageStatus, string> = {
  read: '#065f46', delivered: '#10b981', sent: '#93c5fd', pending: '#f59e0b', skipped: '#9ca3af', failed: '#b91c1c',
};

const LABELS: Record<MessageStatus, string> = {
  read: 'Read', delivered: 'Delivered', sent: 'Sent', pending: 'Pending', skipped: 'Skipped', failed: 'Failed',
};

/** Chart geometry, in viewBox units (the SVG scales to the width of its container). */
const W = 640;
const H = 280;
const M = { top: 12, right: 22, bottom: 34, left: 66 };

const number = { format: num };
const percent = { format: percentText };

/** `2026-11-03` → `Nov 3`. */
function shortDate(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** One sentence per day for a bar's tooltip: "Nov 3: 120 messages (100 read, 20 failed)". */
function dayTitle(d: DayCounts): string {
  const parts = STATUSES.filter((s) => d[s] > 0).map((s) => `${number.format(d[s])} ${s}`);
  return `${shortDate(d.date)}: ${number.format(d.total)} message${d.total === 1 ? '' : 's'}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** The stacked bar chart as an SVG string (trusted markup; every text in it is a number or a date). */
export function chartSvg(o: Overview): SafeHtml {
  const x = scaleBand<string>().domain(o.days.map((d) => d.date)).range([M.left, W - M.right]).paddingInner(0.2).paddingOuter(0.1);
  const max = Math.max(1, ...o.days.map((d) => d.total));
  const y = scaleLinear().domain([0, max]).nice(4).range([H - M.bottom, M.top]);
  const layers = stack<DayCounts, MessageStatus>().keys([...STATUSES])(o.days);
  const ticks = y.ticks(4).filter((t) => Number.isInteger(t));
  const grid = ticks.map((t) => html`<g class="tick"><line x1="${M.left}" x2="${W - M.right}" y1="${y(t)}" y2="${y(t)}"/><text x="${M.left - 8}" y="${y(t)}" dy="0.32em" text-anchor="end">${number.format(t)}</text></g>`);
  // A date label under every 7th bar counted back from today, so today always has one.
  const labelled = o.days.filter((_, i) => (o.days.length - 1 - i) % 7 === 0);
  const xLabels = labelled.map((d) => html`<text x="${x(d.date)! + x.bandwidth() / 2}" y="${H - M.bottom + 20}" text-anchor="middle">${shortDate(d.date)}</text>`);
  const bars = o.days.map((d, i) => {
    const rects = layers.map((layer) => {
      const [y0, y1] = layer[i];
      if (y1 <= y0) return '';
      return html`<rect x="${x(d.date)}" y="${y(y1)}" width="${x.bandwidth()}" height="${y(y0) - y(y1)}" fill="${COLOURS[layer.key]}"/>`;
    });
    return html`<g class="bar"><title>${dayTitle(d)}</title>${rects}</g>`;
  });
  const busiest = o.days.reduce((a, b) => (b.total > a.total ? b : a), o.days[0]);
  const desc = o.totals.total === 0
    ? `No messages from ${shortDate(o.from)} to ${shortDate(o.to)}.`
    : `${number.format(o.totals.total)} messages from ${shortDate(o.from)} to ${shortDate(o.to)}: ${STATUSES.map((s) => `${number.format(o.totals[s])} ${s}`).join(', ')}. The busiest day was ${shortDate(busiest.date)} with ${number.format(busiest.total)}.`;
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="xMidYMid meet">
<title id="chart-title">Messages per day by status, ${shortDate(o.from)} to ${shortDate(o.to)}</title>
<desc id="chart-desc">${desc}</desc>
<g class="grid">${grid}</g>
<g class="bars">${bars}</g>
<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}"/>
<g class="x-labels">${xLabels}</g>
</svg>`;
}

function legend(): SafeHtml {
  return html`<ul class="chart-legend" aria-label="Legend">${STATUSES.map((s) => html`<li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true" focusable="false"><rect width="10" height="10" fill="${COLOURS[s]}"/></svg>${LABELS[s]}</li>`)}</ul>`;
}

function dailyTable(o: Overview): SafeHtml {
  return dataTable({
    label: 'Messages per day',
    columns: [{ head: 'Day' }, ...STATUSES.map((s) => ({ head: LABELS[s], num: true })), { head: 'Total', num: true }],
    rows: [...o.days].reverse().map((d) => ({ cells: [html`<time datetime="${d.date}">${d.date}</time>`, ...STATUSES.map((s) => number.format(d[s])), number.format(d.total)] })),
  });
}

function reasonsSection(o: Overview): SafeHtml {
  const failedOrSkipped = o.totals.failed + o.totals.skipped;
  if (o.failure_reasons.length === 0) return html`<p>No message failed or was skipped in this period.</p>`;
  return dataTable({
    label: 'Top failure reasons',
    columns: [{ head: 'Reason' }, { head: 'Status' }, { head: 'Code' }, { head: 'Messages', num: true }, { head: 'Share', num: true }],
    rows: o.failure_reasons.map((r) => ({
      cells: [r.label, badge(r.status), html`<code>${r.code}</code>`, number.format(r.count), percent.format(r.count / failedOrSkipped)],
    })),
  });
}

/** Share of the period's messages with `statuses` ('—' without messages). */
function shareOf(o: Overview, statuses: MessageStatus[]): string {
  if (o.totals.total === 0) return '—';
  return percent.format(statuses.reduce((n, s) => n + o.totals[s], 0) / o.totals.total);
}

/** The page body. */
export function overviewView(o: Overview): SafeHtml {
  const t = o.totals;
  return html`<h1>Overview</h1>
<p>The last 30 days, <time datetime="${o.from}">${o.from}</time> to <time datetime="${o.to}">${o.to}</time> (days in the time zone ${o.timezone}${o.timezone === 'UTC' ? ', as your company has no delivery hours' : ', of your delivery hours'}). A message counts on the day its send was accepted, with its status now.</p>
<dl class="stats">
  <div><dt>Messages</dt><dd data-stat="total">${number.format(t.total)}</dd></div>
  <div><dt>Delivered or read</dt><dd data-stat="delivered-share">${shareOf(o, ['delivered', 'read'])}</dd></div>
  <div><dt>Failed</dt><dd data-stat="failed">${number.format(t.failed)}</dd></div>
  <div><dt>Skipped</dt><dd data-stat="skipped">${number.format(t.skipped)}</dd></div>
  <div><dt>Opt-out rate</dt><dd data-stat="opt-out-rate">${o.opt_out.contacts ? percent.format(o.opt_out.rate) : '—'}</dd></div>
</dl>

<section>
<h2 id="per-day">Messages per day</h2>
<figure class="chart-figure">
${chartSvg(o)}
<figcaption>${legend()}</figcaption>
</figure>
<details>
<summary>The numbers per day</summary>
${dailyTable(o)}
</details>
</section>

<section>
<h2 id="reasons">Top failure reasons</h2>
<p>Failed messages by the provider's error, skipped ones by the reason they were not sent (${number.format(t.failed)} failed, ${number.format(t.skipped)} skipped). <a href="${BASE}/sends">See the sends</a>.</p>
${reasonsSection(o)}
</section>

<section>
<h2 id="opt-outs">Opt-outs</h2>
<dl class="facts">
  <dt>Opted out now</dt><dd data-stat="opted-out">${number.format(o.opt_out.opted_out)} of ${number.format(o.opt_out.contacts)} contacts (${o.opt_out.contacts ? percent.format(o.opt_out.rate) : 'no contacts yet'})</dd>
  <dt>Opted out in the last 30 days</dt><dd data-stat="opted-out-in-period">${number.format(o.opt_out.opted_out_in_period)} (still opted out)</dd>
</dl>
<p class="muted">Opted-out contacts get no campaign messages; automations still reach them. <a href="${BASE}/contacts">Contacts</a>.</p>
</section>`;
}
