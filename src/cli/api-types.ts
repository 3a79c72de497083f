/**
 * @deprecated The hand-written operator API types are gone: the shapes come from the types generated from
 * `/openapi.json` (src/cli/api/types.ts). This module only re-exports the names still imported by
 * parse.ts, templates.ts, csv-import.ts and commands/contacts.ts; import them from './api/types.ts' and
 * delete this file.
 */
export type { ContactInput, ContactsResult, DeliveryHours, Template } from './api/types.ts';
