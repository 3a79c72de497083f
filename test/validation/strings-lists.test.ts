/**
 * String constraints in code points (astral characters count one), lone surrogates, the URL
 * pattern with Rust-regex semantics, list length bounds and the too_long short-circuit,
 * missing fields and error order (docs/decisions.md#1-request-handling-order, step 5 and 2).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CreateSegment, ManageSegmentContacts, TriggerAutomation, parseBody, renderValidationError,
  validateRequest, type Model, type ValidationErrorItem,
} from '../../src/http/validation/index.ts';

function errorsOf(model: Model<unknown>, json: string): ValidationErrorItem[] {
  const r = validateRequest(model, parseBody(Buffer.from(json, 'utf8'), 'application/json'), []);
  return r.ok ? [] : r.errors;
}

const brief = (errors: ValidationErrorItem[]): string[] => errors.map((e) => `${e.type}@${e.loc.join('.')}`);
const emoji = (n: number): string => '😀'.repeat(n);

describe('lengths count code points', () => {
  const table: [string, string[]][] = [
    ['a'.repeat(255), []], ['a'.repeat(256), ['string_too_long@body.name']],
    [emoji(255), []], [emoji(256), ['string_too_long@body.name']],
    ['a'.repeat(254) + '😀', []], ['a'.repeat(255) + '😀', ['string_too_long@body.name']],
    ['e\u0301'.repeat(127) + 'e', []], ['e\u0301'.repeat(128), ['string_too_long@body.name']],
    ['', ['string_too_short@body.name']], ['😀', []], ['\u0000', []], [' ', []],
  ];
  for (const [name, want] of table) {
    test(`name of ${[...name].length} code points / ${name.length} units`, () => {
      assert.deepEqual(brief(errorsOf(CreateSegment, JSON.stringify({ name }))), want);
    });
  }
  test('contacts items: 64 emoji pass, 65 fail with max_length 64', () => {
    assert.deepEqual(errorsOf(ManageSegmentContacts, JSON.stringify({ contacts: [emoji(64)], mode: 'add' })), []);
    const [e] = errorsOf(ManageSegmentContacts, JSON.stringify({ contacts: ['ok', emoji(65)], mode: 'add' }));
    assert.deepEqual([e.type, e.loc, e.msg, e.ctx], ['string_too_long', ['body', 'contacts', 1], 'String should have at most 64 characters', { max_length: 64 }]);
  });
  test('messages: "1 character" singular, plural otherwise', () => {
    assert.equal(errorsOf(CreateSegment, '{"name":""}')[0].msg, 'String should have at least 1 character');
  });
  test('lone surrogates are string_unicode and render escaped (FastAPI would answer 500)', () => {
    const errors = errorsOf(CreateSegment, '{"name":"a\\ud800b"}');
    assert.equal(renderValidationError(errors), '{"detail":[{"type":"string_unicode","loc":["body","name"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":"a\\ud800b"}]}');
  });
});

describe('URL fields: max length before pattern, Rust-regex \\S', () => {
  const url = (u: string): string[] => brief(errorsOf(TriggerAutomation, JSON.stringify({ automation_id: 1, contacts: [{ phone: '1' }], url: u })));
  const table: [string, string[]][] = [
    ['http://a', []], ['https://example.com/x?y=1#z', []], ['ftp://x', ['string_pattern_mismatch@body.url']],
    ['HTTP://A', ['string_pattern_mismatch@body.url']], ['http://a\n', ['string_pattern_mismatch@body.url']],
    ['http://a\u0085', ['string_pattern_mismatch@body.url']], ['http://a\u00a0', ['string_pattern_mismatch@body.url']],
    ['http://a\ufeff', []], ['http://a\u200b', []], ['http://a\u001c', []], ['http://a\u180e', []],
    ['http://' + 'a'.repeat(2041), []], ['http://' + 'a'.repeat(2042), ['string_too_long@body.url']],
    ['http://' + 'a'.repeat(2041) + ' ', ['string_too_long@body.url']], ['http://' + emoji(2041), []],
    ['http://' + emoji(2042), ['string_too_long@body.url']],
  ];
  for (const [u, want] of table) test(JSON.stringify(u.slice(0, 24)) + ` (${u.length})`, () => assert.deepEqual(url(u), want));
  test('pattern error text and ctx', () => {
    const [e] = errorsOf(TriggerAutomation, '{"automation_id":1,"contacts":[{"phone":"1"}],"image_url":"x"}');
    assert.equal(e.msg, "String should match pattern '^https?://\\S+$'");
    assert.deepEqual(e.ctx, { pattern: '^https?://\\S+$' });
  });
});

describe('lists', () => {
  const contacts = (items: unknown[]): string => JSON.stringify({ contacts: items, mode: 'add' });
  test('0 and 1000 items pass', () => {
    assert.deepEqual(errorsOf(ManageSegmentContacts, contacts([])), []);
    assert.deepEqual(errorsOf(ManageSegmentContacts, contacts(Array.from({ length: 1000 }, (_, i) => `p${i}`))), []);
  });
  test('1001 items: only the single too_long, even when every item is invalid', () => {
    const errors = errorsOf(ManageSegmentContacts, contacts(Array(1001).fill(1)));
    assert.deepEqual(brief(errors), ['too_long@body.contacts']);
    assert.equal(errors[0].msg, 'List should have at most 1000 items after validation, not 1001');
    assert.deepEqual(errors[0].ctx, { field_type: 'List', max_length: 1000, actual_length: 1001 });
    assert.equal((errors[0].input as unknown[]).length, 1001);
  });
  test('1000 invalid items: one error per item', () => {
    assert.equal(errorsOf(ManageSegmentContacts, contacts(Array(1000).fill(null))).length, 1000);
  });
  test('too_short for an empty automation contact list', () => {
    const [e] = errorsOf(TriggerAutomation, '{"automation_id":1,"contacts":[]}');
    assert.deepEqual([e.type, e.msg, e.ctx], ['too_short', 'List should have at least 1 item after validation, not 0', { field_type: 'List', min_length: 1, actual_length: 0 }]);
  });
  test('too_long does not stop the other fields', () => {
    const errors = errorsOf(ManageSegmentContacts, JSON.stringify({ contacts: Array(1001).fill('x'), mode: 'x', use_hashed_phone: 2 }));
    assert.deepEqual(brief(errors), ['too_long@body.contacts', 'literal_error@body.mode', 'bool_parsing@body.use_hashed_phone']);
  });
});

describe('objects', () => {
  test('missing fields echo the whole object; unknown keys are ignored', () => {
    const errors = errorsOf(TriggerAutomation, '{"contacts":[{"first_name":"a","x":1}],"y":2}');
    assert.equal(
      renderValidationError(errors),
      '{"detail":[{"type":"missing","loc":["body","automation_id"],"msg":"Field required","input":{"contacts":[{"first_name":"a","x":1}],"y":2}},' +
        '{"type":"missing","loc":["body","contacts",0,"phone"],"msg":"Field required","input":{"first_name":"a","x":1}}]}',
    );
  });
  test('errors follow field order, not key order', () => {
    const errors = errorsOf(ManageSegmentContacts, '{"use_hashed_phone":"maybe","mode":"x","contacts":"y"}');
    assert.deepEqual(brief(errors), ['list_type@body.contacts', 'literal_error@body.mode', 'bool_parsing@body.use_hashed_phone']);
  });
  test('body that is not an object', () => {
    for (const json of ['[]', '"x"', '1', '1.5', 'true']) {
      assert.deepEqual(brief(errorsOf(CreateSegment, json)), ['model_attributes_type@body']);
    }
  });
  test('defaults fill absent optional fields', () => {
    const r = validateRequest(TriggerAutomation, parseBody(Buffer.from('{"automation_id":"7","contacts":[{"phone":"1"}]}'), 'application/json'));
    assert.ok(r.ok);
    assert.deepEqual(r.body, {
      automation_id: 7, image_url: null, video_url: null, url: null, url2: null,
      contacts: [{ phone: '1', first_name: null, last_name: null, variables: null, image_url: null, video_url: null }],
    });
  });
  test('path errors come before body errors; path ids are numbers', () => {
    const body = parseBody(Buffer.from('{"contacts":[1],"mode":"add"}'), 'application/json');
    const bad = validateRequest(ManageSegmentContacts, body, [{ name: 'segment_id', raw: '1.5' }]);
    assert.deepEqual(bad.ok ? [] : brief(bad.errors), ['int_parsing@path.segment_id', 'string_type@body.contacts.0']);
    const good = validateRequest(ManageSegmentContacts, parseBody(Buffer.from('{"contacts":[],"mode":"add"}'), 'application/json'), [{ name: 'segment_id', raw: ' +7 ' }]);
    assert.ok(good.ok && good.path.segment_id === 7);
  });
});
