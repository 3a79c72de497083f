"""Differential corpus for lax coercions and float formatting (src/http/validation/coerce.ts,
serialize.ts), straight from Pydantic 2.13.5 (no HTTP).

Usage: /tmp/oracle/bin/python tools/oracle/coercion_corpus.py

Writes test/fixtures/validation/coercions.json:
    {"int": [[input, result]...], "bool": [[input, result]...], "float_repr": [repr...],
     }
and test/fixtures/validation/openapi-components.json (components.schemas of the oracle app).
where input is a JSON value (strings, ints, floats as {"float": repr} to keep 1.0 apart from
1), and result is {"ok": canonical value} or {"error": pydantic error type}.
"""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test" / "fixtures" / "validation" / "coercions.json"
OPENAPI = ROOT / "test" / "fixtures" / "validation" / "openapi-components.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import app  # noqa: E402


class IntBox(BaseModel):
    v: int


class BoolBox(BaseModel):
    v: bool


def run(adapter: TypeAdapter, value) -> dict:
    try:
        out = adapter.validate_python({"v": value}, from_attributes=True).v
        return {"ok": out if isinstance(out, bool) else str(out)}
    except ValidationError as e:
        return {"error": e.errors(include_url=False)[0]["type"]}


def enc(value):
    return {"float": repr(value)} if isinstance(value, float) else value


PIECES = ["0", "1", "7", "9", "00", "_", "__", ".", ".0", ".00", "-", "+", " ", "\t", "\n", "\u00a0",
          "\u2002", "\u0085", "\ufeff", "\u3000", "e", "E", "x", "a", "1_0", "0_0", "١", "１", "12345678901234567890"]


def random_strings(rng: random.Random, n: int) -> list[str]:
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))))
    return sorted(out)


def main() -> None:
    rng = random.Random(7)
    ints, bools = TypeAdapter(IntBox), TypeAdapter(BoolBox)
    strings = random_strings(rng, 3000) + [
        "9" * 4300, "9" * 4301, "-" + "9" * 4300, "+" + "9" * 4300, " " + "9" * 4300, "9" * 4300 + ".0",
        "9" * 4301 + ".0", "0" * 5000 + "1", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "9007199254740993", "-0_0.0", "0_.0",
    ]
    numbers = [0, 1, -1, 2, 2**53 + 1, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 10**30, True, False]
    floats = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e15, 1e16, 2.0**53, 2.0**63, -2.0**63, 9.223372036854775e18,
              1e300, 5e-324, float("inf"), float("-inf"), float("nan"), 7.000000000000001, 1 - 2**-53]
    inputs = strings + numbers + floats + [None, [], {}, [1], {"a": 1}]
    result = {
        "int": [[enc(v), run(ints, v)] for v in inputs],
        "bool": [[enc(v), run(bools, v)] for v in inputs],
    }
    reprs = []
    for _ in range(3000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if x == x and x not in (float("inf"), float("-inf")):
            reprs.append(repr(x))
    for _ in range(1000):
        reprs.append(repr(rng.choice([1, -1]) * rng.random() * 10 ** rng.randint(-25, 25)))
    reprs += [repr(x) for x in (0.1, 0.2 + 0.1, 1e-4, 1e-5, 9.999e-5, 1e15, 9999999999999998.0, 1e16,
                                123456789012345678.0, 5e-324, 1.7976931348623157e308, 100.0, 1.5, -0.0, 0.0)]
    result["float_repr"] = reprs
    parts = [json.dumps(k) + ": [\n" + ",\n".join(json.dumps(x, ensure_ascii=True) for x in v) + "\n]"
             for k, v in result.items()]
    OUT.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="ascii")
    schemas = app.app.openapi()["components"]["schemas"]
    OPENAPI.write_text(json.dumps(schemas, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(len(result["int"]), "coercion inputs,", len(reprs), "floats")


if __name__ == "__main__":
    main()
