/**
 * Property-based fuzzing of the public operations 4.1 and 4.2 (4.3: public-api-trigger.test.ts; 4.4: public-api-connector.test.ts;
 * the fuzz itself: public-api.ts), generated from the service's
 * own OpenAPI document (`GET /openapi.json`) with fast-check. For each operation FUZZ_RUNS requests
 * (default 2,000) go to the real server over HTTP, about 40 % valid and 60 % mutated (see
 * generators.ts and mutations.ts). Checks on every answer:
 *
 * - never a 5xx; always JSON with a JSON Content-Type;
 * - every 4xx body is `{detail: string}`, `{detail: [{type, loc, msg, input?, ctx?}]}` or `{error: string}`;
 * - a valid request is never refused with 422; more precisely it gets the status the current state
 *   decides (200, or the documented 400/403/404, or 429 when the limiter was not reset);
 * - a request whose defect docs/decisions.md fixes gets that status, in its order: 413, 400 (encoding,
 *   nesting, digits), 422 json_invalid, 401, 403, 422 validation, 400 bad Idempotency-Key;
 * - another company's key with this company's ids gets 404, as an unknown id does (BOLA);
 * - every answer of a documented status matches the document's schema (Ajv), and a 200 agrees with
 *   its request (echoed name, segment id, mode, counts).
 *
 * In `npm test` the seed is fixed ({@link FIXED_SEED}): the run is the same every time. `npm run
 * test:fuzz` (FUZZ_SEED=random) draws a new seed; the seed is printed either way; replay a run with
 * FUZZ_SEED=<seed> (and FUZZ_RUNS=<n>). Rate limits: each
 * request resets its company's window first, except in a tenth of the runs, where a 429 may answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ajvProblem } from './checks.ts';
import { collectRefs } from './openapi.ts';
import { answered, doc, fuzz, IDEMPOTENCY_MISMATCH, publicApiServer } from './public-api.ts';

publicApiServer();

test('4.1 create_segment: generated requests', (t) => fuzz(t, 'create_segment'));
test('4.2 manage_segment_contacts: generated requests', (t) => fuzz(t, 'manage_segment_contacts'));

test('every status the fuzz runs met is documented for its operation', {
}, () => {
  assert.equal(answered.size, 2, 'runs after the two fuzz tests of this file');
  const missing: string[] = [];
  for (const [id, statuses] of answered) {
    const documented = doc.operations.get(id)?.responses;
    for (const status of [...statuses].sort()) if (!documented?.has(String(status))) missing.push(`${id} ${status}`);
  }
  assert.deepEqual(missing, []);
});

test('the OpenAPI document defines every schema it references', {
}, async () => {
  const defined = new Set(Object.keys(doc.raw.components?.schemas ?? {}).map((n) => `#/components/schemas/${n}`));
  const missing = [...new Set(collectRefs(doc.raw))].filter((r) => !defined.has(r));
  assert.deepEqual(missing, [], 'dangling $ref in /openapi.json');
});

test('the documented 422 of 4.3 and 4.4 admits the Idempotency-Key mismatch answer', {
}, () => {
  for (const id of ['trigger_automation', 'connector_send']) {
    const validate = doc.operations.get(id)?.responses.get('422');
    assert.ok(validate, `${id} documents 422`);
    assert.ok(validate({ detail: IDEMPOTENCY_MISMATCH }), `${id}: ${ajvProblem(validate)}`);
  }
});
