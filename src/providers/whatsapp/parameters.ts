/**
 * The WhatsApp send path's safety net for empty template parameters (docs/whatsapp.md "Empty
 * parameters"): Meta refuses a text parameter that is empty, and the service treats one of white space
 * only the same (src/domain/render.ts `isBlankParameter`). The fan-out already skips such a message
 * (`empty_parameter`, naming the variable); a message that reaches the send path anyway (fanned out
 * while the company's channel was another, or written before the rule) is skipped here with the same
 * reason, before any other look and without a request to Meta.
 */
import { isBlankParameter, type Rendered } from '../../domain/render.ts';
import type { PrepareDecision, PrepareItem } from '../types.ts';

/** The skip reason of a message with an empty WhatsApp parameter. */
export const EMPTY_PARAMETER = 'empty_parameter';

/** True when one of the text parameters `rendered` would send to Meta (header, body, URL buttons) is blank. */
export function hasEmptyParameter(rendered: Rendered): boolean {
  const wa = rendered.whatsapp;
  if (!wa) return false;
  const textHeader = rendered.header.type === 'text' ? wa.header_parameters : [];
  return textHeader.some(isBlankParameter) || wa.body_parameters.some(isBlankParameter)
    || wa.button_parameters.some((v) => v !== null && isBlankParameter(v));
}

/**
 * A provider `prepare` with the safety net in front of `rest` (the provider's other looks): the items
 * with an empty parameter are skipped ({@link EMPTY_PARAMETER}); `rest` decides about the others
 * (when any), and its decisions are merged in.
 */
export async function skipEmptyParameters(
  items: PrepareItem[],
  rest: (items: PrepareItem[]) => Promise<Map<string, PrepareDecision>>,
): Promise<Map<string, PrepareDecision>> {
  const out = new Map<string, PrepareDecision>();
  const others: PrepareItem[] = [];
  for (const m of items) {
    if (hasEmptyParameter(m.rendered)) out.set(m.message_id, { action: 'skip', reason: EMPTY_PARAMETER });
    else others.push(m);
  }
  if (others.length === 0) return out;
  for (const [id, d] of await rest(others)) out.set(id, d);
  return out;
}
