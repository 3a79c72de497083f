/**
 * Property-based fuzzing of the public operation 4.3 trigger_automation (what is checked:
 * public-api.ts; 4.1 and 4.2: public-api.test.ts; 4.4: public-api-connector.test.ts; one file per
 * operation so that none runs longer than 15 s), and two answers of the public API outside the fuzz:
 * a text starting with U+FEFF, and routing before parsing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { sql } from 'kysely';
import { agent, answered, doc, fuzz, newCompany, publicApiServer, s } from './public-api.ts';

publicApiServer();

test('4.3 trigger_automation: generated requests', (t) => fuzz(t, 'trigger_automation'));

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

// PGlite's protocol reader decoded with a BOM-stripping TextDecoder and dropped a leading U+FEFF from
// every text it returned; src/db/driver-tricks.ts keepLeadingBom (trick 7) fixes that.
test('a text starting with U+FEFF is stored and answered unchanged', async () => {
  const c = await newCompany();
  const name = '\ufeffx';
  const created = await s.api('/api/segments/create', { key: c.key, body: { name } });
  assert.equal(created.status, 200);
  assert.equal(created.json.name, name, 'answer');
  const row = await s.service.deps.database.db.selectFrom('segments').select('name').where('segment_id', '=', created.json.segment_id).executeTakeFirstOrThrow();
  assert.equal(row.name, name, 'stored');
  const { rows } = await sql<{ a: string; b: string }>`SELECT ${'\ufeff\ufeffy'}::text AS a, ${'\ufeff'}::text AS b`.execute(s.service.deps.database.db);
  assert.deepEqual(rows[0], { a: '\ufeff\ufeffy', b: '\ufeff' }, 'any text read back');
});

test('routing comes first: an unknown path is 404 and a wrong method 405, whatever the Content-Type', {
}, async () => {
  for (const contentType of ['json', 'application/', ';x', 'text/plain']) {
    const unknown = await request(s.url + '/api/contacts', { method: 'POST', headers: ['content-type', contentType], body: '{}', dispatcher: agent });
    assert.equal(unknown.statusCode, 404, contentType);
    assert.equal(await unknown.body.text(), '{"detail":"Not Found"}');
    const wrongMethod = await request(s.url + '/api/segments/create', { method: 'PUT', headers: ['content-type', contentType], body: '{}', dispatcher: agent });
    assert.equal(wrongMethod.statusCode, 405, contentType);
    assert.equal(await wrongMethod.body.text(), '{"detail":"Method Not Allowed"}');
  }
});
