/**
 * Settings › Messaging: GET shows the company's frequency cap of campaign messages (docs/audience.md
 * "Frequency caps"); POST `cap=none|on, messages, amount, unit` changes it through the operator
 * API's rules (src/domain/frequency-caps.ts) through the operator API's command `changeCompany`
 * (src/domain/companies.ts), audit-logged as `company.update` by `console:<email>`, then 303 back with a notice; errors beside their fields (422,
 * input kept, nothing changed). Owners only (permissions.ts: a settings page not listed there).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { changeCompany, getCompany } from '../../domain/companies.ts';
import { frequencyCapProblem, type FrequencyCap } from '../../domain/frequency-caps.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, sendPage, sessionOf } from '../context.ts';
import { capFormOf, MESSAGING_CRUMBS, MESSAGING_PATH, messagingView, type CapErrors, type CapForm } from '../views/messaging.ts';

const NOTICES: Record<string, string> = { saved: 'Frequency cap saved.' };

/** The cap a form asks for (null: none), or its errors by field. */
export function capOfForm(f: CapForm): { cap: FrequencyCap | null } | { errors: CapErrors } {
  if (f.cap !== 'on') return { cap: null };
  const errors: CapErrors = {};
  const messages = /^[0-9]{1,4}$/.test(f.messages.trim()) ? Number(f.messages.trim()) : NaN;
  if (!(messages >= 1 && messages <= 1000)) errors.messages = 'Enter a whole number from 1 to 1000.';
  const amount = f.amount.trim();
  const unit = ['m', 'h', 'd'].includes(f.unit) ? f.unit : '';
  if (!/^[1-9][0-9]{0,5}$/.test(amount) || !unit) errors.amount = 'Enter a whole number of minutes, hours or days.';
  if (Object.keys(errors).length) return { errors };
  const cap = { messages, per: `${amount}${unit}` };
  const problem = frequencyCapProblem(cap);
  if (problem) return { errors: problem.field === 'messages' ? { messages: 'Enter a whole number from 1 to 1000.' } : { amount: 'The window can be at most 366 days.' } };
  return { cap };
}

/** Registers GET and POST /settings/messaging (signed-in scope). */
export function registerMessagingPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, extra: { form?: CapForm; errors?: CapErrors; flash?: string } = {}) {
    const session = sessionOf(request);
    const company = await getCompany(db, session.company_id);
    return sendPage(request, reply, status, {
      title: 'Messaging', section: 'messaging', crumbs: MESSAGING_CRUMBS, flash: extra.flash,
      body: (csrf) => messagingView({
        csrf, cap: company.frequency_cap, form: extra.form ?? capFormOf(company.frequency_cap), errors: extra.errors ?? {},
        canChange: can(request, 'POST', MESSAGING_PATH),
      }),
    });
  }

  scope.get<{ Querystring: { done?: string } }>('/settings/messaging', async (request, reply) =>
    show(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post('/settings/messaging', async (request, reply) => {
    const session = sessionOf(request);
    const form: CapForm = { cap: field(request.body, 'cap'), messages: field(request.body, 'messages'), amount: field(request.body, 'amount'), unit: field(request.body, 'unit') };
    const checked = capOfForm(form);
    if ('errors' in checked) return show(request, reply, 422, { form, errors: checked.errors });
    await changeCompany(db, deps.auth, consoleActor(session), session.company_id, { frequency_cap: checked.cap });
    return reply.header('cache-control', 'no-store').redirect(`${MESSAGING_PATH}?done=saved`, 303);
  });
}
