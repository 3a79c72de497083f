/**
 * fast-check arbitraries shared by the property and fuzz tests.
 */
import fc from 'fast-check';

/** Code points below the surrogate block, and how many the block holds (U+D800-U+DFFF). */
const SURROGATES_START = 0xd800;
const SURROGATES = 0x800;

/**
 * One Unicode scalar value (any code point U+0000-U+10FFFF but the surrogates) as a string: the
 * characters of fast-check's `unit: 'binary'`, uniformly. fast-check builds that unit on first use
 * with a reverse table of all 1,112,064 characters (about 0.7 s of CPU and a Map of a million entries
 * in every test process that loads it); this one maps an integer both ways instead, so shrinking
 * still works.
 */
export const scalarValue: fc.Arbitrary<string> = fc.integer({ min: 0, max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < SURROGATES_START ? i : i + SURROGATES),
  (s) => {
    if (typeof s !== 'string') throw new Error('not a string');
    const cp = s.codePointAt(0);
    if (cp === undefined || String.fromCodePoint(cp) !== s || (cp >= SURROGATES_START && cp < SURROGATES_START + SURROGATES)) throw new Error('not one scalar value');
    return cp < SURROGATES_START ? cp : cp - SURROGATES;
  },
);
