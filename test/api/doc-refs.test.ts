/**
 * Comments and docs point only inside the repository: no citation of a specification file that is not
 * in it (`decisions.md §3` meaning a file elsewhere, a bare `api.md` in code, a path into a shared spec
 * directory) and no issue numbers, in src/, test/, bench/, tools/, docs/ and README.md. And every
 * `docs/NAME.md#anchor` (or, inside docs/, `](NAME.md#anchor)`) names a heading that exists.
 */

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
const SELF = path.relative(root, import.meta.filename);
const TEXT = /\.(ts|mts|js|mjs|sql|md|py|json|css|sh|txt|html)$/;

/** Every text file under the checked directories, as paths relative to the repository root. */
function files(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) { if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(rel); }
      else if (TEXT.test(e.name) && rel !== SELF) out.push(rel);
    }
  };
  for (const d of ['src', 'test', 'bench', 'tools', 'docs']) walk(d);
  out.push('README.md');
  return out.sort();
}

// Built from pieces so that this file does not match itself.
const SPEC_ONLY = ['decisions', 'receipts-and-events', 'whatsapp-production', 'audience'];
const REPO_DOCS = new Set(fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')));
const ISSUE = new RegExp('\\b' + 'issues?' + '\\s+#?\\d+', 'i');
const SHARED = new RegExp('shared/' + 'spec/[\\w-]|/work/' + 'shared/');

/** What is wrong with one line of `file`, or null: a reference outside the repository or an issue number. */
function badReference(file: string, line: string): string | null {
  if (ISSUE.test(line)) return 'issue number';
  if (SHARED.test(line)) return 'path outside the repository';
  const inDocs = file.startsWith('docs' + path.sep);
  for (const m of line.matchAll(/(?:^|[^\w.\/-])((?:[\w.-]+\/)*)([\w-]+)\.md\b/g)) {
    const [, dir, base] = m;
    const name = `${base}.md`;
    if (dir === 'docs/') { if (!REPO_DOCS.has(name)) return `no docs/${name} in the repository`; continue; }
    if (dir !== '') continue;                                  // another file of the repository, by its path
    if (inDocs && REPO_DOCS.has(name)) continue;               // relative to docs/
    if (REPO_DOCS.has(name)) return `bare ${name} (write docs/${name})`;
    if (SPEC_ONLY.includes(base)) return `${name} is not in the repository`;
  }
  return null;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

const anchorsOf = new Map<string, Set<string>>();
function anchors(doc: string): Set<string> {
  let set = anchorsOf.get(doc);
  if (!set) {
    set = new Set();
    let inFence = false;
    for (const l of fs.readFileSync(path.join(root, 'docs', doc), 'utf8').split('\n')) {
      if (l.startsWith('```')) inFence = !inFence;
      const h = !inFence && /^#{1,6}\s+(.*)$/.exec(l);
      if (h) set.add(slug(h[1]));
    }
    anchorsOf.set(doc, set);
  }
  return set;
}

describe('references in comments and docs', () => {
  test('no specification files outside the repository and no issue numbers', () => {
    const found: string[] = [];
    for (const f of files()) {
      fs.readFileSync(path.join(root, f), 'utf8').split('\n').forEach((line, i) => {
        const why = badReference(f, line);
        if (why) found.push(`${f}:${i + 1}: ${why}: ${line.trim().slice(0, 120)}`);
      });
    }
    assert.deepEqual(found, [], `${found.length} references left:\n${found.join('\n')}`);
  });

  test('every docs anchor cited names a heading that exists', () => {
    const broken: string[] = [];
    for (const f of files()) {
      const inDocs = f.startsWith('docs' + path.sep);
      const re = inDocs ? /(?:docs\/|\]\()([\w-]+\.md)#([\w-]+)/g : /docs\/([\w-]+\.md)#([\w-]+)/g;
      fs.readFileSync(path.join(root, f), 'utf8').split('\n').forEach((line, i) => {
        for (const m of line.matchAll(re)) {
          if (!REPO_DOCS.has(m[1])) broken.push(`${f}:${i + 1}: no docs/${m[1]}`);
          else if (!anchors(m[1]).has(m[2])) broken.push(`${f}:${i + 1}: docs/${m[1]} has no heading #${m[2]}`);
        }
        // the second and later anchors of one citation: "docs/decisions.md#3-..., #6-..."
        for (const m of line.matchAll(/docs\/([\w-]+\.md)#[\w-]+((?:, #[\w-]+)+)/g)) {
          for (const extra of m[2].split(', #').filter(Boolean)) {
            if (REPO_DOCS.has(m[1]) && !anchors(m[1]).has(extra)) broken.push(`${f}:${i + 1}: docs/${m[1]} has no heading #${extra}`);
          }
        }
      });
    }
    assert.deepEqual(broken, []);
  });
});
