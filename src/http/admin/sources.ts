/**
 * Operator API: what automations and campaigns (the two sources of messages) share
 * (docs/operator-api.md). automations.ts and campaigns.ts hold each resource's routes; this module holds
 * the template they carry and the routes every source has, registered for one kind by
 * {@link registerSourceToolRoutes}:
 *
 * | route (`{kind}`: automation or campaign) | answers |
 * |---|---|
 * | GET /admin/companies/{company_id}/{kind}s `?archived=true` | 200 `Source[]` (newest first): those not archived, or with `archived=true` the archived ones; 401; 404 company; 422 |
 * | GET /admin/{kind}s/{id} | 200 `Source` (archived or not, `archived_at` says); 401; 404; 422 |
 * | DELETE /admin/{kind}s/{id} | 200 `Source` with `archived_at`: archived (hidden from lists, cannot be sent; again: the same answer); 401; 404; 422 |
 * | POST /admin/{kind}s/{id}/restore | 200 `Source` with `archived_at` null: listed and sendable again (one not archived: unchanged); 401; 404; 422 |
 * | POST /admin/{kind}s/{id}/preview `{phone? \| first_name?, last_name?, variables?}` | 200 `Preview` `{contact_found, rendered}` (the pipeline's own render, see src/domain/source-tools.ts); 401; 404; 422 (`{"detail":[{type:"template_error", loc:["body"], msg}]}`, or an invalid phone number at `loc: ["body", "phone"]`) |
 * | POST /admin/{kind}s/{id}/test-send `{phone}` | 202 `{batch_id}`: a batch of one through the accept step; 401; 404 (an archived one too); 422 |
 *
 * Templates are checked when saved (src/domain/templates.ts): a problem is `422 {"detail":[{type:"template_error",
 * loc:["body","template",...], msg}]}` (the admin error shape; the message has the line and column),
 * nothing stored. A stored template's answer (201/200) carries `warnings`: one per variable the
 * template reads that no contact of the company has (first_name, last_name and phone always exist);
 * such a variable renders empty.
 *
 * For a company whose channel is WhatsApp, a template (on create, or when it changes) must also map to
 * an APPROVED template of the company's catalogue with matching parameters (docs/whatsapp.md "Sources
 * must map to an approved template"; src/domain/whatsapp-templates.ts): otherwise 422 `template_error`
 * items naming the problem. `expire_after` (a duration such as `24h`, or null) says how long the
 * source's messages stay worth sending: default null for automations, `24h` for campaigns.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { checkTemplate, normaliseTemplate, templateSchema, type Template } from '../../domain/templates.ts';
import { OPERATOR } from '../../domain/actor.ts';
import { sendCompany } from '../../domain/campaign-sends.ts';
import { DomainError } from '../../domain/errors.ts';
import { EXPIRE_AFTER_PATTERN, expireAfterProblem } from '../../domain/expiry.ts';
import { previewSource, testSendSource } from '../../domain/source-tools.ts';
import { findSource, listAutomations, listCampaigns, setSourceArchived, type SourceKind, type SourceRow } from '../../domain/automations.ts';
import { whatsappMappingProblems } from '../../domain/whatsapp-templates.ts';
import type { Db } from '../../db/database.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import {
  addComponents, adminErrors, component, exampleOf, freeObject, idParams, invalid, invalidInput, iso, notFound, ok, ref, renderedContent, TIME_EXAMPLE,
} from './components.ts';

/** A template as requests give it (header and buttons optional) and answers show it (normalised). */
type TemplateInput = Omit<Template, 'header' | 'buttons'> & Partial<Pick<Template, 'header' | 'buttons'>>;

/** The message template of an automation or campaign (Liquid in texts; checked when saved). */
export const TemplateComponent = component('Template', Type.Unsafe<TemplateInput>({ ...templateSchema }), {
  header: { type: 'text', text: 'Hi {{ first_name }}' },
  body: 'Your order {{ order_id }} has shipped. Reply STOP to opt out.',
  buttons: [{ type: 'url', text: 'Track it', url: 'https://acme-shoes.example/track/{{ order_id }}' }],
});

/** The `warnings` of a stored template's answer. */
export const templateWarnings = Type.Array(Type.String(), {
  description: 'one per variable the template reads that no contact of the company has (it renders empty); [] when none',
  examples: [['no contact of this company has the variable order_id: it renders empty']],
});

/** `expire_after` as answers show it. */
export const expireAfterShown = Type.Union([Type.String(), Type.Null()], { description: 'how long its messages stay worth sending (a duration such as `24h`); null: forever. A message not handed to the provider by then ends skipped, reason `expired`' });

/** `expire_after` as requests give it (checked: a duration with its unit from 1s to 30d, or null). */
export const expireAfterInput = (dflt: string) => Type.Optional(Type.Union([
  Type.String({ pattern: EXPIRE_AFTER_PATTERN, maxLength: 16, description: 'a duration from 1s to 30d: a number and a unit (ms, s, m, h, d), e.g. `30m`, `24h`, `2d`' }),
  Type.Null(),
], { description: `how long its messages stay worth sending; null: forever (default ${dflt})` }));

/** The stored expire_after, or 422 at `body.expire_after` (out of 1s..30d, or not a duration). */
export function expireAfter(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  const problem = expireAfterProblem(value);
  if (problem) throw invalidInput(['body', 'expire_after'], problem, 'value_error', value);
  return value;
}

/**
 * 422 (`template_error` items at `body.template...`) when the company's channel is WhatsApp and `t`
 * does not map to an approved template of its catalogue (src/domain/whatsapp-templates.ts).
 */
export async function checkWhatsappMapping(db: Db, companyId: number, t: Template): Promise<void> {
  const problems = await whatsappMappingProblems(db, companyId, t);
  if (problems.length) throw new AdminValidationError(problems.map((p) => ({ type: 'template_error', loc: ['body', 'template', ...p.loc], msg: p.msg })));
}

/** The 422 example of a template that does not parse. */
export const templateProblem: Parameters<typeof invalid>[0] = {
  type: 'template_error', loc: ['body', 'template', 'body'], msg: 'undefined filter: shout (line 1, column 7)',
};

/** The normalised template, or 422 (AdminValidationError) with every problem found. */
export function template(raw: unknown): { template: Template; reads: string[] } {
  const t = normaliseTemplate(raw as Template);
  const { problems, reads } = checkTemplate(t);
  if (problems.length) throw new AdminValidationError(problems.map((p) => ({ type: 'template_error', loc: ['body', 'template', ...p.loc], msg: p.msg })));
  return { template: t, reads };
}

/** Warnings for the variables a template reads that no contact of the company has (src/domain/source-tools.ts). */
export { variableWarnings } from '../../domain/source-tools.ts';

/** A source's name. */
export const sourceName = Type.String({ minLength: 1, maxLength: 255 });

const time = Type.String({ format: 'date-time' });
/** A batch id of the examples. */
export const BATCH_ID_EXAMPLE = '0b6f3c1e-6f0a-4a55-9d1e-2f8f3a7c9b10';

/** An automation or campaign as the lists and reads show it (`type` and `active`: automations only). */
export const Source = component('Source', Type.Object({
  id: Type.Integer({ description: 'the automation_id or campaign_id' }),
  company_id: Type.Integer(),
  name: Type.String(),
  type: Type.Optional(Type.String({ description: 'automations only' })),
  active: Type.Optional(Type.Boolean({ description: 'automations only' })),
  template: ref(TemplateComponent),
  expire_after: Type.Union([Type.String(), Type.Null()], { description: 'how long its messages stay worth sending (a duration such as `24h`); null: forever' }),
  ignore_frequency_cap: Type.Optional(Type.Boolean({ description: "campaigns only: true when its messages are not held to the company's frequency cap" })),
  created_at: time,
  archived_at: Type.Union([time, Type.Null()], { description: 'when it was archived (left out of the lists, cannot be sent or triggered); null: not archived' }),
}), { id: 8, company_id: 12, name: 'Spring sale', template: { header: { type: 'none' }, body: 'Hi {{ first_name }}, 20 % off all shoes this week.', buttons: [] }, expire_after: '24h', ignore_frequency_cap: false, created_at: TIME_EXAMPLE, archived_at: null });

/** The content a message would be delivered with (as the provider receives it, without ids). */
export const RenderedMessage = component('RenderedMessage', Type.Object({
  ...renderedContent,
}, { additionalProperties: true }), { to: '+4915112345678', header: { type: 'none' }, body: 'Hi Anna, 20 % off all shoes this week.', buttons: [] });

/** The answer of a preview. */
export const Preview = component('Preview', Type.Object({
  contact_found: Type.Boolean({ description: 'the phone is a contact of the company (its names and variables were used); false: sample data' }),
  rendered: ref(RenderedMessage),
}), { contact_found: true, rendered: exampleOf(RenderedMessage) });

/** A source row as the answers show it (times as RFC 3339). */
export const sourceJson = (s: SourceRow): Static<typeof Source> => ({
  id: s.id, company_id: s.company_id, name: s.name, ...(s.kind === 'automation' ? { type: s.type, active: s.active } : {}),
  template: s.template, expire_after: s.expire_after, ...(s.kind === 'campaign' ? { ignore_frequency_cap: s.ignore_frequency_cap ?? false } : {}), created_at: iso(s.created_at),
  archived_at: s.archived_at ? iso(s.archived_at) : null,
});

/** A 422 `invalid phone number` of a domain function, at the body's `phone`. */
async function phoneChecked<T>(phone: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError && err.status === 422) throw invalidInput(['body', 'phone'], err.detail, 'value_error', phone);
    throw err;
  }
}

const badPhone = { type: 'value_error', loc: ['body', 'phone'], msg: 'invalid phone number', input: 'not a phone' };

/**
 * Registers the routes every source has (the module comment's table) for one kind: its list, one
 * source, its preview and its test send. Called by automations.ts and campaigns.ts.
 */
export function registerSourceToolRoutes(app: FastifyInstance, deps: AppDeps, kind: SourceKind): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [Source, RenderedMessage, Preview]);
  const plural = `${kind}s`;
  const tags = [`operator: ${plural}`];
  const idName = `${kind}_id`;
  const Kind = kind === 'automation' ? 'Automation' : 'Campaign';
  const params = idParams(idName, `the ${kind}`, kind === 'automation' ? 31 : 8);
  const sourceNotFound = notFound(`${Kind} not found`);
  const badId = invalid({ type: 'type', loc: ['path', idName], msg: 'must be integer' });
  const example = kind === 'automation'
    ? { ...exampleOf(Source), id: 31, name: 'Order shipped', type: 'api', active: true }
    : exampleOf(Source);

  r.get(`/admin/companies/:company_id/${plural}`, {
    schema: {
      tags, operationId: `list_${plural}`, summary: `The company's ${plural}, newest first (the archived ones with archived=true)`, params: idParams('company_id', 'the company', 12),
      querystring: Type.Object({
        archived: Type.Optional(Type.Boolean({ default: false, description: `true: only the archived ${plural}; false (default): only those not archived` })),
      }),
      response: {
        200: ok(`The ${plural}`, Type.Array(ref(Source)), [example]),
        ...adminErrors, 404: notFound('Company not found'), 422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await sendCompany(db, request.params.company_id);
    const opts = { archived: request.query.archived === true };
    const rows = kind === 'automation' ? await listAutomations(db, company.company_id, opts) : await listCampaigns(db, company.company_id, opts);
    return rows.map(sourceJson);
  });

  r.get(`/admin/${plural}/:${idName}`, {
    schema: {
      tags, operationId: `get_${kind}`, summary: `One ${kind} with its template`, params,
      response: { 200: ok(`The ${kind}`, ref(Source), example), ...adminErrors, 404: sourceNotFound, 422: badId },
    },
  }, async (request) => sourceJson(await findSource(db, kind, request.params[idName], null)));

  r.post(`/admin/${plural}/:${idName}/preview`, {
    schema: {
      tags, operationId: `preview_${kind}`, params,
      summary: `Preview the ${kind}'s message for a contact (by phone) or sample data, rendered by the pipeline's code`,
      body: Type.Object({
        phone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a contact of the company (its names and variables); no contact: known by phone only' })),
        first_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: 'sample data when no contact is used' })),
        last_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
        variables: Type.Optional(Type.Union([freeObject(), Type.Null()], { description: 'sample variables' })),
      }, { additionalProperties: false, examples: [{ first_name: 'Anna', variables: { order_id: 'A-1042' } }] }),
      response: {
        200: ok('The message as it would be delivered', ref(Preview), exampleOf(Preview)),
        ...adminErrors, 404: sourceNotFound,
        422: invalid(badPhone, 'The template does not render (`template_error`, nothing is sent), an invalid phone number, or an invalid body'),
      },
    },
  }, async (request, reply) => {
    const source = await findSource(db, kind, request.params[idName], null);
    const body = request.body ?? {};
    const result = await phoneChecked(body.phone, () => previewSource(db, source, body));
    if (!result.ok) return reply.code(422).send({ detail: [{ type: 'template_error', loc: ['body'], msg: result.error }] });
    return { contact_found: result.contact_found, rendered: result.rendered };
  });

  r.post(`/admin/${plural}/:${idName}/test-send`, {
    schema: {
      tags, operationId: `test_send_${kind}`, params,
      summary: `Send the ${kind}'s message to one number now, through the send pipeline (appears in Sends)`,
      body: Type.Object({ phone: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false, examples: [{ phone: '+4915112345678' }] }),
      response: {
        202: ok('Accepted: the batch of one is committed and will be delivered', Type.Object({ batch_id: Type.String({ format: 'uuid' }) }), { batch_id: BATCH_ID_EXAMPLE }),
        ...adminErrors, 404: sourceNotFound, 422: invalid(badPhone),
      },
    },
  }, async (request, reply) => {
    const batchId = await phoneChecked(request.body.phone, () => testSendSource(deps, OPERATOR, kind, request.params[idName], request.body.phone));
    return reply.code(202).send({ batch_id: batchId });
  });

  const archivedExample = { ...example, archived_at: TIME_EXAMPLE };

  r.delete(`/admin/${plural}/:${idName}`, {
    schema: {
      tags, operationId: `archive_${kind}`, params,
      summary: `Archive the ${kind}: left out of the lists, it cannot be ${kind === 'automation' ? 'triggered (4.3 answers it as inactive)' : 'sent (4.4 answers it as unknown)'}; restore it with POST .../restore`,
      response: {
        200: ok(`The archived ${kind} (archiving it again answers the same, its first archived_at kept)`, ref(Source), archivedExample),
        ...adminErrors, 404: sourceNotFound, 422: badId,
      },
    },
  }, async (request) => {
    const source = await setSourceArchived(deps, OPERATOR, kind, request.params[idName], true);
    return sourceJson(source);
  });

  r.post(`/admin/${plural}/:${idName}/restore`, {
    schema: {
      tags, operationId: `restore_${kind}`, params,
      summary: `Restore an archived ${kind}: listed and ${kind === 'automation' ? 'triggerable (when active)' : 'sendable'} again`,
      response: {
        200: ok(`The ${kind}, archived_at null (one that was not archived is answered unchanged)`, ref(Source), example),
        ...adminErrors, 404: sourceNotFound, 422: badId,
      },
    },
  }, async (request) => {
    const source = await setSourceArchived(deps, OPERATOR, kind, request.params[idName], false);
    return sourceJson(source);
  });

}
