/**
 * Request validation, the FastAPI/Pydantic-compatible heart of the service
 * (docs/decisions.md#1-request-handling-order and 2).
 *
 * The public routes run these in the steps of docs/decisions.md#1-request-handling-order (src/http/public-operation.ts):
 * parseBody (step 2: 400 / 422 json_invalid, before authentication), then validateRequest and
 * renderValidationError (step 5, 422).
 */

export { parseBody, isJsonContentType, type BodyParse } from './body.ts';
export { validateRequest, type PathParam, type Validated } from './validate.ts';
export { renderValidationError, type Loc, type ValidationErrorItem } from './errors.ts';
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
