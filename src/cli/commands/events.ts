/**
 * `cms events ...`: event endpoints and deliveries (docs/events.md), a client of
 *
 *   cms events endpoint add --company ID --url URL [--events a,b] [--description D]
 *                                                  → POST /admin/companies/{id}/event-endpoints (secret shown once)
 *   cms events endpoint list --company ID          → GET /admin/companies/{id}/event-endpoints
 *   cms events endpoint update ENDPOINT_ID [--url] [--events] [--description] [--enable|--disable]
 *                                                  → PATCH /admin/event-endpoints/{id}
 *   cms events endpoint disable ENDPOINT_ID        → PATCH … {enabled: false}
 *   cms events endpoint remove ENDPOINT_ID         → DELETE /admin/event-endpoints/{id}
 *   cms events endpoint rotate-secret ENDPOINT_ID  → POST /admin/event-endpoints/{id}/secret/rotate
 *   cms events endpoint test ENDPOINT_ID           → POST /admin/event-endpoints/{id}/test
 *   cms events attempts ENDPOINT_ID [--limit N]    → GET /admin/event-endpoints/{id}/attempts
 *   cms events resend EVENT_ID                     → POST /admin/events/{id}/resend
 *   cms events replay ENDPOINT_ID --since TIME     → POST /admin/event-endpoints/{id}/replay
 *
 * `add` and `update` use `--url` for the endpoint's URL: give the server with CMS_URL (or the program-level
 * `cms --url BASE events ...`) there. TIME is RFC 3339 (`2026-01-05T10:00:00Z`) or a duration back from now (`2h`, `30m`, `7d`).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import { addCommonOptions, contextFor } from '../context.ts';
import { EVENT_TYPE_NAMES, type EventEndpointUpdate } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** `{ path: { endpoint_id } }` of an endpoint id from the command line. */
const endpointPath = (id: string) => ({ path: { endpoint_id: integerId(id, 'endpoint id') } });

/** `--events a,b`: known types only. */
export function parseEventTypes(value: string): string[] {
  const list = value.split(',').map((x) => x.trim()).filter(Boolean);
  const unknown = list.find((t) => !(EVENT_TYPE_NAMES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new InvalidArgumentError(`unknown event type ${unknown}; known: ${EVENT_TYPE_NAMES.join(', ')}`);
  if (list.length === 0) throw new InvalidArgumentError('name at least one event type');
  return list;
}

/**
 * `--since`: RFC 3339, or a duration back from now (`2h`) that reaches no further back than
 * 1970-01-01 (the server's range, docs/security.md "Durations and times"); returns an ISO time.
 * InvalidArgumentError otherwise.
 */
export function parseSince(value: string, now = Date.now()): string {
  const v = value.trim();
  if (/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(v)) {
    const back = ms(v as ms.StringValue);
    if (!Number.isFinite(back) || back > now) throw new InvalidArgumentError(`the duration ${v} reaches back before 1970-01-01; give a shorter one such as 2h, 30m or 7d, or an RFC 3339 time`);
    return new Date(now - back).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) && !Number.isNaN(Date.parse(v))) return new Date(v).toISOString();
  throw new InvalidArgumentError('expected an RFC 3339 time (2026-01-05T10:00:00Z) or a duration such as 2h, 30m, 7d');
}

const endpointColumns = [
  { key: 'endpoint_id' as const, header: 'id' }, { key: 'url' as const }, { key: 'enabled' as const },
  { key: 'events' as const, format: (v: unknown) => ((v as string[]).length === EVENT_TYPE_NAMES.length ? 'all' : (v as string[]).join(',')) },
  { key: 'description' as const }, { key: 'disabled_reason' as const, header: 'disabled because' },
];

/** Register `events` on `program`. */
export function registerEvents(program: Command, io: CliIo): void {
  const group = program.command('events').description("events to a company's own systems: endpoints, attempts, resend, replay");
  const endpoint = group.command('endpoint').description('signed webhook endpoints that receive a company\'s events');

  addCommonOptions(
    endpoint.command('add')
      .description('register an endpoint; its signing secret is printed only this once')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--url <url>', 'http(s) URL receiving the events')
      .option('--events <types>', `comma-separated types (default all): ${EVENT_TYPE_NAMES.join(', ')}`, parseEventTypes)
      .option('--description <text>', 'free text'),
    { serverUrl: false },
  ).action(async (opts: { company: string; url: string; events?: string[]; description?: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const created = await data(ctx.api.POST('/admin/companies/{company_id}/event-endpoints', {
      params: { path: { company_id: companyId } },
      body: { url: opts.url, ...(opts.events ? { events: opts.events } : {}), ...(opts.description !== undefined ? { description: opts.description } : {}) },
    }));
    if (ctx.json) return printJson(io, created);
    const { secret, ...rest } = created;
    printRecord(io, rest, 'Event endpoint created:');
    printLine(io);
    printLine(io, `  ${secret}`);
    printLine(io);
    printLine(io, 'This is the signing secret (Standard Webhooks). Store it now: `cms events endpoint rotate-secret` replaces it.');
  });

  addCommonOptions(
    endpoint.command('list').description("list a company's endpoints").requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const { endpoints } = await data(ctx.api.GET('/admin/companies/{company_id}/event-endpoints', { params: { path: { company_id: companyId } } }));
    if (ctx.json) return printJson(io, { endpoints });
    printTable(io, endpoints, endpointColumns, '(no event endpoints)');
  });

  addCommonOptions(
    endpoint.command('update')
      .description('change an endpoint')
      .argument('<endpoint-id>', 'endpoint id', parseNonEmpty)
      .option('--url <url>', 'new URL')
      .option('--events <types>', 'comma-separated types', parseEventTypes)
      .option('--description <text>', 'free text ("" clears it)')
      .option('--enable', 'enable it (clears the reason it was disabled for)')
      .option('--disable', 'disable it'),
    { serverUrl: false },
  ).action(async (id: string, opts: { url?: string; events?: string[]; description?: string; enable?: boolean; disable?: boolean }, cmd: Command) => {
    if (opts.enable && opts.disable) throw new InvalidArgumentError('--enable and --disable exclude each other');
    const body: EventEndpointUpdate = {};
    if (opts.url !== undefined) body.url = opts.url;
    if (opts.events !== undefined) body.events = opts.events;
    if (opts.description !== undefined) body.description = opts.description === '' ? null : opts.description;
    if (opts.enable) body.enabled = true;
    if (opts.disable) body.enabled = false;
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const ep = await data(ctx.api.PATCH('/admin/event-endpoints/{endpoint_id}', { params, body }));
    if (ctx.json) return printJson(io, ep);
    printRecord(io, { ...ep }, 'Event endpoint updated:');
  });

  addCommonOptions(
    endpoint.command('disable').description('stop sending events to an endpoint (pending ones wait)').argument('<endpoint-id>', 'endpoint id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const ep = await data(ctx.api.PATCH('/admin/event-endpoints/{endpoint_id}', { params, body: { enabled: false } }));
    if (ctx.json) return printJson(io, ep);
    printLine(io, `Event endpoint ${ep.endpoint_id} disabled.`);
  });

  addCommonOptions(
    endpoint.command('remove').description('delete an endpoint with its pending deliveries and attempt log').argument('<endpoint-id>', 'endpoint id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    await data(ctx.api.DELETE('/admin/event-endpoints/{endpoint_id}', { params }));
    if (ctx.json) return printJson(io, { endpoint_id: Number(id), removed: true });
    printLine(io, `Event endpoint ${id} removed.`);
  });

  addCommonOptions(
    endpoint.command('rotate-secret').description('replace the signing secret; the new one is printed once').argument('<endpoint-id>', 'endpoint id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const r = await data(ctx.api.POST('/admin/event-endpoints/{endpoint_id}/secret/rotate', { params }));
    if (ctx.json) return printJson(io, r);
    printLine(io, `New signing secret of endpoint ${r.endpoint_id}:`);
    printLine(io);
    printLine(io, `  ${r.secret}`);
  });

  addCommonOptions(
    endpoint.command('test').description('send one signed test event (endpoint.test) now and show the outcome').argument('<endpoint-id>', 'endpoint id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const r = await data(ctx.api.POST('/admin/event-endpoints/{endpoint_id}/test', { params }));
    if (ctx.json) return printJson(io, r);
    printRecord(io, r, r.ok ? 'Test event delivered:' : 'Test event NOT delivered:');
  });

  addCommonOptions(
    group.command('attempts')
      .description("an endpoint's delivery attempts, newest first")
      .argument('<endpoint-id>', 'endpoint id', parseNonEmpty)
      .option('--limit <n>', 'at most this many (default 100, at most 1000)', parsePositiveInt),
  ).action(async (id: string, opts: { limit?: number }, cmd: Command) => {
    const { path } = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const { attempts } = await data(ctx.api.GET('/admin/event-endpoints/{endpoint_id}/attempts', { params: { path, query: { limit: opts.limit } } }));
    if (ctx.json) return printJson(io, { attempts });
    printTable(io, attempts, [
      { key: 'at' }, { key: 'event_id', header: 'event' }, { key: 'type' }, { key: 'attempt', header: '#' },
      { key: 'status_code', header: 'status' }, { key: 'duration_ms', header: 'ms' }, { key: 'error' },
      { key: 'response_excerpt', header: 'response', format: (v) => (typeof v === 'string' ? v.slice(0, 60) : '') },
    ], '(no attempts)');
  });

  addCommonOptions(
    group.command('resend').description('send an event again (same webhook-id) to each enabled endpoint subscribed to it').argument('<event-id>', 'event id (evt_…)', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const r = await data(ctx.api.POST('/admin/events/{event_id}/resend', { params: { path: { event_id: id } } }));
    if (ctx.json) return printJson(io, { event_id: id, ...r });
    printLine(io, `Event ${id} queued again for ${r.deliveries} endpoint(s).`);
  });

  addCommonOptions(
    group.command('replay')
      .description('send every subscribed event since TIME to an endpoint again (same ids)')
      .argument('<endpoint-id>', 'endpoint id', parseNonEmpty)
      .requiredOption('--since <time>', 'RFC 3339 time, or a duration back from now (2h, 7d)', (v: string) => parseSince(v)),
  ).action(async (id: string, opts: { since: string }, cmd: Command) => {
    const params = endpointPath(id);
    const ctx = await contextFor(cmd, io);
    const r = await data(ctx.api.POST('/admin/event-endpoints/{endpoint_id}/replay', { params, body: { since: opts.since } }));
    if (ctx.json) return printJson(io, { endpoint_id: Number(id), since: opts.since, ...r });
    printLine(io, `${r.events} event(s) since ${opts.since} queued again for endpoint ${id}.`);
  });
}
