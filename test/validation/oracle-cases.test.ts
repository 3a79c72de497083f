/**
 * Replays test/fixtures/validation/cases.json (recorded from FastAPI 0.142.2 / Pydantic
 * 2.13.5 by tools/oracle/generate.py) through the public routes' steps 2-5 (`admit` of
 * src/http/public-operation.ts: parsing, authentication, validation) with an authenticator that
 * knows the fixture's key, and compares status, the recorded headers and the body byte for byte
 * (test/api/oracle-over-http.test.ts replays them over HTTP). Cases with a `deviation` expect our
 * documented answer instead of the oracle's.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { AuthResult } from '../../src/http/auth.ts';
import { admit, isAnswer } from '../../src/http/public-operation.ts';
import { ConnectorSend, CreateSegment, ManageSegmentContacts, TriggerAutomation, type Model } from '../../src/http/validation/index.ts';

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
function route(path: string): { model: Model<unknown>; pathParams: string[]; params: Record<string, string> } {
  if (path === '/api/segments/create') return { model: CreateSegment, pathParams: [], params: {} };
  if (path === '/api/automations/send') return { model: TriggerAutomation, pathParams: [], params: {} };
  if (path === '/api/connector/send') return { model: ConnectorSend, pathParams: [], params: {} };
  const m = /^\/api\/segments\/([^/]+)\/contacts$/.exec(path);
  if (m) return { model: ManageSegmentContacts, pathParams: ['segment_id'], params: { segment_id: decodeURIComponent(m[1]) } };
  throw new Error(`no route for ${path}`);
}

/** First value of a header, the way Node's HTTP parser keeps it (trimmed, first wins). */
function header(c: Case, name: string): string | undefined {
  const h = c.headers.find(([k]) => k.toLowerCase() === name);
  return h?.[1].trim();
}

const company = { keyId: 1, companyId: 1, defaultCountry: 'DE', subscriptionActive: true, connectorConnected: true };

/** The authenticator's answers (src/http/auth.ts) for the fixture's one valid key. */
async function authenticate(key: string | undefined): Promise<AuthResult> {
  if (!key) return { ok: false, detail: 'Not authenticated' };
  return key === fixture.meta.valid_key ? { ok: true, auth: company } : { ok: false, detail: 'Invalid API key' };
}

async function answer(c: Case): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const rawBody = c.body_b64 !== undefined ? Buffer.from(c.body_b64, 'base64') : Buffer.from(c.body ?? '', 'utf8');
  const { model, pathParams, params } = route(c.path);
  const a = await admit({ model, pathParams }, { rawBody, contentType: header(c, 'content-type'), apiKey: header(c, 'service-api-key'), params }, authenticate);
  if (!isAnswer(a)) return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
  // Every answer is sent as application/json (src/http/errors.ts sendJsonText); header names as lowercase.
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(a.headers ?? {})) headers[k.toLowerCase()] = v;
  return { status: a.status, headers, body: a.text };
}

test('oracle fixture is large and varied', () => {
  assert.ok(fixture.cases.length >= 800, `only ${fixture.cases.length} cases`);
});

for (const c of fixture.cases) {
  test(c.id, async () => {
    const got = await answer(c);
    const want = c.response;
    assert.equal(got.status, want.status, c.deviation ?? 'status');
    assert.equal(got.body, want.body);
    assert.equal(got.headers['www-authenticate'], want.headers['www-authenticate']);
    assert.equal(got.headers['content-type'], want.headers['content-type']);
  });
}
