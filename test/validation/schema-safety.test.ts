/**
 * JSON Schema output against the oracle's /openapi.json components, echo serialisation
 * details, and the safety of validated `variables` (no prototype pollution, own data keys).
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  ConnectorSend, CreateSegment, ManageSegmentContacts, TriggerAutomation, VALIDATION_ERROR_SCHEMAS,
  jsonSchemaComponents, jsonSchemaOf, parseBody, pyJsonDumps, validateRequest, type Out,
} from '../../src/http/validation/index.ts';

describe('JSON Schema like FastAPI', () => {
  const oracle = JSON.parse(readFileSync(new URL('../fixtures/validation/openapi-components.json', import.meta.url), 'utf8')) as Record<string, object>;
  test('components match the oracle, key order included', () => {
    const ours = { ...jsonSchemaComponents([CreateSegment, ManageSegmentContacts, TriggerAutomation, ConnectorSend]), ...VALIDATION_ERROR_SCHEMAS };
    const sorted = (o: Record<string, object>): string => JSON.stringify(Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]])));
    assert.equal(sorted(ours), sorted(oracle));
  });
  test('jsonSchemaOf gives one component with $ref to nested models', () => {
    const s = jsonSchemaOf(TriggerAutomation) as { properties: { contacts: { items: unknown } } };
    assert.deepEqual(s.properties.contacts.items, { $ref: '#/components/schemas/AutomationContact' });
  });
});

describe('variables are plain, prototype-free data', () => {
  const body = '{"automation_id":1,"contacts":[{"phone":"1","variables":{"__proto__":{"polluted":1},"constructor":{"prototype":{"p":1}},"toString":2,"n":1.0,"big":12345678901234567890,"list":[1.5,{"k":null}]}}]}';
  const r = validateRequest(TriggerAutomation, parseBody(Buffer.from(body), 'application/json'));
  test('validates', () => assert.ok(r.ok));
  const vars = r.ok ? r.body.contacts[0].variables : null;
  test('keys are own data properties of a null-prototype object', () => {
    assert.ok(vars);
    assert.equal(Object.getPrototypeOf(vars), null);
    assert.deepEqual(Object.keys(vars), ['__proto__', 'constructor', 'toString', 'n', 'big', 'list']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(vars, '__proto__')?.value, Object.assign(Object.create(null), { polluted: 1 }));
  });
  test('nothing leaks into Object.prototype', () => {
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).p, undefined);
  });
  test('values: floats are numbers, big ints bigints, nested objects null-prototype', () => {
    assert.ok(vars);
    assert.equal(vars.n, 1);
    assert.equal(vars.big, 12345678901234567890n);
    const list = vars.list as unknown[];
    assert.equal(list[0], 1.5);
    assert.equal(Object.getPrototypeOf(list[1]), null);
  });
  test('the validated type is the declared one', () => {
    const name: Out<typeof CreateSegment>['name'] = 'x';
    const mode: Out<typeof ManageSegmentContacts>['mode'] = 'delete';
    assert.equal(name + mode, 'xdelete');
  });
});

describe('echo serialisation (json.dumps ensure_ascii=False, compact)', () => {
  const echo = (json: string): string => pyJsonDumps((parseBody(Buffer.from(json), 'application/json') as { value: unknown }).value);
  const table: [string, string][] = [
    ['{"a" : [1 , 2.50, -0.0, 1E2, 1e16, 1e-5]}', '{"a":[1,2.5,-0.0,100.0,1e+16,1e-05]}'],
    ['"\\u0000\\u001f\\"\\\\\\/\\b\\f\\n\\r\\t\\u007f\\u00e9\\u2028😀"', '"\\u0000\\u001f\\"\\\\/\\b\\f\\n\\r\\t\u007fé\u2028😀"'],
    ['[NaN, Infinity, -Infinity, 1e400]', '[null,null,null,null]'],
    ['"\\ud800x\\udc00"', '"\\ud800x\\udc00"'],
    ['{"b":1,"a":2,"b":3}', '{"b":3,"a":2}'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
  ];
  for (const [input, want] of table) test(input, () => assert.equal(echo(input), want));
});
