/**
 * Request validation, the FastAPI/Pydantic-compatible heart of the service
 * (shared/spec/decisions.md sections 1 and 2).
 *
 * Typical use in a route (steps of decisions.md section 1):
 *
 *   const parsed = parseBody(rawBuffer, req.headers['content-type']);      // step 2
 *   const early = bodyParseFailure(parsed);            // 400 / 422 json_invalid, before auth
 *   ... authenticate: authFailure(classifyApiKey(header, known)) ...       // step 3 (401)
 *   ... subscription check (403) ...                                        // step 4
 *   const v = validateRequest(ManageSegmentContacts, parsed, [{ name: 'segment_id', raw }]);
 *   if (!v.ok) reply 422 with renderValidationError(v.errors);              // step 5
 */

export { parseBody, isJsonContentType, type BodyParse } from './body.ts';
export { validateRequest, type PathParam, type Validated } from './validate.ts';
export { renderValidationError, type Loc, type ValidationErrorItem } from './errors.ts';
export {
  decideStatus, bodyParseFailure, authFailure, validationFailed, classifyApiKey, bodyTooLarge,
  MAX_BODY_BYTES, type AuthOutcome, type HttpAnswer,
} from './respond.ts';
export {
  CreateSegment, ManageSegmentContacts, AutomationContact, TriggerAutomation, ConnectorContact, ConnectorSend,
  type CreateSegmentBody, type ManageSegmentContactsBody, type AutomationContactBody,
  type TriggerAutomationBody, type ConnectorContactBody, type ConnectorSendBody,
} from './models.ts';
export { jsonSchemaOf, jsonSchemaComponents, VALIDATION_ERROR_SCHEMAS } from './jsonschema.ts';
export { str, int, bool, literal, nullable, list, dictAny, withDefault, model, type Model, type AnyType, type Out } from './types.ts';
export { parsePythonJson, JsonDecodeError, JsonLimitError, MAX_DEPTH, MAX_INT_DIGITS } from './json.ts';
export { pyJsonDumps, pyFloatRepr, pyQuote } from './serialize.ts';
export { PyFloat, toPlain, type PyValue, type PyDict, type PlainValue, type PlainObject } from './values.ts';
