/**
 * The request models of docs/decisions.md#2-request-models, declared with the builders of types.ts.
 *
 * Interpretation (docs/decisions.md#2-request-models): the contract writes the nullable fields as
 * `str | None` without `= None`. In Pydantic v2 that would make them required; we read them as optional with default None
 * (a contact with only `phone` is valid), as tools/oracle/app.py does. To get the literal
 * reading, replace `optional(x)` by `nullable(x)` below and regenerate the fixtures.
 */

import { bool, dictAny, int, list, literal, model, nullable, str, withDefault, type AnyType, type Defaulted, type Model } from './types.ts';
import type { PlainObject } from './values.ts';

/** A nullable field defaulting to None: `x: T | None = None`. */
function optional<T extends AnyType>(type: T): Defaulted<ReturnType<typeof nullable<T>>> {
  return withDefault(nullable(type), null);
}

/** `URL = str, max 2048, pattern ^https?://\S+$` (max length is checked before the pattern). */
const Url = str({ maxLength: 2048, pattern: '^https?://\\S+$' });
const Phone = str({ maxLength: 64 });
const Name = str({ maxLength: 255 });

export interface CreateSegmentBody {
  name: string;
}

export interface ManageSegmentContactsBody {
  contacts: string[];
  mode: 'add' | 'delete';
  use_hashed_phone: boolean;
}

export interface AutomationContactBody {
  phone: string;
  first_name: string | null;
  last_name: string | null;
  /** Values are plain JSON data; ints beyond 2^53 are bigints, NaN/Infinity are numbers. */
  variables: PlainObject | null;
  image_url: string | null;
  video_url: string | null;
}

export interface TriggerAutomationBody {
  /** A Python int: a bigint beyond Number.MAX_SAFE_INTEGER. */
  automation_id: number | bigint;
  contacts: AutomationContactBody[];
  image_url: string | null;
  video_url: string | null;
  url: string | null;
  url2: string | null;
}

export interface ConnectorContactBody {
  phone: string;
}

export interface ConnectorSendBody {
  /** A Python int: a bigint beyond Number.MAX_SAFE_INTEGER. */
  campaign_id: number | bigint;
  contacts: ConnectorContactBody[];
}

/** `CreateSegment: name: str (1..255 code points)`. */
export const CreateSegment: Model<CreateSegmentBody> = model('CreateSegment', {
  name: str({ minLength: 1, maxLength: 255 }),
});

/** `ManageSegmentContacts` (operation 4.2). */
export const ManageSegmentContacts: Model<ManageSegmentContactsBody> = model('ManageSegmentContacts', {
  contacts: list(Phone, { maxLength: 1000 }),
  mode: literal(['add', 'delete']),
  use_hashed_phone: withDefault(bool(), false),
});

/** One contact of operation 4.3. */
export const AutomationContact: Model<AutomationContactBody> = model('AutomationContact', {
  phone: Phone,
  first_name: optional(Name),
  last_name: optional(Name),
  variables: optional(dictAny()),
  image_url: optional(Url),
  video_url: optional(Url),
});

/** `TriggerAutomation` (operation 4.3). */
export const TriggerAutomation: Model<TriggerAutomationBody> = model('TriggerAutomation', {
  automation_id: int(),
  contacts: list(AutomationContact, { minLength: 1, maxLength: 1000 }),
  image_url: optional(Url),
  video_url: optional(Url),
  url: optional(Url),
  url2: optional(Url),
});

/** One contact of operation 4.4 (`{phone: str (max 64)}`). */
export const ConnectorContact: Model<ConnectorContactBody> = model('ConnectorContact', { phone: Phone });

/** `ConnectorSend` (operation 4.4). */
export const ConnectorSend: Model<ConnectorSendBody> = model('ConnectorSend', {
  campaign_id: int(),
  contacts: list(ConnectorContact, { minLength: 1, maxLength: 1000 }),
});
