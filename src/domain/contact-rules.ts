/**
 * The rules for a contact's names and variables that every way of writing them by hand applies
 * (docs/contacts.md "One contact, edits" and "Import"): the edit (PATCH …/contacts/{phone}, the
 * console's edit page), the JSON import (PUT …/contacts), the CSV import (the console's upload,
 * POST /admin/companies/{company_id}/contact-imports and `cms contacts import`, through
 * contacts-csv.ts). One copy, here; no database or queue imports, so the CLI can use it too.
 *
 * - first and last name: at most NAME_MAX characters (code points);
 * - variable names: VARIABLE_NAME (a letter or `_`, then letters, digits or `_`, at most 64), so a
 *   template can name them and no name can read as a spreadsheet formula;
 * - string values at most VARIABLE_VALUE_MAX characters; at most VARIABLES_MAX variables.
 */

/** Longest first or last name (characters). */
export const NAME_MAX = 255;
/** Longest variable value (characters) and most variables a contact may get by hand. */
export const VARIABLE_VALUE_MAX = 1000;
export const VARIABLES_MAX = 50;
/** A variable name: a letter or `_`, then letters, digits or `_` (Liquid can name it), at most 64. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The fields the rules concern (absent or null ones are not checked). */
export interface ContactFields {
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
}

/** One broken rule: the field, the variable concerned (when there is one) and a sentence saying what to fix. */
export interface ContactFieldProblem {
  field: 'first_name' | 'last_name' | 'variables';
  variable?: string;
  message: string;
}

/** More than `max` characters (code points), without spreading a long string into an array. */
function longerThan(v: string, max: number): boolean {
  if (v.length <= max) return false;
  if (v.length > 2 * max) return true;
  return [...v].length > max;
}

/** Why `name` is no variable name, or null when it is one. */
export function variableNameProblem(name: string): string | null {
  return VARIABLE_NAME.test(name) ? null : `"${name.slice(0, 70)}" is not a variable name: a letter or _, then letters, digits or _ (at most 64).`;
}

/**
 * The rules `fields` breaks, at most one a field (for `variables` the first bad name or value in
 * the object's order, else too many variables); empty when it keeps them all. Pure; never throws.
 */
export function contactFieldProblems(fields: ContactFields): ContactFieldProblem[] {
  const problems: ContactFieldProblem[] = [];
  for (const field of ['first_name', 'last_name'] as const) {
    const v = fields[field];
    if (typeof v === 'string' && longerThan(v, NAME_MAX)) problems.push({ field, message: `At most ${NAME_MAX} characters.` });
  }
  if (fields.variables) {
    const entries = Object.entries(fields.variables);
    let problem: ContactFieldProblem | undefined;
    for (const [k, v] of entries) {
      const bad = variableNameProblem(k);
      if (bad) { problem = { field: 'variables', variable: k, message: bad }; break; }
      if (typeof v === 'string' && longerThan(v, VARIABLE_VALUE_MAX)) {
        problem = { field: 'variables', variable: k, message: `The value of ${k} is longer than ${VARIABLE_VALUE_MAX} characters.` };
        break;
      }
    }
    if (!problem && entries.length > VARIABLES_MAX) problem = { field: 'variables', message: `At most ${VARIABLES_MAX} variables.` };
    if (problem) problems.push(problem);
  }
  return problems;
}
