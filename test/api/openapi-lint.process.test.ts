/**
 * `redocly lint --extends recommended` on the served document: the document that
 * a running server answers at `/openapi.json` has 0 errors and 0 warnings, except the warnings of
 * {@link ALLOWED} (each justified in docs/api.md, "Lint of the OpenAPI document").
 *
 * Two linters, the same rules: `@redocly/openapi-core`'s programmatic API (in-process) and the
 * `redocly` CLI of package.json's devDependencies (the command the acceptance names, run on the
 * document written to a file). A problem either reports fails the test, with every problem listed.
 * Also: every tag in use has a description (redocly checks only the declared ones), and every request
 * body and answer with a body has an example, none with an id of 0 (such as `"automation_id": 0`).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Warnings left on purpose (docs/api.md): `rule pointer` (JSON pointer of the first location) → the reason. */
const noInput = 'takes no input and needs no credentials: it has no 4xx to document';
const ALLOWED: Readonly<Record<string, string>> = {
  'operation-4xx-response #/paths/~1healthz/get/responses': noInput,
  'operation-4xx-response #/paths/~1readyz/get/responses': noInput,
  'operation-4xx-response #/paths/~1metrics/get/responses': noInput,
};

interface Problem { ruleId: string; severity: string; message: string; pointer: string }

let s: TestServer;
let source: string;

before(async () => {
  s = await startTestServer({ role: 'api' });
  const res = await fetch(`${s.url}/openapi.json`);
  assert.equal(res.status, 200);
  source = JSON.stringify(await res.json(), null, 2);
});
after(() => s?.close());

/** Problems not in {@link ALLOWED}: every error, and warnings without a justification. */
function unexpected(problems: Problem[]): string[] {
  return problems
    .filter((p) => p.severity === 'error' || !(`${p.ruleId} ${p.pointer}` in ALLOWED))
    .map((p) => `${p.severity} ${p.ruleId} ${p.pointer}: ${p.message}`);
}

test('redocly recommended rules (openapi-core, in-process): 0 errors, 0 unexplained warnings', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const found = await lintFromString({ source, absoluteRef: path.join(os.tmpdir(), 'cms-openapi.json'), config });
  const problems = found.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location[0]?.pointer ?? '' }));
  assert.deepEqual(unexpected(problems), []);
});

test('redocly CLI (the devDependency) lint --extends recommended: 0 errors, 0 unexplained warnings', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, source);
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/package.json').replace(/package\.json$/, 'bin/cli.js');
    // Exit status 1 when there are errors: the JSON report is what counts.
    const out = await promisify(execFile)(process.execPath, [cli, 'lint', '--extends', 'recommended', '--format=json', file], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(out.stdout) as { problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location[0]?.pointer ?? '' }));
    assert.deepEqual(unexpected(problems), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every tag an operation uses is declared with a description, and every operation has an operationId', () => {
  const doc = JSON.parse(source) as { tags?: { name: string; description?: string }[]; paths: Record<string, Record<string, { tags?: string[]; operationId?: string }>> };
  const described = new Set((doc.tags ?? []).filter((t) => (t.description ?? '').length > 0).map((t) => t.name));
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const tag of op.tags ?? []) if (!described.has(tag)) problems.push(`${method} ${path}: tag "${tag}" has no description in TAGS (src/http/openapi-schemas.ts)`);
      if ((op.tags ?? []).length === 0) problems.push(`${method} ${path}: no tag`);
      if (!op.operationId) problems.push(`${method} ${path}: no operationId`);
    }
  }
  assert.deepEqual(problems, []);
});

test('every request body and every answer with a body has an example; no example id is 0', () => {
  const doc = JSON.parse(source) as { paths: Record<string, Record<string, any>> };
  const problems: string[] = [];
  const zeroIds = (value: unknown, where: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => zeroIds(v, `${where}[${i}]`));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (/_id$/.test(k) && v === 0) problems.push(`${where}.${k} is 0`);
        zeroIds(v, `${where}.${k}`);
      }
    }
  };
  const check = (media: any, where: string) => {
    const values = media.examples ? Object.values(media.examples).map((e: any) => e.value) : media.example !== undefined ? [media.example] : media.schema?.examples ?? [];
    if (values.length === 0) problems.push(`${where}: no example`);
    values.forEach((v: unknown) => zeroIds(v, where));
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) check(media, `${method} ${path} request ${type}`);
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, any][]) {
        for (const [type, media] of Object.entries(response.content ?? {})) check(media, `${method} ${path} ${status} ${type}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('every allowed warning still occurs (no stale justifications)', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const found = await lintFromString({ source, absoluteRef: path.join(os.tmpdir(), 'cms-openapi.json'), config });
  const seen = new Set(found.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`));
  assert.deepEqual(Object.keys(ALLOWED).filter((k) => !seen.has(k)), []);
});
