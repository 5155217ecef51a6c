"""JSON in and out: reading documents with errors that name the JSON path of the offending value, and
writing them deterministically (same document, same bytes; atomically, so a crash never leaves half a file).

Every check raises ScenarioError(path, message); paths look like ``$.tasks[3].partitions[0].topic``.
Every taskassign file starts with a ``format`` tag (``taskassign/<kind>/v1``); ``expect_format`` checks it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from taskassign.errors import ScenarioError, UserInputError

__all__ = (
    "JsonObject",
    "describe",
    "dump_json",
    "fail",
    "load_json_file",
    "load_json_text",
    "to_json_text",
)

T = TypeVar("T")
_MISSING: Any = object()
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def fail(path: str, message: str, source: str | None = None) -> NoReturn:
    raise ScenarioError(path, message, source=source)


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # built in C; a shorter dict means a key came twice (found only then)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def load_json_text(text: str, source: str) -> Any:
    """Parse JSON text; syntax errors name line, column and character offset; duplicate keys fail."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            "$", f"invalid JSON at line {exc.lineno}, column {exc.colno} (char {exc.pos}): {exc.msg}",
            source=source,
        ) from None
    except _DuplicateKey as exc:
        raise ScenarioError("$", f"duplicate key {exc.key!r} in a JSON object", source=source) from None


def load_json_file(path: str | Path) -> Any:
    """Read and parse a JSON file, turning I/O and syntax errors into user errors naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserInputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise UserInputError(f"{p}: is a directory, expected a JSON file") from None
    except UnicodeDecodeError as exc:
        raise UserInputError(f"{p}: not UTF-8 text (byte offset {exc.start})") from None
    except OSError as exc:
        raise UserInputError(f"{p}: cannot read ({exc.strerror})") from None
    return load_json_text(text, str(p))


class JsonObject:
    """A JSON object being read at ``path``: typed getters, and ``finish`` rejects unknown keys."""

    __slots__ = ("_seen", "data", "path", "source")

    def __init__(self, value: Any, path: str, source: str | None = None) -> None:
        if not isinstance(value, dict):
            fail(path, f"expected an object, got {describe(value)}", source)
        self.data: dict[str, Any] = value
        self.path = path
        self.source = source
        self._seen: set[str] = set()

    def sub(self, key: str) -> str:
        return f"{self.path}.{key}"

    def fail(self, key: str | None, message: str) -> NoReturn:
        fail(self.sub(key) if key else self.path, message, self.source)

    def expect_format(self, expected: str, *, what: str = "") -> None:
        """The document's ``format`` tag must be ``expected`` (``what`` says which file that is), so that a
        file of another kind fails on its first key instead of somewhere inside."""
        fmt = self.string("format")
        if fmt != expected:
            self.fail("format", f"expected {expected!r}{what}, got {fmt!r}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        self._seen.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.fail(None, f"missing required key {key!r}")
            return default
        return self.data[key]

    def obj(self, key: str, default: Any = _MISSING) -> JsonObject:
        value = self.raw(key, {} if default is _MISSING else default)
        if value is None and default is None:
            return JsonObject({}, self.sub(key), self.source)
        return JsonObject(value, self.sub(key), self.source)

    def string(self, key: str, default: Any = _MISSING, *, nullable: bool = False, non_empty: bool = False) -> Any:
        value = self.raw(key, default)
        if value is None and (nullable or default is None):
            return None
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {describe(value)}")
        if non_empty and not value:
            self.fail(key, "must not be empty")
        return value

    def integer(
        self, key: str, default: Any = _MISSING, *, minimum: int | None = None, maximum: int = LONG_MAX,
        nullable: bool = False, allowed: Collection[int] = (),
    ) -> Any:
        value = self.raw(key, default)
        if value is None and (nullable or (default is None and key not in self.data)):
            return None
        return check_int(value, self.sub(key), minimum=minimum, maximum=maximum, allowed=allowed,
                         source=self.source)

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"expected true or false, got {describe(value)}")
        return value

    def array(self, key: str, default: Any = _MISSING) -> list[Any]:
        value = self.raw(key, default)
        if not isinstance(value, list):
            self.fail(key, f"expected an array, got {describe(value)}")
        return value

    def string_list(self, key: str, default: Any = _MISSING, *, unique: bool = True) -> list[str]:
        items = self.array(key, default)
        seen: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, str):
                fail(f"{self.sub(key)}[{i}]", f"expected a string, got {describe(item)}", self.source)
            if unique and item in seen:
                fail(f"{self.sub(key)}[{i}]", f"{item!r} is listed twice", self.source)
            seen.add(item)
        return items

    def map_of(self, key: str, convert: Callable[[Any, str], T]) -> dict[str, T]:
        """An object whose values all pass ``convert(value, path)``; keys kept in document order."""
        value = self.raw(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"expected an object, got {describe(value)}")
        return {k: convert(v, f"{self.sub(key)}.{k}") for k, v in value.items()}

    def finish(self, allowed_extra: Collection[str] = ()) -> None:
        """Reject keys that no getter asked for (typos must not be silently ignored)."""
        unknown = [k for k in self.data if k not in self._seen and k not in allowed_extra]
        if unknown:
            known = ", ".join(sorted(self._seen | set(allowed_extra)))
            self.fail(unknown[0], f"unknown key {unknown[0]!r} (known keys here: {known})")


def check_int(
    value: Any, path: str, *, minimum: int | None = None, maximum: int = LONG_MAX,
    allowed: Collection[int] = (), source: str | None = None,
) -> int:
    """``value`` must be a JSON integer (not a boolean or float) within range, or one of ``allowed``."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(path, f"expected an integer, got {describe(value)}", source)
    if value in allowed:
        return value
    low = LONG_MIN if minimum is None else minimum
    if value < low or value > maximum:
        extra = f" (or one of {', '.join(map(str, sorted(allowed)))})" if allowed else ""
        fail(path, f"must be between {low} and {maximum}{extra}, got {value}", source)
    return value


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# --- writing ----------------------------------------------------------------------------------------


def to_json_text(doc: Any, *, indent: int | None = 2) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def dump_json(doc: Any, path: str | Path, *, indent: int | None = 2) -> None:
    """Write ``doc`` atomically (temp file + rename), so a crash never leaves a half-written file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(to_json_text(doc, indent=indent))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
