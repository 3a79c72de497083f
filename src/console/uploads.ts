/**
 * File uploads of console forms (segment members, contacts import): a scope with
 * @fastify/multipart for the routes registered in it, and a preValidation hook that reads the whole form
 * before the console's CSRF check (which then finds `_csrf` in the body as for urlencoded forms).
 *
 * - `request.body` becomes the form's text fields (first value of each name);
 * - `request.consoleUpload` holds the file of the field `file` (bytes in memory, at most
 *   `limits.fileSize`), or `problem`: a sentence for the page when the upload broke a limit or could
 *   not be read; `truncatedFields` names text fields cut at `limits.fieldSize`.
 * Only the routes of this scope parse multipart; the rest of the console keeps urlencoded forms only.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

/** What the hook read from a multipart form. */
export interface ConsoleUpload {
  file?: { name: string; data: Buffer };
  problem?: string;
  truncatedFields: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The upload of a multipart console form (set by uploadScope's hook; null otherwise). */
    consoleUpload: ConsoleUpload | null;
  }
}

/** Limits of one upload form (bytes, counts), as @fastify/multipart takes them. */
export interface UploadLimits { fileSize: number; fields: number; parts: number; fieldSize: number }

/** A sentence for the page about a multipart error (limits in MiB from `fileSize`). */
export function uploadProblem(err: unknown, fileSize: number): string {
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return `The file is larger than ${fileSize / 1024 / 1024} MiB: split it into smaller files.`;
  if (code === 'FST_FILES_LIMIT') return 'Choose one file only.';
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return 'The form had more fields than this page sends.';
  return 'The upload could not be read: choose the file again and retry.';
}

/** Registers `routes` in a child scope of `scope` that accepts one-file multipart forms within `limits`. */
export function uploadScope(scope: FastifyInstance, limits: UploadLimits, routes: (upload: FastifyInstance) => void): void {
  void scope.register(async (upload) => {
    await upload.register(multipart, { limits: { ...limits, files: 1 } });
    upload.decorateRequest('consoleUpload', null);
    upload.addHook('preValidation', async (request) => {
      if (!request.isMultipart()) return;
      const fields: Record<string, string> = {};
      const got: ConsoleUpload = { truncatedFields: [] };
      try {
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            try {
              const data = await part.toBuffer();
              if (part.fieldname === 'file' && (part.filename || data.length > 0)) got.file = { name: part.filename ?? '', data };
            } catch (err) {
              got.problem ??= uploadProblem(err, limits.fileSize);
            }
          } else if (typeof part.value === 'string' && !(part.fieldname in fields)) {
            fields[part.fieldname] = part.value;
            if (part.valueTruncated) got.truncatedFields.push(part.fieldname);
          }
        }
      } catch (err) {
        got.problem ??= uploadProblem(err, limits.fileSize);
      }
      request.body = fields;
      request.consoleUpload = got;
    });
    routes(upload);
  });
}
