"""Canonical serialization of trail records: the exact bytes that are hashed and signed.

The form is JSON with:
* object keys sorted by code point, no insignificant whitespace (`,` and `:` only);
* strings as `json.dumps(..., ensure_ascii=False)` writes them (stable escapes, text kept as is);
* integers in decimal; floats in a fixed form: rounded to 6 decimals, trailing zeros dropped but one
  digit kept after the point (`0.5`, `1.0`, `-0.25`); NaN and infinities are refused;
* datetimes (which must carry a timezone) converted to UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`;
* tuples as lists; pydantic models as their JSON dump.

Parsing the canonical text and serializing it again gives the same text (tested), so the stored
JSONB copy can always be checked against the hashed bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from typing import Any

from engine.errors import IntegrityError

GENESIS_HASH = "0" * 64


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise IntegrityError(f"a trail record cannot hold the number {value!r}; expected a finite number")
    text = f"{round(value, 6):.6f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text in ("-0.0", "-0") else text


def utc_timestamp(value: datetime) -> str:
    """A timezone-aware datetime as `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""
    if value.tzinfo is None:
        raise IntegrityError(f"timestamp {value.isoformat()} has no timezone; trail times must be UTC-aware")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _encode(value: Any, out: list[str]) -> None:
    if value is None or isinstance(value, bool):
        out.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, datetime):
        out.append(json.dumps(utc_timestamp(value)))
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise IntegrityError("trail record keys must be strings")
        out.append("{")
        for i, key in enumerate(sorted(value)):
            out.append(("," if i else "") + json.dumps(key, ensure_ascii=False) + ":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif hasattr(value, "model_dump"):
        _encode(value.model_dump(mode="json"), out)
    else:
        raise IntegrityError(f"a trail record cannot hold a {type(value).__name__}; expected JSON data")


def canonical_json(value: Any) -> str:
    """The canonical text of `value` (see the module docstring)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize(value: Any) -> Any:
    """`value` as plain JSON data exactly as its canonical text reads back."""
    return json.loads(canonical_json(value))
