/**
 * Settings › Messaging (routes/messaging.ts): the company's frequency cap of campaign messages
 * (docs/audience.md "Frequency caps"): none, or at most N campaign messages per contact within a
 * window. Errors beside their fields, the input kept.
 */
import type { FrequencyCap } from '../../domain/frequency-caps.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';

export const MESSAGING_PATH = `${BASE}/settings/messaging`;
export const MESSAGING_CRUMBS: [string, string?][] = [['Settings'], ['Messaging', MESSAGING_PATH]];

/** The form as typed: `cap` is `none` or `on`; the window as an amount and a unit (m, h, d). */
export interface CapForm { cap: string; messages: string; amount: string; unit: string }
export type CapErrors = Partial<Record<'messages' | 'amount', string>>;

const UNITS: [string, string][] = [['m', 'minutes'], ['h', 'hours'], ['d', 'days']];

/** The form filled from the stored cap. */
export function capFormOf(cap: FrequencyCap | null): CapForm {
  if (!cap) return { cap: 'none', messages: '3', amount: '7', unit: 'd' };
  const m = /^([0-9]+)([mhd])$/.exec(cap.per);
  return { cap: 'on', messages: String(cap.messages), amount: m?.[1] ?? '', unit: m?.[2] ?? 'd' };
}

/** The cap in words ("at most 3 campaign messages per contact within 7 days"), or "No cap". */
export function capText(cap: FrequencyCap | null): string {
  if (!cap) return 'No cap: campaigns are sent to every subscribed contact.';
  const m = /^([0-9]+)([mhd])$/.exec(cap.per);
  const unit = UNITS.find(([u]) => u === m?.[2])?.[1] ?? '';
  const amount = m ? Number(m[1]) : 0;
  return `At most ${cap.messages} campaign message${cap.messages === 1 ? '' : 's'} per contact within ${amount} ${amount === 1 ? unit.slice(0, -1) : unit}.`;
}

const err = (e: CapErrors, k: keyof CapErrors) => (e[k] ? html`<small id="${k}-error" class="error" role="alert">${e[k]}</small>` : '');
const inv = (e: CapErrors, k: keyof CapErrors) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-error"` : '');

/** The page body; `canChange` false shows the cap without the form. */
export function messagingView(m: { csrf: string; cap: FrequencyCap | null; form: CapForm; errors: CapErrors; canChange: boolean }): SafeHtml {
  const f = m.form;
  return html`<h1>Messaging</h1>
<section aria-labelledby="cap-h" class="narrow">
<h2 id="cap-h">Frequency cap</h2>
<p data-cap>${capText(m.cap)}</p>
<p class="muted">A campaign message to a contact who already got this many campaign messages (sent, delivered or read) within the window is skipped with the reason <code>frequency_cap</code>. Automations are never capped; a campaign can be set to ignore the cap.</p>
${m.canChange ? html`<form method="post" action="${MESSAGING_PATH}" novalidate>
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <fieldset>
    <legend>Cap</legend>
    <label for="cap-none"><input type="radio" id="cap-none" name="cap" value="none"${f.cap !== 'on' ? html` checked` : ''}> No cap</label>
    <label for="cap-on"><input type="radio" id="cap-on" name="cap" value="on"${f.cap === 'on' ? html` checked` : ''}> Cap campaign messages per contact</label>
  </fieldset>
  <label for="messages">At most this many campaign messages</label>
  <input id="messages" name="messages" type="number" min="1" max="1000" step="1" inputmode="numeric" value="${f.messages}"${inv(m.errors, 'messages')}>
  ${err(m.errors, 'messages')}
  <div class="grid">
    <div><label for="amount">Within</label>
    <input id="amount" name="amount" type="number" min="1" step="1" inputmode="numeric" value="${f.amount}"${inv(m.errors, 'amount')}></div>
    <div><label for="unit">Unit</label>
    <select id="unit" name="unit">${UNITS.map(([u, label]) => html`<option value="${u}"${f.unit === u ? html` selected` : ''}>${label}</option>`)}</select></div>
  </div>
  ${err(m.errors, 'amount')}
  <button type="submit">Save</button>
</form>` : ''}
</section>`;
}
