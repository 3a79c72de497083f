/**
 * Replays test/fixtures/validation/cases.json (recorded from FastAPI 0.142.2 / Pydantic
 * 2.13.5 by tools/oracle/generate.py) through parseBody, decideStatus, validateRequest and
 * renderValidationError, and compares status, the recorded headers and the body byte for
 * byte. Cases with a `deviation` expect our documented answer instead of the oracle's.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  ConnectorSend, CreateSegment, ManageSegmentContacts, TriggerAutomation, classifyApiKey,
  decideStatus, parseBody, validateRequest, type Model, type PathParam,
} from '../../src/http/validation/index.ts';

interface Case {
  id: string;
  method: string;
  path: string;
  headers: [string, string][];
  body?: string;
  body_b64?: string;
  response: { status: number; headers: Record<string, string>; body: string };
  deviation?: string;
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/validation/cases.json', import.meta.url), 'utf8')) as {
  meta: { valid_key: string };
  cases: Case[];
};

/** The four routes of the oracle app, with their path parameter. */
function route(path: string): { model: Model<unknown>; params: PathParam[] } {
  if (path === '/api/segments/create') return { model: CreateSegment, params: [] };
  if (path === '/api/automations/send') return { model: TriggerAutomation, params: [] };
  if (path === '/api/connector/send') return { model: ConnectorSend, params: [] };
  const m = /^\/api\/segments\/([^/]+)\/contacts$/.exec(path);
  if (m) return { model: ManageSegmentContacts, params: [{ name: 'segment_id', raw: decodeURIComponent(m[1]) }] };
  throw new Error(`no route for ${path}`);
}

/** First value of a header, the way Node's HTTP parser keeps it (trimmed, first wins). */
function header(c: Case, name: string): string | undefined {
  const h = c.headers.find(([k]) => k.toLowerCase() === name);
  return h?.[1].trim();
}

function answer(c: Case): { status: number; headers: Record<string, string>; body: string } {
  const raw = c.body_b64 !== undefined ? Buffer.from(c.body_b64, 'base64') : Buffer.from(c.body ?? '', 'utf8');
  const { model, params } = route(c.path);
  const parsed = parseBody(raw, header(c, 'content-type'));
  const auth = classifyApiKey(header(c, 'service-api-key'), (k) => k === fixture.meta.valid_key);
  const decided = decideStatus(parsed, auth, () => validateRequest(model, parsed, params));
  return decided ?? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
}

test('oracle fixture is large and varied', () => {
  assert.ok(fixture.cases.length >= 800, `only ${fixture.cases.length} cases`);
});

for (const c of fixture.cases) {
  test(c.id, () => {
    const got = answer(c);
    const want = c.response;
    assert.equal(got.status, want.status, c.deviation ?? 'status');
    assert.equal(got.body, want.body);
    assert.equal(got.headers['www-authenticate'], want.headers['www-authenticate']);
    assert.equal(got.headers['content-type'], want.headers['content-type']);
  });
}
