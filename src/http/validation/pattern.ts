/**
 * Translates a Pydantic `pattern` (Rust `regex` crate syntax, Unicode mode) into a JS RegExp
 * with the same meaning, compiled once at model declaration (docs/decisions.md#2-request-models, URL).
 *
 * Differences handled: `\s`/`\S` are Unicode White_Space in Rust (includes U+0085, excludes
 * U+FEFF, unlike JS); `\d` and `\w` are Unicode classes; `.` excludes only `\n`; `$` is the
 * end of the text in both (no multiline). Negated classes (`\S`, `\D`, `\W`) inside `[...]`
 * are not supported and throw at declaration time.
 */

const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const DIGIT = '\\p{Nd}';
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';

/** Compiles a Rust-regex pattern to an equivalent JS RegExp (flag `u`, searched like `re.search`). */
export function rustPattern(source: string): RegExp {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      const next = source[i + 1];
      i++;
      const positive = { s: WHITE_SPACE, d: DIGIT, w: WORD }[next as 's' | 'd' | 'w'];
      const negative = { S: WHITE_SPACE, D: DIGIT, W: WORD }[next as 'S' | 'D' | 'W'];
      if (positive !== undefined) out += inClass ? positive : `[${positive}]`;
      else if (negative !== undefined) {
        if (inClass) throw new Error(`pattern ${source}: negated class \\${next} inside [...] is not supported`);
        out += `[^${negative}]`;
      } else out += '\\' + next;
    } else if (ch === '[' && !inClass) {
      inClass = true;
      out += ch;
    } else if (ch === ']' && inClass) {
      inClass = false;
      out += ch;
    } else if (ch === '.' && !inClass) {
      out += '[^\\n]';
    } else {
      out += ch;
    }
  }
  return new RegExp(out, 'u');
}
