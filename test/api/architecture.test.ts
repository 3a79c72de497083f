/**
 * The import rules of src/ (.dependency-cruiser.cjs, docs/architecture.md "Who owns what"), checked with
 * dependency-cruiser: SQL (kysely) only in src/db and the console's read models; the domain imports no
 * transport (queue, http, console) and no provider; the drivers (pg, PGlite, pg-boss's internals) and
 * the modules using their internals (db/driver-tricks.ts, prepared.ts, pglite-dialect.ts) only in src/db.
 *
 * Three checks: src/ breaks no rule; with the rules' exceptions removed, every excepted file is reported
 * (so removing an exception makes the cruise fail, and an exception no longer needed fails here too);
 * and a fixture (test/fixtures/architecture) that breaks each rule in every form of import (static,
 * type-only, side-effect, re-export, `import()` type, dynamic) is reported rule by rule, while an
 * import in a comment or a string is not. dependency-cruiser's swc reader does not see `import('…')`
 * types (and TypeScript 7.0 has no compiler API for its other reader), so a fourth check finds them with
 * swc's parser and requires each outside src/db to name a `node:` module or one in its own folder,
 * which no rule can forbid (`import type` is the form the cruise sees).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import { parseSync } from '@swc/core';
import { cruise, type ICruiseResult, type IForbiddenRuleType, type IViolation } from 'dependency-cruiser';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.join(ROOT, 'test/fixtures/architecture');

interface Config {
  forbidden: IForbiddenRuleType[];
  options: Record<string, unknown>;
  EXCEPTIONS: Record<string, string[]>;
  rules(exceptions?: Record<string, string[]>): IForbiddenRuleType[];
}
const config = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as Config;

/** Cruises `src` under `baseDir` with `forbidden`; the result's modules and violations. */
async function run(forbidden: IForbiddenRuleType[], baseDir = ROOT): Promise<ICruiseResult> {
  const { output } = await cruise(['src'], { ...config.options, baseDir, validate: true, ruleSet: { forbidden } });
  assert.equal(typeof output, 'object');
  return output as ICruiseResult;
}

/** `rule: from -> to` of each violation, sorted. */
function lines(violations: IViolation[]): string[] {
  return violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to.replace(/^(\.\.\/)*/, '')}`).sort();
}

test('src/ breaks no import rule (.dependency-cruiser.cjs)', async () => {
  const out = await run(config.forbidden);
  const domain = out.modules.filter((m) => m.source.startsWith('src/domain/'));
  assert.ok(domain.length > 20, `the domain's modules were cruised (${domain.length})`);
  assert.ok(domain.reduce((n, m) => n + m.dependencies.length, 0) > 100, "the domain's imports were read");
  assert.deepEqual(lines(out.summary.violations), [], 'import rules broken');
});

test('without its exceptions each rule reports every excepted file: removing an exception fails the cruise', async () => {
  const out = await run(config.rules({}));
  const reported = new Set(out.summary.violations.map((v) => `${v.rule.name} ${v.from}`));
  const excepted = Object.entries(config.EXCEPTIONS).flatMap(([rule, files]) => files.map((f) => `${rule} ${f}`));
  assert.deepEqual(excepted.filter((e) => !reported.has(e)), [], 'exceptions no longer needed: remove them from .dependency-cruiser.cjs');
  // And nothing else: the exceptions are exactly the files that break a rule.
  assert.deepEqual([...reported].filter((r) => !excepted.includes(r)).sort(), []);
});

test('the rules find every form of import in a fixture that breaks each of them', async () => {
  const out = await run(config.rules({}), FIXTURE);
  assert.deepEqual(lines(out.summary.violations), [
    'domain-knows-no-transport-or-provider: src/domain/example.ts -> src/http/route.ts',
    'domain-knows-no-transport-or-provider: src/domain/example.ts -> src/queue/side-effect.ts',
    'driver-packages-only-in-db: src/domain/example.ts -> node_modules/@electric-sql/pglite/dist/index.cjs',
    'driver-tricks-only-in-db: src/domain/example.ts -> src/db/driver-tricks.ts',
    'kysely-only-in-db: src/domain/example.ts -> node_modules/kysely/dist/index.js',
    'kysely-only-in-db: src/http/route.ts -> node_modules/kysely/dist/index.js',
    'no-driver-internals-outside-db: src/domain/example.ts -> node_modules/pg-boss/dist/plans.js',
    'pg-boss-only-in-db-and-queue: src/domain/example.ts -> node_modules/pg-boss/dist/index.js',
    'pg-boss-only-in-db-and-queue: src/domain/example.ts -> node_modules/pg-boss/dist/plans.js',
  ]);
  // What is allowed stays allowed: the domain's own module; a comment or a string imports nothing.
  const example = out.modules.find((m) => m.source === 'src/domain/example.ts');
  assert.ok(example);
  assert.ok(example.dependencies.some((d) => d.resolved === 'src/domain/allowed.ts'));
  assert.ok(!example.dependencies.some((d) => /in-a-(comment|string)/.test(d.module)));
  // The exceptions apply: with them, the same fixture file excepted from a rule is not reported under it.
  const excepted = await run(config.rules({ 'kysely-only-in-db': ['src/http/route.ts'] }), FIXTURE);
  assert.ok(!lines(excepted.summary.violations).includes('kysely-only-in-db: src/http/route.ts -> node_modules/kysely/dist/index.js'));
});

/** The specifiers of the `import('…')` types in `file` (TypeScript), by swc's parser. */
function importTypes(file: string): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) { for (const n of node) walk(n); return; }
    if (typeof node !== 'object' || node === null) return;
    const n = node as { type?: string; argument?: { value?: string } };
    if (n.type === 'TsImportType' && typeof n.argument?.value === 'string') found.push(n.argument.value);
    for (const v of Object.values(node)) walk(v);
  };
  walk(parseSync(fs.readFileSync(file, 'utf8'), { syntax: 'typescript', target: 'es2022' }));
  return found;
}

test("an import('…') type outside src/db names a node: module or one in its own folder (no rule can forbid those)", () => {
  const files = fs.globSync('src/**/*.ts', { cwd: ROOT }).filter((f) => !f.startsWith('src/db/'));
  const seen = files.flatMap((f) => importTypes(path.join(ROOT, f)).map((spec) => `${f}: ${spec}`));
  assert.ok(seen.some((s) => s.startsWith('src/queue/jobs.ts: ./handlers/')), `the import types were found (${seen.length})`);
  assert.deepEqual(seen.filter((s) => !/: (node:|\.\/)/.test(s)), [], "use `import type` (dependency-cruiser checks those)");
  assert.deepEqual(importTypes(path.join(FIXTURE, 'src/domain/example.ts')), ['../queue/jobs.ts'], 'the fixture\'s is found');
});
