/**
 * Campaign send pages (routes/campaign-send.ts): choose an audience (a segment, or
 * pasted numbers) and a time (now, or a date and time in the company's time zone), review what will
 * happen (the message as its first recipient gets it; sent, skipped as opted out, at the frequency cap
 * or invalid, duplicates merged, held for delivery hours; names that render empty for some recipients)
 * and confirm; and the cancel confirmation of a send. A role that may not send or cancel sees a note
 * instead of those forms.
 */
import type { MissingData, SendPlan, SendReview } from '../../domain/campaign-sends.ts';
import type { SourceRow } from '../../domain/automations.ts';
import type { SegmentRow } from '../queries/segments.ts';
import { messageBubble, warningsView } from './automations.ts';
import { localDateTime, num, plural, readOnlyNote, utcOffset } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

/** The send form as the user filled it. */
export interface SendForm { audience: string; segment_id: string; numbers: string; when: string; send_at: string }

/** Problems by field of SendForm. */
export type SendErrors = Partial<Record<keyof SendForm, string>>;

const err = (e: SendErrors, k: keyof SendForm) => (e[k] ? html`<small id="${k}-error" class="error" role="alert">${e[k]}</small>` : '');
const inv = (e: SendErrors, k: keyof SendForm) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-error"` : '');

function hiddenFields(f: SendForm): SafeHtml {
  return html`${(Object.keys(f) as (keyof SendForm)[]).map((k) => html`<input type="hidden" name="${k}" value="${f[k]}">`)}`;
}

/**
 * The audience and time form (without `canSend`, the read-only note instead); the chosen audience's
 * field has the focus, so a keyboard user starts where the choice is made.
 */
export function sendFormView(m: { csrf: string; campaign: SourceRow; segments: SegmentRow[]; form: SendForm; errors: SendErrors; timeZone: string; canSend?: boolean }): SafeHtml {
  const f = m.form;
  const action = `${BASE}/campaigns/${m.campaign.id}/send`;
  if (m.canSend === false) {
    return html`<h1>Send ${m.campaign.name}</h1>
${readOnlyNote('campaigns')}
<p><a href="${BASE}/campaigns/${m.campaign.id}">Back to the campaign</a></p>`;
  }
  return html`<h1>Send ${m.campaign.name}</h1>
<form method="post" action="${action}" novalidate>
<input type="hidden" name="_csrf" value="${m.csrf}">
<fieldset>
  <legend>Audience</legend>
  <label for="audience-segment"><input type="radio" id="audience-segment" name="audience" value="segment"${f.audience !== 'numbers' ? html` checked` : ''}> A segment</label>
  <label for="segment_id">Segment</label>
  <select id="segment_id" name="segment_id"${inv(m.errors, 'segment_id')}${f.audience !== 'numbers' ? html` autofocus` : ''}>
    <option value="">Choose a segment</option>
    ${m.segments.map((s) => html`<option value="${s.segment_id}"${String(s.segment_id) === f.segment_id ? html` selected` : ''}>${s.name} (${num(s.members)} members${s.filter == null ? '' : ' now, dynamic'})</option>`)}
  </select>
  ${err(m.errors, 'segment_id')}
  <label for="audience-numbers"><input type="radio" id="audience-numbers" name="audience" value="numbers"${f.audience === 'numbers' ? html` checked` : ''}> Phone numbers</label>
  <label for="numbers">Numbers (one per line, or separated by commas)</label>
  <textarea id="numbers" name="numbers" rows="5"${inv(m.errors, 'numbers')}${f.audience === 'numbers' ? html` autofocus` : ''}>${f.numbers}</textarea>
  ${err(m.errors, 'numbers')}
</fieldset>
<fieldset>
  <legend>When</legend>
  <label for="when-now"><input type="radio" id="when-now" name="when" value="now"${f.when !== 'later' ? html` checked` : ''}> Now</label>
  <label for="when-later"><input type="radio" id="when-later" name="when" value="later"${f.when === 'later' ? html` checked` : ''}> At a date and time</label>
  <label for="send_at">Date and time (${m.timeZone})</label>
  <input id="send_at" name="send_at" type="datetime-local" value="${f.send_at}"${inv(m.errors, 'send_at')}>
  ${err(m.errors, 'send_at')}
</fieldset>
<button type="submit">Review</button>
</form>`;
}

/** A scheduled local time that falls on a daylight-saving change (domain/campaign-sends.ts `localTimeChange`). */
export interface TimeChange { kind: 'gap' | 'overlap'; at: number; later?: number }

/**
 * What a scheduled local time on a daylight-saving change means, in words: a time that does not exist
 * (the clocks jump over it) and when the send goes instead, or a time that happens twice and which of
 * the two the send takes.
 */
export function timeChangeText(change: TimeChange, typed: string, timeZone: string): string {
  const [date, clock] = typed.trim().split('T');
  const day = localDateTime(Date.parse(`${date}T12:00:00Z`), 'UTC').split(',')[0];
  if (change.kind === 'gap') {
    return `${clock} on ${day} does not exist in ${timeZone}: the clocks go forward that night and skip it. The send will go at ${localDateTime(change.at, timeZone)} (${utcOffset(change.at, timeZone)}), the first minute after the change. Choose another time if that is not what you want.`;
  }
  return `${clock} on ${day} happens twice in ${timeZone}: the clocks go back that night and repeat it. The send will go at the first ${clock} (${utcOffset(change.at, timeZone)}), not at the second (${utcOffset(change.later ?? change.at, timeZone)}), an hour later. Choose another time if that is not what you want.`;
}

/** The warning of a name that renders empty for some recipients, e.g. "{{ first_name }} is empty for 1 recipient (+49…): ...". */
export function missingWarning(m: MissingData, total: number): string {
  const who = m.recipients === total && total > 1 ? `all ${plural(total, 'recipient')}` : `${plural(m.recipients, 'recipient')} of ${num(total)}`;
  return `{{ ${m.name} }} is empty for ${who} (e.g. ${m.example}): the message shows nothing in its place. Add it to those contacts, or use a default such as {{ ${m.name} | default: "there" }}`;
}

/**
 * The message as the review's sample recipient gets it (the first recipient of the audience), in the
 * editor's bubble ({@link messageBubble}); or why there is none.
 */
function sampleView(review: SendReview | undefined): SafeHtml | '' {
  if (!review) return '';
  const s = review.sample;
  return html`<section aria-labelledby="sample-title" class="review-sample" data-sample${s ? html` data-sample-phone="${s.phone}"` : ''}>
<h2 id="sample-title">The message</h2>
${s ? html`<p class="muted">As ${s.phone} will get it${s.preview.ok ? (s.preview.contact_found ? ' (a contact of your company, with their names and variables)' : ' (no contact of your company has this number: no names or variables)') : ''}: the first recipient of this send, rendered by the code that sends it.</p>
<div class="phone">${messageBubble(s.preview, undefined, s.preview.ok ? (s.preview.contact_found ? 'first recipient' : 'first recipient, not a contact') : undefined)}</div>` : html`<p>Nobody in this audience will get it.</p>`}
</section>`;
}

/**
 * The review page: the plan, and a confirm form carrying the same choices and the review's one-time
 * token; its Confirm send button has the focus (Enter confirms).
 */
export function sendReviewView(m: { csrf: string; campaign: SourceRow; form: SendForm; plan: SendPlan; audienceLabel: string; timeZone: string; localTime: (ms: number) => string; confirmToken: string; warnings?: readonly string[]; review?: SendReview; timeChange?: TimeChange | null }): SafeHtml {
  const p = m.plan;
  const action = `${BASE}/campaigns/${m.campaign.id}/send`;
  const missing = (m.review?.missing ?? []).map((x) => missingWarning(x, Math.max(p.send, x.recipients)));
  return html`<h1>Review: send ${m.campaign.name}</h1>
<p>To ${m.audienceLabel}, ${m.form.when === 'later' ? html`at ${m.localTime(p.send_at)} ${m.timeZone}` : 'now'}.</p>
${m.timeChange ? html`<div class="warnings" role="alert" data-time-change="${m.timeChange.kind}"><p><strong>Daylight-saving change.</strong> ${timeChangeText(m.timeChange, m.form.send_at, m.timeZone)}</p></div>` : ''}
${warningsView(m.warnings ?? [], 'The campaign\'s template: check this before you confirm.')}
${warningsView(missing, 'Some recipients lack data the message uses:')}
<div class="review-layout">
<dl class="plan" data-plan>
  <dt>Will be sent</dt><dd data-count="send">${num(p.send)}</dd>
  <dt>Skipped: opted out</dt><dd data-count="skipped_opted_out">${num(p.skipped_opted_out)}</dd>
  <dt>Skipped: frequency cap</dt><dd data-count="skipped_frequency_cap">${num(p.skipped_frequency_cap)}</dd>
  <dt>Skipped: not a phone number</dt><dd data-count="skipped_invalid">${num(p.skipped_invalid)}</dd>
  <dt>Duplicates merged</dt><dd data-count="duplicates_merged">${num(p.duplicates_merged)}${p.duplicates_merged ? html` (${p.duplicates_merged === 1 ? 'a number was' : 'numbers were'} given more than once: each is sent once)` : ''}</dd>
  <dt>Held for delivery hours</dt><dd data-count="held_for_delivery_hours">${num(p.held_for_delivery_hours)}${p.held_for_delivery_hours ? html` (until ${m.localTime(p.opens_at)} ${m.timeZone})` : ''}</dd>
</dl>
${sampleView(m.review)}
</div>
<p class="muted">After you confirm, the send's page shows its progress as the messages go out; you can pause or cancel it there.</p>
${p.send + p.skipped_opted_out + p.skipped_frequency_cap + p.skipped_invalid === 0 ? html`<p class="error" role="alert">Nobody to send to.</p>` : html`<form method="post" action="${action}/confirm">
<input type="hidden" name="_csrf" value="${m.csrf}">
${hiddenFields(m.form)}
<input type="hidden" name="confirm_token" value="${m.confirmToken}">
<button type="submit" autofocus data-confirm>Confirm send</button>
</form>`}
<p><a href="${action}">Change</a></p>`;
}

/** The cancel confirmation of a send (without `canCancel`, the read-only note instead of the form). */
export function cancelView(m: { csrf: string; batchId: string; title: string; pending: number; status: string; canCancel?: boolean }): SafeHtml {
  return html`<h1>Cancel ${m.title}</h1>
${m.canCancel === false ? readOnlyNote('sends') : m.pending === 0 ? html`<p>Nothing of this send is waiting any more (it is ${m.status}).</p>` : html`<p>${plural(m.pending, 'message')} not yet handed to a provider will end <strong>skipped</strong> (reason <code>cancelled</code>). A message being sent at this very moment may still be sent.</p>
<form method="post" action="${BASE}/sends/${m.batchId}/cancel">
<input type="hidden" name="_csrf" value="${m.csrf}">
<button type="submit" class="contrast">Cancel the send</button>
</form>`}
<p><a href="${BASE}/sends/${m.batchId}">Back to the send</a></p>`;
}
