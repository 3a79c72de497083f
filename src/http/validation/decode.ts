/**
 * Bytes to text, exactly as the original service decodes a request body
 * (docs/decisions.md#1-request-handling-order, step 2):
 *
 * - JSON bodies: Python's `json.loads(bytes)`: `json.detect_encoding` picks UTF-8 (one leading
 *   BOM dropped), UTF-16 or UTF-32 (BOM or NUL-byte sniffing), then decodes with
 *   `surrogatepass` (UTF-8-encoded lone surrogates are kept as lone surrogates).
 * - Other bodies: strict UTF-8 (`bytes.decode()`), BOM kept.
 *
 * Both return `null` where Python raises UnicodeDecodeError (the caller answers 400).
 * Deliberate deviation: two consecutive encoded surrogates that would form a pair (CESU-8,
 * or a split pair in UTF-32) also give `null`: Python keeps two lone surrogates, which a JS
 * string cannot represent apart from the joined character.
 */

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes a JSON body like `json.loads(bytes)` does; null on a decoding error. */
export function decodeJsonBytes(b: Uint8Array): string | null {
  const n = b.length;
  if (n >= 4 && b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) return utf32(b, 4, true);
  if (n >= 4 && b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff) return utf32(b, 4, false);
  if (n >= 2 && b[0] === 0xff && b[1] === 0xfe) return utf16(b, 2, true);
  if (n >= 2 && b[0] === 0xfe && b[1] === 0xff) return utf16(b, 2, false);
  if (n >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return utf8SurrogatePass(b, 3);
  if (n >= 4) {
    if (b[0] === 0) return b[1] !== 0 ? utf16(b, 0, false) : utf32(b, 0, false);
    if (b[1] === 0) return b[2] !== 0 || b[3] !== 0 ? utf16(b, 0, true) : utf32(b, 0, true);
  } else if (n === 2) {
    if (b[0] === 0) return utf16(b, 0, false);
    if (b[1] === 0) return utf16(b, 0, true);
  }
  return utf8SurrogatePass(b, 0);
}

/** Strict UTF-8 like Python's `bytes.decode()` (no BOM stripping); null when invalid. */
export function decodeUtf8Strict(b: Uint8Array): string | null {
  try {
    return fatalUtf8.decode(b);
  } catch {
    return null;
  }
}

function utf8SurrogatePass(b: Uint8Array, start: number): string | null {
  const body = start === 0 ? b : b.subarray(start);
  try {
    return fatalUtf8.decode(body);
  } catch {
    return slowUtf8(body);
  }
}

const isCont = (x: number | undefined): boolean => x !== undefined && (x & 0xc0) === 0x80;

/** Python's UTF-8 decoder with the surrogatepass handler (only reached for unusual input). */
function slowUtf8(b: Uint8Array): string | null {
  const units: number[] = [];
  let lastWasHigh = false;
  for (let i = 0; i < b.length; ) {
    const x = b[i];
    let cp: number;
    let surrogate = false;
    if (x < 0x80) {
      cp = x;
      i += 1;
    } else if (x >= 0xc2 && x <= 0xdf && isCont(b[i + 1])) {
      cp = ((x & 0x1f) << 6) | (b[i + 1] & 0x3f);
      i += 2;
    } else if (x >= 0xe0 && x <= 0xef && isCont(b[i + 1]) && isCont(b[i + 2])) {
      const y = b[i + 1];
      if (x === 0xe0 && y < 0xa0) return null;
      cp = ((x & 0x0f) << 12) | ((y & 0x3f) << 6) | (b[i + 2] & 0x3f);
      surrogate = cp >= 0xd800 && cp <= 0xdfff;
      i += 3;
    } else if (x >= 0xf0 && x <= 0xf4 && isCont(b[i + 1]) && isCont(b[i + 2]) && isCont(b[i + 3])) {
      const y = b[i + 1];
      if ((x === 0xf0 && y < 0x90) || (x === 0xf4 && y > 0x8f)) return null;
      cp = ((x & 0x07) << 18) | ((y & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f);
      i += 4;
    } else {
      return null;
    }
    if (surrogate && lastWasHigh && cp >= 0xdc00) return null; // CESU-8 pair: see module doc
    lastWasHigh = surrogate && cp < 0xdc00;
    pushCodePoint(units, cp);
  }
  return fromUnits(units);
}

function utf16(b: Uint8Array, start: number, little: boolean): string | null {
  if ((b.length - start) % 2 !== 0) return null;
  const units: number[] = [];
  for (let i = start; i < b.length; i += 2) units.push(little ? b[i] | (b[i + 1] << 8) : (b[i] << 8) | b[i + 1]);
  return fromUnits(units);
}

function utf32(b: Uint8Array, start: number, little: boolean): string | null {
  if ((b.length - start) % 4 !== 0) return null;
  const units: number[] = [];
  let lastWasHigh = false;
  for (let i = start; i < b.length; i += 4) {
    const cp = little
      ? (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0
      : ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
    if (cp > 0x10ffff) return null;
    if (lastWasHigh && cp >= 0xdc00 && cp <= 0xdfff) return null; // split pair: see module doc
    lastWasHigh = cp >= 0xd800 && cp <= 0xdbff;
    pushCodePoint(units, cp);
  }
  return fromUnits(units);
}

function pushCodePoint(units: number[], cp: number): void {
  if (cp < 0x10000) units.push(cp);
  else units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
}

function fromUnits(units: number[]): string {
  let s = '';
  for (let i = 0; i < units.length; i += 8192) s += String.fromCharCode(...units.slice(i, i + 8192));
  return s;
}
