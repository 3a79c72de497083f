/**
 * Named prepared statements on PGlite (src/db/driver-tricks.ts trick 5): the same rows, counts and
 * errors as `pglite.query`, statements kept per text up to a capacity, a schema change handled, and
 * PGlite's locking kept (a statement outside a transaction waits for an open one). PGlite only.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as pgliteModule from '@electric-sql/pglite';
import { sql } from 'kysely';
import { openPglite, type Database } from '../../src/db/database.ts';
import { PgliteStatements } from '../../src/db/driver-tricks.ts';
import { seedDataDir, testTmpDir } from '../helpers/server.ts';

const skip = process.env.TEST_DATABASE_URL ? 'PGlite only (this run is on PostgreSQL)' : false;

let dir: string;
let database: Database;
before(async () => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(testTmpDir(), 'cms-statements-'));
  await seedDataDir(dir);
  database = await openPglite(dir);
  await database.pglite!.exec(`CREATE TABLE t (id int8 PRIMARY KEY, u uuid, at timestamptz, doc jsonb, ok boolean, tags text[], amount numeric, note text UNIQUE)`);
});
after(async () => {
  if (skip) return;
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const prepared = async (): Promise<string[]> =>
  (await database.pglite!.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time')).rows.map((r) => r.statement);

test('rows, counts and parameter types are those of pglite.query', { skip }, async () => {
  const statements = database.pgliteStatements!;
  const insert = 'INSERT INTO t (id, u, at, doc, ok, tags, amount, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *';
  const at = new Date('2026-03-04T05:06:07.123Z');
  const a = await statements.query(insert, [1, '6f1c2b7e-9a51-4c36-8e52-5a0f3f0d2c11', at, { k: [1, 'x', null] }, true, ['a', 'b,c'], '12.50', 'one']);
  const b = await database.pglite!.query(insert, [2, '6f1c2b7e-9a51-4c36-8e52-5a0f3f0d2c12', at, { k: [1, 'x', null] }, true, ['a', 'b,c'], '12.50', 'two']);
  assert.equal(a.affectedRows, 1);
  assert.deepEqual({ ...(a.rows[0] as object), id: 0, u: '', note: '' }, { ...(b.rows[0] as object), id: 0, u: '', note: '' });
  assert.deepEqual(a.rows[0], { id: 1, u: '6f1c2b7e-9a51-4c36-8e52-5a0f3f0d2c11', at, doc: { k: [1, 'x', null] }, ok: true, tags: ['a', 'b,c'], amount: '12.50', note: 'one' });

  const select = 'SELECT id, doc, tags FROM t WHERE id = ANY($1::int8[]) AND ($2::text IS NULL OR note = $2) ORDER BY id';
  for (const params of [[[1, 2], null], [[2], 'two'], [[], null]]) {
    assert.deepEqual((await statements.query(select, params)).rows, (await database.pglite!.query(select, params)).rows);
  }
  const update = 'UPDATE t SET ok = $1 WHERE id > $2';
  assert.equal((await statements.query(update, [false, 0])).affectedRows, 2);
  assert.ok((await prepared()).includes(select), 'the SELECT is a named statement');
});

test('errors are PostgreSQL errors with their code and constraint; the connection goes on', { skip }, async () => {
  const statements = database.pgliteStatements!;
  const insert = 'INSERT INTO t (id, note) VALUES ($1, $2)';
  await statements.query(insert, [10, 'ten']);
  const duplicate = await statements.query(insert, [11, 'ten']).then(() => undefined, (e: unknown) => e as { code?: string; constraint?: string });
  assert.equal(duplicate?.code, '23505');
  assert.equal(duplicate?.constraint, 't_note_key');
  const syntax = await statements.query('SELEC 1').then(() => undefined, (e: unknown) => e as { code?: string });
  assert.equal(syntax?.code, '42601');
  const badValue = await statements.query('SELECT $1::uuid AS u', ['not-a-uuid']).then(() => undefined, (e: unknown) => e as { code?: string });
  assert.equal(badValue?.code, '22P02');
  assert.deepEqual((await statements.query('SELECT $1::uuid AS u', ['6f1c2b7e-9a51-4c36-8e52-5a0f3f0d2c11'])).rows, [{ u: '6f1c2b7e-9a51-4c36-8e52-5a0f3f0d2c11' }]);
  assert.deepEqual((await statements.query('SELECT count(*)::int AS n FROM t WHERE note = $1', ['ten'])).rows, [{ n: 1 }]);
});

test('a failed statement in a Kysely transaction rolls the whole transaction back', { skip }, async () => {
  const db = database.db;
  await assert.rejects(db.transaction().execute(async (trx) => {
    await sql`INSERT INTO t (id, note) VALUES (${20}, ${'twenty'})`.execute(trx);
    await sql`INSERT INTO t (id, note) VALUES (${21}, ${'twenty'})`.execute(trx);
  }), (e: { code?: string }) => e.code === '23505');
  assert.deepEqual((await sql<{ n: number }>`SELECT count(*)::int AS n FROM t WHERE id IN (20, 21)`.execute(db)).rows, [{ n: 0 }]);
});

test('a statement outside a transaction waits for the open one and sees its commit', { skip }, async () => {
  const db = database.db;
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  let inserted!: () => void;
  const didInsert = new Promise<void>((resolve) => { inserted = resolve; });
  const tx = db.transaction().execute(async (trx) => {
    await sql`INSERT INTO t (id, note) VALUES (${30}, ${'thirty'})`.execute(trx);
    inserted();
    await held;
    order.push('commit');
  });
  await didInsert;
  const outside = database.pgliteStatements!.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE id = $1', [30]).then((r) => {
    order.push('read');
    return r.rows[0]!.n;
  });
  try {
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, [], 'the read waits for the transaction');
  } finally {
    release();
    await tx;
  }
  assert.equal(await outside, 1);
  assert.deepEqual(order, ['commit', 'read']);
});

test('at most `capacity` statements stay prepared; an evicted text is prepared again', { skip }, async () => {
  const small = new PgliteStatements(database.pglite!, pgliteModule, { tricks: true, capacity: 2 });
  const texts = [1, 2, 3, 4].map((k) => `SELECT ${k}::int + $1::int AS n`);
  for (let round = 0; round < 2; round++) {
    for (const [i, text] of texts.entries()) assert.deepEqual((await small.query(text, [10])).rows, [{ n: 11 + i }]);
  }
  const mine = (await prepared()).filter((s) => texts.includes(s));
  assert.ok(mine.length <= 3, `at most capacity + 1 (closed with the next prepare): ${JSON.stringify(mine)}`);
});

test('with the tricks off, statements run through pglite.query and nothing is prepared', { skip }, async () => {
  const plain = new PgliteStatements(database.pglite!, pgliteModule, { tricks: false });
  const text = 'SELECT $1::text || $2::text AS s';
  assert.deepEqual((await plain.query(text, ['a', 'b'])).rows, [{ s: 'ab' }]);
  assert.equal((await prepared()).includes(text), false);
});

test('after a migration script changes a table, its statements run against the new columns', { skip }, async () => {
  const statements = database.pgliteStatements!;
  await statements.query('CREATE TABLE w (id int PRIMARY KEY)');
  await statements.query('INSERT INTO w VALUES ($1)', [1]);
  assert.deepEqual((await statements.query('SELECT * FROM w')).rows, [{ id: 1 }]);
  await database.runScriptLocked(1, async (run) => { await run(`ALTER TABLE w ADD COLUMN label text NOT NULL DEFAULT 'x'`); });
  assert.deepEqual((await statements.query('SELECT * FROM w')).rows, [{ id: 1, label: 'x' }]);
});

test('a statement dropped or outdated behind its back fails once, then is prepared again', { skip }, async () => {
  const statements = database.pgliteStatements!;
  await statements.query('CREATE TABLE v (id int PRIMARY KEY)');
  await statements.query('INSERT INTO v VALUES ($1)', [1]);
  const all = 'SELECT * FROM v ORDER BY id';
  assert.deepEqual((await statements.query(all)).rows, [{ id: 1 }]);
  await database.pglite!.exec('DEALLOCATE ALL');
  await assert.rejects(statements.query(all), (e: { code?: string }) => e.code === '26000');
  assert.deepEqual((await statements.query(all)).rows, [{ id: 1 }]);
  await database.pglite!.exec(`ALTER TABLE v ADD COLUMN label text NOT NULL DEFAULT 'y'`);
  await assert.rejects(statements.query(all), (e: { code?: string }) => e.code === '0A000');
  assert.deepEqual((await statements.query(all)).rows, [{ id: 1, label: 'y' }]);
});

test('raw SQL statements report the rows they changed, as on PostgreSQL (Kysely numAffectedRows)', { skip }, async () => {
  await database.pglite!.exec('CREATE TABLE r (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)');
  const changed = async (q: ReturnType<typeof sql>) => (await q.execute(database.db)).numAffectedRows;
  assert.equal(await changed(sql`INSERT INTO r (id) VALUES (1), (2), (3)`), 3n);
  assert.equal(await changed(sql`UPDATE r SET n = n + 1 WHERE id < 3`), 2n);
  assert.equal(await changed(sql`DELETE FROM r WHERE id = 3`), 1n);
  assert.equal(await changed(sql`SELECT * FROM r`), undefined, 'a SELECT changes nothing and reports nothing');
  assert.equal(await changed(sql`UPDATE r SET n = n + 1 WHERE id = 99`), 0n);
});
