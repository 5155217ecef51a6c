"""``json.dumps(doc, indent=n, ensure_ascii=False)``, byte for byte, at the speed of the C encoder.

Python's C encoder runs only without ``indent``; with it, every value goes through the pure-Python encoder
(an assignment of 10^5 tasks: ~0.16 s of ``taskassign assign -o``). Here only the containers that hold
other containers are walked in Python; a container of scalars (the long task lists) is encoded by the C
encoder in one call, its item separator carrying the newline and the indentation, which gives the same
text as the indenting encoder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

__all__ = ("indented_json",)

#: The C encoder's constructor (not in the typing stubs; None where CPython was built without it).
_C_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_STRINGS = frozenset({str})
_Encode = Callable[[Any], str]


def indented_json(doc: Any, indent: int) -> str:
    """The text ``json.dumps(doc, indent=indent, ensure_ascii=False)`` gives (a value JSON cannot hold
    raises the same TypeError, from the same encoder)."""
    parts: list[str] = []
    _Writer(" " * indent, parts).write(doc, 0)
    return "".join(parts)


def _flat_encoder(item_separator: str) -> _Encode:
    """A C-encoder call with this item separator (the standard encoder where the C one is missing)."""
    if _C_MAKE_ENCODER is None:  # pragma: no cover - CPython always has it
        return json.JSONEncoder(ensure_ascii=False, separators=(item_separator, ": ")).encode
    encoder = _C_MAKE_ENCODER(None, json.JSONEncoder().default, encode_basestring, None, ": ", item_separator,
                             False, False, True)
    return lambda value: "".join(encoder(value, 0))


class _Writer:
    __slots__ = ("_flat", "_out", "_unit")

    def __init__(self, unit: str, out: list[str]) -> None:
        self._unit = unit
        self._out = out
        self._flat: dict[int, _Encode] = {}  # by depth: the separator holds the next level's indentation

    def _encoder(self, depth: int) -> _Encode:
        found = self._flat.get(depth)
        if found is None:
            found = self._flat[depth] = _flat_encoder(",\n" + self._unit * (depth + 1))
        return found

    def write(self, value: Any, depth: int) -> None:
        out, scalars = self._out, _SCALARS
        kind = type(value)
        if kind in scalars:
            out.append(self._encoder(depth)(value))
        elif isinstance(value, dict) and value:
            inner = "\n" + self._unit * (depth + 1)
            close = "\n" + self._unit * depth + "}"
            if _STRINGS.issuperset(map(type, value)) and scalars.issuperset(map(type, value.values())):
                out.append("{" + inner + self._encoder(depth)(value)[1:-1] + close)
                return
            separator = "{" + inner
            for key, item in value.items():
                out.append(separator + self._encoder(depth)({key: 0})[1:-4] + ": ")
                separator = "," + inner
                self.write(item, depth + 1)
            out.append(close)
        elif isinstance(value, (list, tuple)) and value:
            inner = "\n" + self._unit * (depth + 1)
            close = "\n" + self._unit * depth + "]"
            if scalars.issuperset(map(type, value)):  # C-level, as the check above
                out.append("[" + inner + self._encoder(depth)(value)[1:-1] + close)
                return
            separator = "[" + inner
            for item in value:
                out.append(separator)
                separator = "," + inner
                self.write(item, depth + 1)
            out.append(close)
        else:  # an empty container, a scalar's subclass, or what only the standard encoder knows to refuse
            out.append(json.dumps(value, ensure_ascii=False, indent=len(self._unit)))
