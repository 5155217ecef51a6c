"""Java ``.properties`` files, read exactly as Kafka's command-line tools read them.

A user hands taskassign the same client properties file they give Kafka's tools (``--command-config``).
Kafka reads it with ``Utils.loadProps``, which is ``java.util.Properties.load(InputStream)``: the bytes
are ISO-8859-1, whatever the platform's default encoding (Java 9 changed the default for resource
bundles, not for ``Properties``). A UTF-8 file with a non-ASCII password therefore loads, in Kafka's
tools, as the mojibake of that password; this reader does the same, so that a file behaves here as it
behaves there. Non-ASCII text belongs in ``\\uXXXX`` escapes, which both read the same way.

The grammar, as ``Properties.load`` implements it (not as its Javadoc summarises it):

- Natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``. A logical line is a natural line whose leading
  spaces, tabs and form feeds are dropped; it continues onto the next natural line when it ends with an
  odd number of backslashes (the last one is dropped, and so is the next line's leading whitespace).
  A backslash that ends the file is dropped too.
- A logical line that starts with ``#`` or ``!`` is a comment (a comment cannot be continued). Blank
  lines are skipped.
- The key ends at the first unescaped ``=``, ``:``, space, tab or form feed. Whitespace after the key,
  then one ``=`` or ``:``, then more whitespace are skipped; the rest of the line is the value
  (trailing whitespace included; it may be empty).
- In keys and values, ``\\t \\n \\r \\f`` are control characters, ``\\uXXXX`` is a UTF-16 code unit (a
  surrogate pair makes one character, as in a Java string) and a backslash before any other character
  stands for that character. ``\\u`` not followed by four hex digits in the same key or value is an error
  (Java's ``IllegalArgumentException: Malformed \\uxxxx encoding``).
- A later duplicate key replaces the earlier value.

The file must be a regular file of at most ``MAX_PROPERTIES_BYTES`` bytes: it is checked with
``os.stat`` before it is opened (a FIFO or a device would block or never end) and again on the open
descriptor. Every failure is a ``PropertiesError`` naming the file and, for a bad escape, the line.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from dataclasses import dataclass

from taskassign.errors import InputFileError, PropertiesError
from taskassign.formats.json_io import read_input_bytes

__all__ = ("MAX_PROPERTIES_BYTES", "parse_properties", "read_properties")

#: Largest file read_properties accepts. Client configs are a few kilobytes; inline PEM certificates
#: (``ssl.truststore.certificates``) add a few more. A larger file is a wrong path, not a config.
MAX_PROPERTIES_BYTES = 1 << 20

_WHITESPACE = " \t\f"
_LINE_ENDS = "\r\n"
_SEPARATORS = "=:"
_COMMENT_STARTS = "#!"
_ESCAPED_CONTROLS = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """The entries of a ``.properties`` file, as Kafka's tools load them (ISO-8859-1, see the module)."""
    source = os.fspath(path)
    data = _read_regular_file(source)
    return parse_properties(data.decode("iso-8859-1"), source)


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """The entries of a properties text, as ``Properties.load(Reader)`` loads it; ``source`` names the
    text in error messages. Later duplicates win; the order is that of each key's first appearance."""
    entries: dict[str, str] = {}
    for line in _logical_lines(text):
        key_end, value_start = _split_key_value(line.chars)
        try:
            key = _unescape(line.chars, 0, key_end)
        except _MalformedEscape as error:
            raise _escape_error(text, source, line, error, "in a key") from None
        try:
            entries[key] = _unescape(line.chars, value_start, len(line.chars))
        except _MalformedEscape as error:
            raise _escape_error(text, source, line, error, f"in the value of {key!r}") from None
    return entries


def _escape_error(text: str, source: str, line: _LogicalLine, error: _MalformedEscape, where: str) -> PropertiesError:
    """Java's ``Malformed \\uxxxx encoding``, located on its physical line; the text itself is not shown."""
    return PropertiesError(
        source,
        _line_number(text, line.text_index(error.index)),
        f"malformed \\uxxxx escape {where}: \\u must be followed by four hex digits",
    )


def _read_regular_file(source: str) -> bytes:
    """The bytes of ``source`` if it is a regular file no larger than MAX_PROPERTIES_BYTES (the shared safe
    reader, formats.json_io.read_input_bytes: a FIFO or a device is refused without blocking)."""
    try:
        return read_input_bytes(source, what="client properties file", limit=MAX_PROPERTIES_BYTES)
    except InputFileError as error:
        raise PropertiesError(source, None, error.reason) from None


@dataclass(frozen=True)
class _LogicalLine:
    """A logical line's characters and, for locating errors, where each piece of it starts in the text:
    ``pieces`` holds (index in ``chars``, index in the text) wherever the two stop running in step (a
    continuation skips a backslash, a line end and whitespace)."""

    chars: str
    pieces: tuple[tuple[int, int], ...]

    def text_index(self, index: int) -> int:
        """The index in the text of ``chars[index]``."""
        piece = bisect.bisect_right([start for start, _ in self.pieces], index) - 1
        start, text_start = self.pieces[piece]
        return text_start + (index - start)


class _MalformedEscape(Exception):
    """A ``\\u`` without four hex digits at ``index`` of a logical line (the caller names the line)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _line_number(text: str, index: int) -> int:
    """The physical line (1-based) of ``text[index]``: ``\\n``, ``\\r`` and ``\\r\\n`` each end a line."""
    before = text[:index]
    return before.count("\n") + before.count("\r") - before.count("\r\n") + 1


def _logical_lines(text: str) -> Iterator[_LogicalLine]:
    """The logical lines of ``text`` (see the module docstring), comments and blank lines left out.

    A port of ``Properties.LineReader.readLine``, quirks included: a comment is recognised wherever a
    logical line is still empty, even right after a continuation (``\\`` alone on a line, then ``#x``,
    is one comment); a continuation into an empty natural line ends the logical line there; and a
    logical line emptied by dropping a final backslash at the end of the text is still an entry (the
    empty key), while whitespace after that backslash makes it nothing.
    """
    end = len(text)
    index = 0
    while True:
        chars: list[str] = []
        pieces: list[tuple[int, int]] = []
        skip_whitespace = True
        continued = False  # the previous natural line ended with a continuation
        backslash = False  # the characters so far end with an odd run of backslashes
        while True:
            if index >= end:
                if chars:
                    yield _finish(chars, pieces, drop_last=backslash)
                return
            char = text[index]
            index += 1
            if skip_whitespace:
                if char in _WHITESPACE or (not continued and char in _LINE_ENDS):
                    continue
                skip_whitespace = False
                continued = False
            if not chars and char in _COMMENT_STARTS:
                index = _end_of_comment(text, index)
                skip_whitespace = True
                continue
            if char not in _LINE_ENDS:
                if not pieces or pieces[-1][1] + len(chars) - pieces[-1][0] != index - 1:
                    pieces.append((len(chars), index - 1))
                chars.append(char)
                backslash = not backslash if char == "\\" else False
                continue
            if not chars:
                skip_whitespace = True
                continue
            if index >= end:
                yield _finish(chars, pieces, drop_last=backslash)
                return
            if not backslash:
                yield _finish(chars, pieces, drop_last=False)
                break
            chars.pop()  # the continuation's backslash
            skip_whitespace = continued = True
            backslash = False
            if char == "\r" and text[index] == "\n":
                index += 1


def _end_of_comment(text: str, index: int) -> int:
    """The index after the line end that closes a comment starting before ``index`` (or the text's end)."""
    ends = [found for found in (text.find("\n", index), text.find("\r", index)) if found >= 0]
    return min(ends) + 1 if ends else len(text)


def _finish(chars: list[str], pieces: list[tuple[int, int]], *, drop_last: bool) -> _LogicalLine:
    if drop_last:
        chars.pop()
    return _LogicalLine("".join(chars), tuple(pieces))


def _split_key_value(line: str) -> tuple[int, int]:
    """(end of the key, start of the value) in a logical line, as ``Properties.load0`` splits it."""
    limit = len(line)
    key_end = 0
    value_start = limit
    has_separator = False
    backslash = False
    while key_end < limit:
        char = line[key_end]
        if not backslash and (char in _SEPARATORS or char in _WHITESPACE):
            value_start = key_end + 1
            has_separator = char in _SEPARATORS
            break
        backslash = not backslash if char == "\\" else False
        key_end += 1
    while value_start < limit:
        char = line[value_start]
        if char not in _WHITESPACE:
            if has_separator or char not in _SEPARATORS:
                break
            has_separator = True
        value_start += 1
    return key_end, value_start


def _unescape(chars: str, start: int, stop: int) -> str:
    """``chars[start:stop]`` with its escapes resolved, as ``Properties.loadConvert`` does; a bad
    ``\\u`` raises _MalformedEscape with its index (the message is the caller's, and never shows the
    text, which may be a password)."""
    if "\\" not in chars[start:stop]:
        return chars[start:stop]
    out: list[str] = []
    index = start
    while index < stop:
        char = chars[index]
        index += 1
        if char != "\\":
            out.append(char)
            continue
        # Never past stop: a key ends before an unescaped separator and a line never ends with an odd
        # run of backslashes (readLine drops the last one), so every backslash here escapes something.
        char = chars[index]
        index += 1
        if char != "u":
            out.append(_ESCAPED_CONTROLS.get(char, char))
            continue
        digits = chars[index : index + 4]
        if index > stop - 4 or not _HEX_DIGITS.issuperset(digits):
            raise _MalformedEscape(index - 2)
        out.append(chr(int(digits, 16)))
        index += 4
    return _join_surrogates("".join(out))


def _join_surrogates(text: str) -> str:
    """``text`` with every UTF-16 surrogate pair made one character, as it is one in a Java string
    (``\\uD83D\\uDE00`` is one emoji); a lone surrogate stays, as Java keeps it."""
    if not any("\ud800" <= char <= "\udfff" for char in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
