"""Oracle FastAPI app: the request models of docs/decisions.md#2-request-models.

Run with the oracle venv (FastAPI 0.142.2 / Pydantic 2.13.5):
    /tmp/oracle/bin/python -m uvicorn app:app --app-dir tools/oracle --port 8765

Only validation matters here: every handler returns a dummy 200 once the request
has passed body parsing, authentication (header ``service-api-key``; the only valid
key is ``test-key``) and validation. Used by ``generate.py`` to record the exact
answers that ``src/http/validation`` must reproduce.

Interpretation (flagged in the report): ``X | None`` fields of AutomationContact and
TriggerAutomation are given the default ``None`` (optional), see NULLABLE_DEFAULT.
"""

import json
import math
import os
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field, StringConstraints

# docs/decisions.md#2-request-models writes "str | None" without "= None". In Pydantic v2 that
# would make the field required (but nullable). We read it as optional with default
# None (what a real integration sends: a contact with only "phone"). Flip to ... to
# get the literal reading.
NULLABLE_DEFAULT: Any = None

URL = Annotated[str, StringConstraints(max_length=2048, pattern=r"^https?://\S+$")]
Phone = Annotated[str, StringConstraints(max_length=64)]
Name = Annotated[str, StringConstraints(max_length=255)]


class CreateSegment(BaseModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=255)]


class ManageSegmentContacts(BaseModel):
    contacts: Annotated[list[Phone], Field(max_length=1000)]
    mode: Literal["add", "delete"]
    use_hashed_phone: bool = False


class AutomationContact(BaseModel):
    phone: Phone
    first_name: Name | None = NULLABLE_DEFAULT
    last_name: Name | None = NULLABLE_DEFAULT
    variables: dict[str, Any] | None = NULLABLE_DEFAULT
    image_url: URL | None = NULLABLE_DEFAULT
    video_url: URL | None = NULLABLE_DEFAULT


class TriggerAutomation(BaseModel):
    automation_id: int
    contacts: Annotated[list[AutomationContact], Field(min_length=1, max_length=1000)]
    image_url: URL | None = NULLABLE_DEFAULT
    video_url: URL | None = NULLABLE_DEFAULT
    url: URL | None = NULLABLE_DEFAULT
    url2: URL | None = NULLABLE_DEFAULT


class ConnectorContact(BaseModel):
    phone: Phone


class ConnectorSend(BaseModel):
    campaign_id: int
    contacts: Annotated[list[ConnectorContact], Field(min_length=1, max_length=1000)]


api_key_header = APIKeyHeader(name="service-api-key")


def authenticate(key: str = Depends(api_key_header)) -> str:
    """401 {"detail":"Invalid API key"} for any key but the oracle's test key."""
    if key != "test-key":
        raise HTTPException(status_code=401, detail="Invalid API key")
    return key


app = FastAPI(title="cms oracle")

if os.environ.get("CMS_ORACLE_TOLERANT"):
    # Second oracle instance, used only where the real one answers 500 because the
    # 422 body cannot be rendered (NaN/Infinity, lone surrogates in the echoed input).
    # Our service must never answer 500; it renders what Pydantic's JSON mode would
    # (non-finite floats as null) and escapes lone surrogates as \udXXXX.

    def _finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, list):
            return [_finite(v) for v in value]
        if isinstance(value, dict):
            return {k: _finite(v) for k, v in value.items()}
        return value

    @app.exception_handler(RequestValidationError)
    async def tolerant_validation_handler(request, exc):  # type: ignore[no-untyped-def]
        content = {"detail": _finite(jsonable_encoder(exc.errors()))}
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return Response(
            text.encode("utf-8", "backslashreplace"),
            status_code=422,
            media_type="application/json",
        )


@app.post("/api/segments/create")
def create_segment(body: CreateSegment, _key: str = Depends(authenticate)) -> dict:
    return {"ok": True}


@app.post("/api/segments/{segment_id}/contacts")
def manage_segment_contacts(
    segment_id: int, body: ManageSegmentContacts, _key: str = Depends(authenticate)
) -> dict:
    return {"ok": True}


@app.post("/api/automations/send")
def trigger_automation(body: TriggerAutomation, _key: str = Depends(authenticate)) -> dict:
    return {"ok": True}


@app.post("/api/connector/send")
def connector_send(body: ConnectorSend, _key: str = Depends(authenticate)) -> dict:
    return {"ok": True}
