/**
 * src/db/schema.sql is the schema as migrated (src/db/schema-dump.ts, `npm run db:dump`): a freshly
 * migrated embedded database dumps to exactly that text, so the checked-in file shows every table,
 * index, function and trigger as they are now. Runs on the embedded database only: PostgreSQL of
 * another major version deparses some definitions differently.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openPglite } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { dumpSchema } from '../../src/db/schema-dump.ts';

const FILE = path.join(import.meta.dirname, '../../src/db/schema.sql');

test('src/db/schema.sql is the schema of a freshly migrated database', { skip: process.env.TEST_DATABASE_URL ? 'the dump is the embedded database\'s (this run is on PostgreSQL)' : false }, async () => {
  const database = await openPglite('memory://schema-dump-test');
  try {
    await migrate(database);
    const dumped = (await dumpSchema(database.db)).split('\n');
    const stored = fs.readFileSync(FILE, 'utf8').split('\n');
    const at = dumped.findIndex((line, i) => line !== stored[i]);
    const first = at === -1 && dumped.length !== stored.length ? Math.min(dumped.length, stored.length) : at;
    assert.equal(first, -1, `src/db/schema.sql differs from the migrated schema at line ${first + 1} (migrated: ${JSON.stringify(dumped[first])}, file: ${JSON.stringify(stored[first])}): run npm run db:dump`);
  } finally {
    await database.close();
  }
});

test('the dump shows a function once, in its current definition, and every table', async () => {
  const text = fs.readFileSync(FILE, 'utf8');
  // cms_text_time is defined once; redefined functions appear once too.
  const defs = [...text.matchAll(/^CREATE OR REPLACE FUNCTION public\.([a-z_0-9]+)\(/gm)].map((m) => m[1]);
  assert.equal(new Set(defs).size, defs.length, 'no function twice');
  for (const table of ['contacts', 'messages', 'batches', 'segments', 'schema_migrations']) assert.match(text, new RegExp(`^CREATE TABLE ${table} \\(`, 'm'));
  assert.match(text, /CREATE INDEX contacts_live_id ON public\.contacts USING btree \(company_id, contact_id\) WHERE \(erased_at IS NULL\);/);
});
