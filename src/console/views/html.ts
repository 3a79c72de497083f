/**
 * Server-side HTML for the console: the `html` tagged template escapes every interpolated value unless
 * it is already `SafeHtml` (the result of another `html` template or of `raw`). Arrays are rendered
 * item by item; null, undefined and false render nothing. Attribute values must be double-quoted in
 * templates; escaping covers `& < > " '`, so an escaped value cannot leave an attribute or a text node.
 */

/** HTML that is safe to insert as is. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a double- or single-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** Marks trusted markup (never user input) as safe. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${userText}</p>\`` → SafeHtml with `userText` escaped. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}
