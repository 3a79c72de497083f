/** The console's HTML escaping (src/console/views/html.ts): every interpolated value is inert text. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { escapeHtml, html, raw, SafeHtml } from '../../src/console/views/html.ts';

describe('escapeHtml', () => {
  test('escapes the five characters that can end a text node or a quoted attribute', () => {
    assert.equal(escapeHtml(`<script>alert("x") & 'y'</script>`), '&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;');
    assert.equal(escapeHtml('plain text, ünïcödé ✓'), 'plain text, ünïcödé ✓');
    assert.equal(escapeHtml('&amp;'), '&amp;amp;', 'already escaped text is escaped again (no double-decoding assumptions)');
  });

  test('property: the output never contains < > " \' or a bare &, and unescaping gives the input back', () => {
    const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    fc.assert(fc.property(fc.string({ unit: 'grapheme-composite' }), (text) => {
      const out = escapeHtml(text);
      assert.doesNotMatch(out, /[<>"']/);
      assert.doesNotMatch(out, /&(?!(amp|lt|gt|quot|#39);)/);
      assert.equal(unescape(out), text);
    }), { numRuns: 500 });
  });
});

describe('html tagged template', () => {
  test('escapes values in text and attributes, keeps nested templates and raw markup', () => {
    const name = `"><img src=x onerror=alert(1)>`;
    const inner = html`<b>${name}</b>`;
    const out = html`<a title="${name}">${inner}${raw('<br>')}</a>`;
    assert.ok(out instanceof SafeHtml);
    assert.equal(out.value, '<a title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"><b>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</b><br></a>');
  });

  test('arrays render item by item; null, undefined and false render nothing; numbers and 0 render', () => {
    assert.equal(html`${['<a>', html`<b></b>`]}|${null}|${undefined}|${false}|${0}|${12.5}`.value, '&lt;a&gt;<b></b>||||0|12.5');
  });
});
