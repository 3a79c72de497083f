/**
 * Message templates for automations and campaigns (docs/operator-api.md, "template"):
 * loaded from a JSON file (`--template FILE`), or built from `--body TEXT` as
 * `{header: {type: "none"}, body: TEXT, buttons: []}`. The server validates the content.
 */
import { readFile } from 'node:fs/promises';
import type { Template } from './api/types.ts';
import { CliError, UsageError } from './errors.ts';
import { inCwd, type CliIo } from './io.ts';

/** The minimal template for a plain text body. */
export function bodyTemplate(body: string): Template {
  return { header: { type: 'none' }, body, buttons: [] };
}

/**
 * Read and parse a template JSON file (relative to the run's directory); `-` reads the run's stdin.
 * Throws `CliError` if unreadable or not a JSON object.
 */
export async function loadTemplate(io: CliIo, file: string): Promise<unknown> {
  let text: string;
  try {
    text = file === '-' ? await readStdin(io) : await readFile(inCwd(io, file), 'utf8');
  } catch (err) {
    throw new CliError(`cannot read template file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`template file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`template file ${file} must hold a JSON object ({header, body, buttons, ...})`);
  }
  return parsed;
}

/**
 * The template chosen by `--template FILE` or `--body TEXT` (not both).
 * Returns undefined when neither is given and `required` is false; else throws `UsageError`.
 */
export async function templateFromOptions(
  io: CliIo,
  opts: { template?: string; body?: string },
  required: boolean,
): Promise<unknown> {
  if (opts.template !== undefined && opts.body !== undefined) {
    throw new UsageError('give either --template or --body, not both');
  }
  if (opts.template !== undefined) return loadTemplate(io, opts.template);
  if (opts.body !== undefined) return bodyTemplate(opts.body);
  if (required) throw new UsageError('a template is required: --template FILE.json or --body TEXT');
  return undefined;
}

/** All of the run's stdin as UTF-8 text. */
async function readStdin(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Splits the `warnings` of an automation/campaign answer (variables no contact has) off the
 * record and prints each on stderr as `warning: ...`; returns the rest for printing.
 */
export function takeWarnings<T>(io: CliIo, answer: T): T {
  if (!answer || typeof answer !== 'object' || !Array.isArray((answer as { warnings?: unknown }).warnings)) return answer;
  const { warnings, ...rest } = answer as unknown as { warnings: unknown[] };
  for (const w of warnings) io.stderr.write(`warning: ${String(w)}\n`);
  return rest as T;
}
