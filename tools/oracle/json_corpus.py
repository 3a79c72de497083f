"""Differential corpus for the Python-json-compatible parser (src/http/validation/json.ts).

Usage: /tmp/oracle/bin/python tools/oracle/json_corpus.py   (any CPython 3.11 works)

Writes test/fixtures/validation/json-decode.json: a list of
    {"text": <document>, "ok": <canonical value>}            decoded fine
    {"text": <document>, "error": <msg>, "pos": <code point>} json.JSONDecodeError
    {"text": <document>, "fatal": <exception name>}          other failure (400 upstream)

The document is fed to json.JSONDecoder().decode(), i.e. the str-level parser that
FastAPI reaches after json.loads() has decoded the bytes. Documents with lone
surrogates are written with \\uXXXX escapes in the fixture file (ensure_ascii).
The canonical value is the value printed by canon(): like compact json.dumps but floats
as repr() (nan, inf, -inf spelled NaN, Infinity, -Infinity), strings with ensure_ascii.
Half the corpus is hand-written, the rest deterministic random mutations of valid
documents (seeded), which exercises error positions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test" / "fixtures" / "validation" / "json-decode.json"


def canon(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=True)
    if isinstance(v, list):
        return "[" + ",".join(canon(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=True) + ":" + canon(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


HAND = [
    "{}", "[]", "0", "-0", "-0.0", "1.5", "1e5", "1E+5", "1e-5", "123456789012345678901234567890",
    "0.1", "1.0", "100.0", "1e16", "1e15", "1.7976931348623157e308", "2e308", "-2e308", "5e-324",
    "1e-400", '"\\ud83d\\ude00"', '"\\ud83d"', '"\\ude00"', '"\\ud83d\\u0041"', '"\\ud83dx\\ude00"',
    '"\\ud83d\\ud83d\\ude00"', '"\\u00e9\\u00E9"', '"a\\/b"', '"\\"\\\\\\b\\f\\n\\r\\t"',
    "NaN", "Infinity", "-Infinity", "[NaN,Infinity,-Infinity]", "nan", "-NaN", "+Infinity",
    "Infinit", "-Infinit", "NaNx", "nul", "null", "nullx", "true", "truex", "tru", "false", "fals",
    "[1,2", "[1,2,", "[1 2]", "[,]", "[1,,2]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1 \"b\":2}",
    "{1:2}", "{\"a\":1,\"a\":2}", "{\"b\":1,\"a\":2,\"b\":3}", "{\"10\":1,\"9\":2}",
    '"abc', '"ab\\', '"ab\\u', '"ab\\u12', '"ab\\u123', '"ab\\u1234', '"ab\\u1234"', '"\\x"',
    '"\\u12G4"', '"\\uD800\\u"', '"\\uD800\\u12"', '"\\uD800\\u12G4"', '"\\uD800\\uDC0"',
    '"\\uD800\\uDC00', '"\\uD800\\uDC00"', '"\\uD800\\\\"', '"\\uD800\\n"', '"\\uD800\\uD800"',
    '"a\x00"', '"a\x1f"', '"a\x7f"', '"a\t"', '"\U0001F600\x01"', '"\U0001F600', '\U0001F600',
    '[\U0001F600]', '["\U0001F600",\U0001F600]', '{"\U0001F600":1,"\U0001F600"}',
    " ", "  [ 1 , 2 ] ", "\t\n\r 1 \t\n\r", "\x0c1", "1\x0c", "\u00a01", "1 x", "1 2", "[] []",
    "01", "00", "-01", "1.", "1.e1", ".1", "-.1", "1e", "1e+", "1e-", "1e+1", "1ee1", "1.5.5",
    "-", "--1", "-a", "+1", "0x1", "1_0", "٣", "１",
    "[" * 50 + "]" * 50, "[" * 50 + "]" * 49, "{\"a\":" * 30 + "1" + "}" * 29,
    "1" * 4300, "-" + "1" * 4300, "1" * 4301, "-" + "1" * 4301, "[" + "1" * 4301 + ",x]",
    "[x," + "1" * 4301 + "]", "0." + "1" * 5000, "1" * 5000 + ".0", "1" * 400 + "e-390",
    '{"a":[1,{"b":null}],"c":"\u00e9"}', '{"":""}', '{"__proto__":1}', '{"a":{}}x',
]

ALPHABET = (
    list('{}[]:,"\\') + list("0123456789") + list("-+.eE") + list("uU") + list("abcdefABCDEF")
    + list(" \t\n\r") + ["\x00", "\x1f", "\x7f", "\u00e9", "\U0001F600", "\ud800", "\udc00"]
    + ["null", "true", "NaN", "Infinity", "\\u", "\\ud83d", "\\ude00", '"k":']
)
SEEDS = [
    '{"name":"Segment \\u00e9","contacts":["+1555","x"],"n":-12.5e3,"ok":true,"z":null}',
    '[1,2.5,"a\\"b",{"k":[{},[]]},false,-0,1e-7]',
    '{"automation_id":1,"contacts":[{"phone":"1","variables":{"a":[1,{"b":"\\ud83d\\ude00"}]}}]}',
    '"\\u00e9\\ud83d\\ude00\\n\\t\U0001F600 x"',
    '  {  "a" :  [ 1 ,  2 ]  ,  "b"  :  { }  }  ',
]


def mutate(rng: random.Random, s: str) -> str:
    chars = list(s)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        i = rng.randint(0, len(chars))
        if op < 0.4 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(i, rng.choice(ALPHABET))
        elif chars:
            chars[min(i, len(chars) - 1)] = rng.choice(ALPHABET)
    if rng.random() < 0.2:
        chars = chars[: rng.randint(0, len(chars))]
    return "".join(chars)


def run(text: str) -> dict:
    rec: dict = {"text": text}
    try:
        rec["ok"] = canon(json.JSONDecoder().decode(text))
    except json.JSONDecodeError as e:
        rec["error"], rec["pos"] = e.msg, e.pos
    except (ValueError, RecursionError) as e:
        rec["fatal"] = type(e).__name__
    return rec


def main() -> None:
    rng = random.Random(20240601)
    texts = list(HAND)
    seen = set(texts)
    while len(texts) < len(HAND) + 2500:
        t = mutate(rng, rng.choice(SEEDS))
        if t not in seen:
            seen.add(t)
            texts.append(t)
    out = [run(t) for t in texts]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("[\n" + ",\n".join(json.dumps(r, ensure_ascii=True) for r in out) + "\n]\n",
                   encoding="ascii")
    print(len(out), "documents,", sum("error" in r for r in out), "errors,",
          sum("fatal" in r for r in out), "fatal")


if __name__ == "__main__":
    main()
