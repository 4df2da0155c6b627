/**
 * The `html` template: any text interpolated into an element or a quoted attribute comes out
 * as that text and never as markup, and nested `html` results and lists keep their markup.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../packages/api/src/dashboard/html';
import { propertyParameters } from '../workflow/arbitraries';

/** What a browser reads back from escaped text (the five entities escapeHtml writes). */
function readBack(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

describe('the html template', () => {
  it('turns any text into content and attribute values that read back as the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string(), (text, attribute) => {
        const out = html`<p title="${attribute}">${text}</p>`.value;
        const match = /^<p title="([^"<>]*)">([^<>]*)<\/p>$/.exec(out);
        expect(match).not.toBeNull();
        expect(readBack(match?.[1] ?? '')).toBe(attribute);
        expect(readBack(match?.[2] ?? '')).toBe(text);
      }),
      propertyParameters(),
    );
  });

  it('keeps nested markup and lists, renders nothing for null, undefined and false', () => {
    const items = ['<a>', 'b&c'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe(
      '<ul><li>&lt;a&gt;</li><li>b&amp;c</li></ul>0',
    );
    expect(escapeHtml(`'"&<>`)).toBe('&#39;&quot;&amp;&lt;&gt;');
  });
});
