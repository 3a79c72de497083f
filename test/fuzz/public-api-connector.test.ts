/**
 * Property-based fuzzing of the public operation 4.4 connector_send (what is checked: public-api.ts;
 * 4.1 and 4.2: public-api.test.ts; 4.3 and the tests outside the fuzz: public-api-trigger.test.ts; one
 * file per operation so that none runs longer than 15 s).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answered, doc, fuzz, publicApiServer } from './public-api.ts';

publicApiServer();

test('4.4 connector_send: generated requests', (t) => fuzz(t, 'connector_send'));

test('every status the fuzz runs met is documented for its operation', {
}, () => {
  assert.equal(answered.size, 1, 'runs after the fuzz test of this file');
  const missing: string[] = [];
  for (const [id, statuses] of answered) {
    const documented = doc.operations.get(id)?.responses;
    for (const status of [...statuses].sort()) if (!documented?.has(String(status))) missing.push(`${id} ${status}`);
  }
  assert.deepEqual(missing, []);
});
