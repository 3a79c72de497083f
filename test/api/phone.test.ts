/**
 * Phone normalisation (docs/decisions.md#5-phone-numbers-and-digests) and its memo (src/domain/phone.ts): E.164 with the company's
 * default country, invalid numbers refused, answers per default country, and the same answers after
 * the memo has turned over its generations; countryOf's answer is the same whether toE164 filled its
 * memo or countryOf parsed the number itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getCountries, getExampleNumber, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { countryOf, isDigest, phoneDigests, toE164 } from '../../src/domain/phone.ts';

test('numbers become E.164 with the default country; invalid ones are null', () => {
  assert.equal(toE164('+49 151 12345678', 'DE'), '+4915112345678');
  assert.equal(toE164('0151 12345678', 'DE'), '+4915112345678');
  assert.equal(toE164('(202) 555-0147', 'US'), '+12025550147');
  assert.equal(toE164('0151 123', 'DE'), null); // too short for a German mobile number
  assert.equal(toE164('not a phone', 'DE'), null);
  assert.equal(toE164('1'.repeat(65), 'DE'), null);
});

test('the same text under two default countries gets each its own answer', () => {
  assert.equal(toE164('030 1234567', 'DE'), '+49301234567');
  const fr = toE164('030 1234567', 'FR');
  assert.notEqual(fr, '+49301234567');
  // Asked again (now from the memo), each country keeps its answer.
  assert.equal(toE164('030 1234567', 'DE'), '+49301234567');
  assert.equal(toE164('030 1234567', 'FR'), fr);
});

test('answers stay right after the memo has turned over (more numbers than two generations hold)', () => {
  const first = Array.from({ length: 50 }, (_, i) => `0151 ${String(10_000_000 + i)}`);
  const expected = first.map((p) => `+49151${p.slice(5)}`);
  assert.deepEqual(first.map((p) => toE164(p, 'DE')), expected);
  for (let i = 0; i < 110_000; i++) toE164(`0160 ${String(20_000_000 + i)}`, 'DE');
  assert.deepEqual(first.map((p) => toE164(p, 'DE')), expected);
  assert.equal(toE164('0160 20109999', 'DE'), '+4916020109999');
});

test('digests: SHA-256 of the E.164 form with and without the +', () => {
  const d = phoneDigests('+4915112345678');
  assert.ok(isDigest(d.plus.toString('hex')) && isDigest(d.bare.toString('hex').toUpperCase()));
  assert.notEqual(d.plus.toString('hex'), d.bare.toString('hex'));
  assert.equal(isDigest('xyz'), false);
});

/** countryOf computed from scratch: libphonenumber-js's country of a valid number, else ''. */
function countryFromScratch(e164: string): string {
  const parsed = parsePhoneNumberFromString(e164, { extract: false });
  return parsed && parsed.isValid() ? parsed.country ?? '' : '';
}

test('countryOf answers the same after toE164 has seen the number in E.164 form (numbers shared by several countries too)', () => {
  // Every country's example mobile number, and numbers of the calling codes that several countries
  // share (+1: the US, Canada and the Caribbean; +7: Russia and Kazakhstan; +44: the UK and its
  // Crown Dependencies), given as E.164 text to toE164 first, under a default country of another code.
  const samples = getCountries().map((c) => getExampleNumber(c as CountryCode, examples)?.number).filter((n): n is string => !!n);
  assert.ok(samples.length > 200);
  let withCountry = 0;
  for (const e164 of samples) {
    assert.equal(toE164(e164, 'DE'), e164);
    const expected = countryFromScratch(e164);
    assert.equal(countryOf(e164), expected, e164);
    if (expected) withCountry++;
  }
  assert.ok(withCountry > 200);
  fc.assert(fc.property(
    fc.constantFrom('+1', '+7', '+44', '+39', '+262', '+599', '+47'), fc.stringMatching(/^[2-9][0-9]{5,10}$/), fc.constantFrom('US', 'DE', 'GB'),
    (code, rest, defaultCountry) => {
      const e164 = toE164(code + rest, defaultCountry);
      if (e164 === null) return true;
      return countryOf(e164) === countryFromScratch(e164);
    }), { numRuns: 3_000, seed: 20261128 });
});
