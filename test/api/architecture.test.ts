/**
 * The domain knows neither the queue nor the database driver (docs/architecture.md, "Who owns what"):
 * no file under src/domain imports src/queue/**, the driver internals of src/db (driver-tricks.ts,
 * prepared.ts, pglite-dialect.ts) or the driver packages (pg, pg-boss, @electric-sql/pglite). What the
 * domain needs of them is handed in from src/service.ts (the accept store, the job queue).
 *
 * The import statements are read from the source text: static imports and re-exports (type-only ones
 * too), side-effect imports, dynamic `import()` and `import('...')` types, `require()`; comments,
 * strings and regular expressions are skipped so that neither hides nor fakes an import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOMAIN = path.join(ROOT, 'src/domain');

/** Files (repository paths) and packages the domain must not import; a folder ends with `/`. */
const FORBIDDEN_FILES = ['src/queue/', 'src/db/driver-tricks.ts', 'src/db/prepared.ts', 'src/db/pglite-dialect.ts'];
const FORBIDDEN_PACKAGES = ['pg', 'pg-boss', '@electric-sql/pglite', 'pg-pool', 'pg-protocol', 'pg-cursor'];

const KEYWORDS_BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'instanceof']);

/**
 * The source text with comments blanked out (strings, template literals and regular expressions kept
 * as they are, but never mistaken for comments), and the spans of its string literals.
 */
function withoutComments(text: string): { code: string; strings: { start: number; end: number }[] } {
  const out = text.split('');
  const strings: { start: number; end: number }[] = [];
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  /** Brace depth of each open `${` of a template literal. */
  const templates: number[] = [];
  let depth = 0;
  let prev = ''; // the last significant token's last character, or a keyword
  let i = 0;
  const templateRest = (from: number): number => { // scans a template from after ` or }; returns the index after it or after ${
    let j = from;
    while (j < text.length) {
      if (text[j] === '\\') { j += 2; continue; }
      if (text[j] === '`') return j + 1;
      if (text[j] === '$' && text[j + 1] === '{') { templates.push(depth); depth++; return j + 2; }
      j++;
    }
    return j;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      strings.push({ start: i, end: j + 1 });
      i = j + 1;
      prev = 'a';
    } else if (c === '`') {
      i = templateRest(i + 1);
      prev = 'a';
    } else if (c === '}' && templates.length && templates[templates.length - 1] === depth - 1) {
      templates.pop();
      depth--;
      i = templateRest(i + 1);
      prev = 'a';
    } else if (c === '/' && (prev === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(prev) || KEYWORDS_BEFORE_REGEX.has(prev))) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n') {
        if (text[j] === '\\') { j += 2; continue; }
        if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        else if (text[j] === '/' && !inClass) break;
        j++;
      }
      i = j + 1;
      while (/[a-z]/i.test(text[i] ?? '')) i++;
      prev = 'a';
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i;
      while (/[\w$]/.test(text[j] ?? '')) j++;
      prev = text.slice(i, j);
      i = j;
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      if (!/\s/.test(c)) prev = c;
      i++;
    }
  }
  return { code: out.join(''), strings };
}

/** Every module specifier `text` (TypeScript) imports or re-exports, in order. */
function importedSpecifiers(text: string): string[] {
  const { code, strings } = withoutComments(text);
  const found: { at: number; spec: string }[] = [];
  const isString = (at: number) => strings.some((s) => s.start === at);
  const patterns = [
    // import ... from '...', import type ... from '...', export { ... } from '...', export * from '...'
    /(?:^|[;}\n])\s*(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"\n]*)\1/g,
    // import '...' (side effects only)
    /(?:^|[;}\n])\s*import\s*(['"])([^'"\n]*)\1/g,
    // import('...') (dynamic, or an import type), require('...')
    /\b(?:import|require)\s*\(\s*(['"])([^'"\n]*)\1/g,
  ];
  for (const re of patterns) {
    for (const m of code.matchAll(re)) {
      const at = m.index + m[0].length - m[2].length - 2; // the opening quote
      if (isString(at)) found.push({ at, spec: m[2] });
    }
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.spec);
}

/** Why importing `spec` from the file `file` (absolute) is forbidden, or undefined when it is allowed. */
function forbidden(file: string, spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/')) {
    const target = path.relative(ROOT, path.resolve(path.dirname(file), spec)).split(path.sep).join('/');
    const hit = FORBIDDEN_FILES.find((f) => (f.endsWith('/') ? target.startsWith(f) || target + '/' === f : target === f));
    return hit && `${target} (${hit})`;
  }
  const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  return FORBIDDEN_PACKAGES.includes(pkg.replace(/^node:/, '')) ? `package ${pkg}` : undefined;
}

/** Every .ts file under `dir`, recursively. */
function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** The forbidden imports of one file: `path: specifier -> why`. */
function violations(file: string, text: string): string[] {
  const rel = path.relative(ROOT, file);
  return importedSpecifiers(text).flatMap((spec) => {
    const why = forbidden(file, spec);
    return why ? [`${rel}: '${spec}' -> ${why}`] : [];
  });
}

test('no file under src/domain imports the queue, the driver internals or the driver packages', () => {
  const files = tsFiles(DOMAIN);
  assert.ok(files.length > 20, `the domain's files were found (${files.length})`);
  let imports = 0;
  const bad: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    imports += importedSpecifiers(text).length;
    bad.push(...violations(file, text));
  }
  assert.ok(imports > 100, `the domain's imports were read (${imports})`);
  assert.deepEqual(bad, [], 'forbidden imports in src/domain');
});

test('the check reads every form of import and finds each forbidden target', () => {
  const file = path.join(DOMAIN, 'example.ts');
  const text = [
    "import { sql } from 'kysely';",
    "import type { Db } from '../db/database.ts';",
    "import { enqueue } from '../queue/boss.ts';",
    "import type { JobName } from '../queue/jobs.ts';",
    'import {',
    '  corked,',
    "} from '../db/driver-tricks.ts'",
    "export { PREPARED } from '../db/prepared.ts';",
    "export * from '../db/pglite-dialect.ts';",
    "import '../queue/handlers/batch-process.ts';",
    "import pg from 'pg';",
    "import { PgBoss } from 'pg-boss';",
    "import type { PGlite } from '@electric-sql/pglite';",
    "import { parse } from '@electric-sql/pglite/template';",
    "type Job = import('../queue/jobs.ts').JobPayloads;",
    "const m = await import('../queue/workers.ts');",
    "const re = /[\"'] from '..\\/queue\\/fake.ts'/; // import x from '../queue/in-a-comment.ts'",
    "/* import y from 'pg'; */ const s = \"import z from '../queue/in-a-string.ts'\";",
    "const t = `${'a'}/* not a comment */`; import { q } from '../queue/after-template.ts';",
    "import { ok } from './errors.ts';",
  ].join('\n');
  assert.deepEqual(violations(file, text).map((v) => v.replace(/^.*?: /, '')), [
    "'../queue/boss.ts' -> src/queue/boss.ts (src/queue/)",
    "'../queue/jobs.ts' -> src/queue/jobs.ts (src/queue/)",
    "'../db/driver-tricks.ts' -> src/db/driver-tricks.ts (src/db/driver-tricks.ts)",
    "'../db/prepared.ts' -> src/db/prepared.ts (src/db/prepared.ts)",
    "'../db/pglite-dialect.ts' -> src/db/pglite-dialect.ts (src/db/pglite-dialect.ts)",
    "'../queue/handlers/batch-process.ts' -> src/queue/handlers/batch-process.ts (src/queue/)",
    "'pg' -> package pg",
    "'pg-boss' -> package pg-boss",
    "'@electric-sql/pglite' -> package @electric-sql/pglite",
    "'@electric-sql/pglite/template' -> package @electric-sql/pglite",
    "'../queue/jobs.ts' -> src/queue/jobs.ts (src/queue/)",
    "'../queue/workers.ts' -> src/queue/workers.ts (src/queue/)",
    "'../queue/after-template.ts' -> src/queue/after-template.ts (src/queue/)",
  ]);
  // What is allowed stays allowed: the database module, other domain modules, other packages.
  assert.deepEqual(importedSpecifiers(text).filter((s) => !forbidden(file, s)), ['kysely', '../db/database.ts', './errors.ts']);
});
