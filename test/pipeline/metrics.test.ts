/**
 * Metrics: GET /metrics in Prometheus text format with requests counted by route
 * pattern and status code (label `code`), Node.js's process and runtime metrics under their standard
 * names (process_*, nodejs_*, no prefix), and the pipeline's counters (messages by final status and provider, provider
 * latency, queue depth) after real batches. Each test file runs in its own process, so the registry
 * starts empty here and counts are exact.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerMetrics } from '../../src/http/metrics-route.ts';
import type { TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { completed, phone, startPipelineServer } from './helpers.ts';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('registerMetrics: GET /metrics, requests counted by route pattern and status code', async () => {
  const app = Fastify();
  registerMetrics(app);
  app.get('/items/:id', async () => ({ ok: true }));
  await app.ready();
  await app.inject({ url: '/items/1' });
  await app.inject({ url: '/items/2' });
  await app.inject({ url: '/nowhere/3' });
  const res = await app.inject({ url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  assert.equal(sample(res.body, 'cms_http_requests_total{method="GET",route="/items/:id",code="200"}'), 2);
  assert.equal(sample(res.body, 'cms_http_requests_total{method="GET",route="unmatched",code="404"}'), 1);
  assert.doesNotMatch(res.body, /cms_http_requests_total\{[^}]*status=/, 'the status code is labelled `code`');
  assert.ok(!res.body.includes('/items/1'), 'raw paths never become labels');
  for (const name of ['cms_rate_limit_refusals_total', 'cms_batches_accepted_total', 'cms_messages_final_total', 'cms_queue_jobs', 'cms_provider_request_duration_seconds']) {
    assert.match(res.body, new RegExp(`^# HELP ${name} `, 'm'));
  }
  await app.close();
});

test('Node.js process and runtime metrics keep their standard names, without a prefix', async () => {
  const app = Fastify();
  registerMetrics(app);
  await app.ready();
  const { body } = await app.inject({ url: '/metrics' });
  for (const [name, type] of [
    ['process_cpu_seconds_total', 'counter'], ['process_resident_memory_bytes', 'gauge'], ['process_start_time_seconds', 'gauge'],
    ['process_open_fds', 'gauge'], ['nodejs_heap_size_used_bytes', 'gauge'], ['nodejs_eventloop_lag_seconds', 'gauge'],
    ['nodejs_gc_duration_seconds', 'histogram'], ['nodejs_version_info', 'gauge'],
  ]) {
    assert.match(body, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
  }
  assert.ok(sample(body, 'process_resident_memory_bytes')! > 0);
  assert.doesNotMatch(body, /^(# TYPE )?cms_(process|nodejs)_/m, 'no prefixed copies');
  // Gauges named like counters stay out (promtool: `_total` is for counters); their sum is the labelled gauge's.
  assert.doesNotMatch(body, /^# TYPE nodejs_active_handles_total /m);
  assert.match(body, /^# TYPE nodejs_active_handles gauge$/m);
  await app.close();
});

let s: TestServer;
let receiver: WebhookReceiver;
before(async () => {
  s = await startPipelineServer('metrics');
  receiver = await startReceiver({ answer: (seen) => (seen.n === 1 ? 503 : 200) });
});
after(async () => {
  await s.close();
  await receiver.close();
});

test('after real batches: GET /metrics counts requests, batches, messages by final status and provider, provider latency, queue depth', async () => {
  const run = Math.floor(Math.random() * 1000);
  const outbox = await s.company();
  const a1 = await s.admin('POST', `/admin/companies/${outbox.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const r1 = await s.api('/api/automations/send', { key: outbox.key, body: { automation_id: a1.automation_id, contacts: [{ phone: phone(run, 1) }, { phone: phone(run, 2) }, { phone: 'nope' }] } });
  assert.equal(r1.status, 200, r1.text);

  const hook = await s.company();
  await s.admin('PUT', `/admin/companies/${hook.companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const a2 = await s.admin('POST', `/admin/companies/${hook.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const r2 = await s.api('/api/automations/send', { key: hook.key, body: { automation_id: a2.automation_id, contacts: [{ phone: phone(run, 3) }] } });
  assert.equal(r2.status, 200, r2.text);
  await completed(s, r1.json.batch_id);
  await completed(s, r2.json.batch_id);

  const served = await fetch(`${s.url}/metrics`);
  assert.equal(served.status, 200);
  const text = await served.text();
  assert.equal(sample(text, 'cms_messages_final_total{status="sent",provider="outbox"}'), 2);
  assert.equal(sample(text, 'cms_messages_final_total{status="skipped",provider="none"}'), 1);
  assert.equal(sample(text, 'cms_messages_final_total{status="sent",provider="webhook"}'), 1);
  assert.equal(sample(text, 'cms_provider_request_duration_seconds_count{provider="webhook",outcome="failed"}'), 1);
  assert.equal(sample(text, 'cms_provider_request_duration_seconds_count{provider="webhook",outcome="sent"}'), 1);
  for (const queue of ['batch-process', 'messages-deliver', 'messages-release']) {
    for (const state of ['queued', 'deferred', 'active']) {
      assert.ok(sample(text, `cms_queue_jobs{queue="${queue}",state="${state}"}`)! >= 0, `${queue} ${state}`);
    }
  }
  assert.equal(sample(text, 'cms_messages_held'), 0);
  assert.equal(sample(text, 'cms_http_requests_total{method="POST",route="/api/automations/send",code="200"}'), 2);
  assert.equal(sample(text, 'cms_batches_accepted_total{kind="automation"}'), 2);
});
