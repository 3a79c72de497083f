/**
 * The rate card's pure parts (src/domain/rate-card.ts): priceOf's rules (service free, utility free in
 * an open window, country of the calling code, unknown country or rate), checkRateCard's refusals
 * with row indexes, and the CSV reader.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRateCard, priceCard, priceOf, RateCardError, readRateCardCsv } from '../../src/domain/rate-card.ts';

const card = priceCard({
  currency: 'USD',
  rows: [
    { country: 'DE', category: 'MARKETING', price: 0.1365, currency: 'USD' },
    { country: 'DE', category: 'UTILITY', price: 0.0456, currency: 'USD' },
    { country: 'DE', category: 'AUTHENTICATION', price: 0.0768, currency: 'USD' },
    { country: 'US', category: 'UTILITY', price: 0.004, currency: 'USD' },
    { country: 'CA', category: 'UTILITY', price: 0.005, currency: 'USD' },
  ],
});
const DE = '+4915112345678';

test('priceOf: templates by category and country; utility free in an open window; service free', () => {
  assert.deepEqual(priceOf(card, { phone: DE, category: 'MARKETING', windowOpen: false }), { price: 0.1365, currency: 'USD' });
  assert.deepEqual(priceOf(card, { phone: DE, category: 'MARKETING', windowOpen: true }), { price: 0.1365, currency: 'USD' }, 'marketing is charged in the window');
  assert.deepEqual(priceOf(card, { phone: DE, category: 'AUTHENTICATION', windowOpen: true }), { price: 0.0768, currency: 'USD' }, 'authentication is charged in the window');
  assert.deepEqual(priceOf(card, { phone: DE, category: 'UTILITY', windowOpen: false }), { price: 0.0456, currency: 'USD' });
  assert.deepEqual(priceOf(card, { phone: DE, category: 'UTILITY', windowOpen: true }), { free: true });
  assert.deepEqual(priceOf(card, { phone: DE, category: null, windowOpen: true }), { free: true });
  assert.deepEqual(priceOf(card, { phone: DE, category: 'SERVICE', windowOpen: false }), { free: true });
});

test('priceOf: the country of the number (+1 split by area code); unknown without a rate or a country', () => {
  assert.deepEqual(priceOf(card, { phone: '+12025550143', category: 'UTILITY', windowOpen: false }), { price: 0.004, currency: 'USD' });
  assert.deepEqual(priceOf(card, { phone: '+14165550143', category: 'UTILITY', windowOpen: false }), { price: 0.005, currency: 'USD' });
  assert.deepEqual(priceOf(card, { phone: '+12025550143', category: 'MARKETING', windowOpen: false }), { unknown: true });
  assert.deepEqual(priceOf(card, { phone: '+33612345678', category: 'MARKETING', windowOpen: false }), { unknown: true });
  assert.deepEqual(priceOf(card, { phone: '+80012345678', category: 'MARKETING', windowOpen: false }), { unknown: true });
  assert.deepEqual(priceOf(card, { phone: DE, category: 'PROMO', windowOpen: false }), { unknown: true });
  assert.deepEqual(priceOf(priceCard({ currency: null, rows: [] }), { phone: DE, category: 'MARKETING', windowOpen: false }), { unknown: true });
});

test('checkRateCard: normalises prices; names every bad row by index and field', () => {
  assert.deepEqual(checkRateCard([{ country: 'DE', category: 'UTILITY', price: '0.0300', currency: 'EUR' }]), [{ country: 'DE', category: 'UTILITY', price: 0.03, currency: 'EUR' }]);
  assert.deepEqual(checkRateCard([{ country: 'DE', category: 'UTILITY', price: 0, currency: 'EUR' }])[0].price, 0);
  const problems = (rows: unknown[]) => {
    try {
      checkRateCard(rows as never);
    } catch (err) {
      assert.ok(err instanceof RateCardError);
      return err.problems.map((p) => `${p.index}:${p.field}`);
    }
    return [];
  };
  assert.deepEqual(problems([
    { country: 'DE', category: 'UTILITY', price: 0.1, currency: 'EUR' },
    { country: 'QQ', category: 'UTILITY', price: 0.1, currency: 'EUR' },
    { country: 'FR', category: 'Utility', price: -0.1, currency: 'usd' },
    { country: 'DE', category: 'UTILITY', price: 0.2, currency: 'EUR' },
    { country: 'IT', category: 'UTILITY', price: '1e-3', currency: 'USD' },
    { country: 'ES', category: 'UTILITY', price: 1e-12, currency: 'EUR' },
  ]), ['1:country', '2:category', '2:price', '2:currency', '3:category', '4:price', '4:currency', '5:price']);
});

test('readRateCardCsv: header in any order and case, ; or , delimiter, BOM; a bad header refused', () => {
  assert.deepEqual(readRateCardCsv('\uFEFFPrice;Country;Category;Currency\n0.1;DE;MARKETING;EUR\n\n'), [{ price: '0.1', country: 'DE', category: 'MARKETING', currency: 'EUR' }]);
  assert.throws(() => readRateCardCsv('country,category,price\nDE,MARKETING,0.1\n'), (err) => err instanceof RateCardError && err.problems[0].index === undefined);
  assert.throws(() => readRateCardCsv('country,category,price,currency,extra\n'), RateCardError);
  assert.throws(() => readRateCardCsv('country,category,price,currency\nDE,MARKETING\n'), RateCardError);
});
