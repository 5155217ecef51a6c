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
_INT = {int}
_STR = {str}
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
    __slots__ = ("_levels", "_out", "_unit")

    def __init__(self, unit: str, out: list[str]) -> None:
        self._unit = unit
        self._out = out
        #: Per depth: the line break and indentation of its items, the item separator, and the C encoder whose
        #: item separator that is.
        self._levels: list[tuple[str, str, _Encode]] = []

    def _level(self, depth: int) -> tuple[str, str, _Encode]:
        levels = self._levels
        while len(levels) <= depth:
            inner = "\n" + self._unit * (len(levels) + 1)
            levels.append((inner, "," + inner, _flat_encoder("," + inner)))
        return levels[depth]

    def _scalars(self, values: Any, depth: int) -> str:
        """The items of a container of scalars, separated as at ``depth`` (``[`` and ``]`` left out)."""
        inner, separator, encode = self._level(depth)
        kinds = set(map(type, values))
        if kinds == _INT:  # what the C encoder writes for them, without building one (most lists: task ids)
            return inner + separator.join(map(int.__repr__, values))
        if kinds == _STR:
            return inner + separator.join(map(encode_basestring, values))
        return inner + encode(values)[1:-1]

    def write(self, value: Any, depth: int) -> None:
        out, scalars = self._out, _SCALARS
        kind = type(value)
        if kind in scalars:
            out.append(self._level(depth)[2](value))
        elif isinstance(value, dict) and value:
            close = "\n" + self._unit * depth + "}"
            if _STRINGS.issuperset(map(type, value)) and scalars.issuperset(map(type, value.values())):
                inner, _, encode = self._level(depth)
                out.append("{" + inner + encode(value)[1:-1] + close)
                return
            inner, separator, encode = self._level(depth)
            before = "{" + inner
            list_close = "\n" + self._unit * (depth + 1) + "]"
            for key, item in value.items():
                name = encode_basestring(key) if type(key) is str else encode({key: 0})[1:-4]
                if type(item) is list and item and scalars.issuperset(map(type, item)):  # inline: the usual child
                    out.append(before + name + ": [" + self._scalars(item, depth + 1) + list_close)
                else:
                    out.append(before + name + ": ")
                    self.write(item, depth + 1)
                before = separator
            out.append(close)
        elif isinstance(value, (list, tuple)) and value:
            close = "\n" + self._unit * depth + "]"
            if scalars.issuperset(map(type, value)):  # C-level, as the check above
                out.append("[" + self._scalars(value, depth) + close)
                return
            inner, separator, _ = self._level(depth)
            before = "[" + inner
            for item in value:
                out.append(before)
                before = separator
                self.write(item, depth + 1)
            out.append(close)
        else:  # an empty container, a scalar's subclass, or what only the standard encoder knows to refuse
            out.append(json.dumps(value, ensure_ascii=False, indent=len(self._unit)))
