"""Bytes that are not text, found where Spark reads CSV and JSON-lines tables, before anything decodes them.

Spark keeps a text line's bytes as they are (``spark.read.text``), but its JSON parser and its CSV reader
decode them, silently turning invalid UTF-8 into U+FFFD (and a ``\\uD800`` escape without its pair into
``?``). So the reader checks the raw bytes first: a JSON line, or a CSV cell (read as ISO-8859-1, which maps
every byte to one character and back, so the cell's bytes survive), that is not valid UTF-8 makes its row
malformed, and the errors table shows the row's bytes escaped (``escaped``), never a guess at what they meant.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ("LATIN_1", "MAX_SHOWN_BYTES", "bytes_as_text", "escaped", "lone_surrogate_escape", "not_utf8")

#: The charset that reads any bytes, one character per byte (``F.encode(..., LATIN_1)`` gives them back).
LATIN_1 = "ISO-8859-1"
#: How many bytes of a malformed row the errors table shows.
MAX_SHOWN_BYTES = 2000
#: A JSON ``\\uD800``-``\\uDBFF`` escape not followed by a low-surrogate escape, or a ``\\uDC00``-``\\uDFFF``
#: escape not preceded by a high one: not Unicode text (an escaped backslash before ``u`` does not count).
_LONE_SURROGATE = (r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                   r"|(?<!\\)(?:\\\\)*(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def bytes_as_text(latin1: Column) -> Column:
    """A string column read as ISO-8859-1, back to its raw bytes as a Spark string (unvalidated)."""
    return F.encode(latin1, LATIN_1).cast("string")


def not_utf8(text: Column) -> Column:
    """True where a string column's bytes are not valid UTF-8 (false for null)."""
    return F.coalesce(~F.is_valid_utf8(text), F.lit(False))


def lone_surrogate_escape(text: Column) -> Column:
    """True where JSON text holds a ``\\uD800``-``\\uDFFF`` escape without its pair (false for null)."""
    return F.coalesce(text.rlike(_LONE_SURROGATE), F.lit(False))


def escaped(text: Column) -> Column:
    """The bytes of ``text`` as printable ASCII: printable ASCII characters as they are, a backslash as
    ``\\\\``, every other byte (control characters, anything above 0x7E) as ``\\xNN``; at most MAX_SHOWN_BYTES
    bytes, then ``…``. Evaluated only for malformed rows (inside ``F.when``)."""
    data = text.cast("binary")
    shown = F.substring(data, 1, MAX_SHOWN_BYTES)

    def one(i: Column) -> Column:
        byte = F.substring(shown, i, 1)
        code = F.conv(F.hex(byte), 16, 10).cast("int")
        return (F.when(code == 92, F.lit("\\\\"))
                .when((code >= 32) & (code < 127), byte.cast("string"))
                .otherwise(F.concat(F.lit("\\x"), F.lower(F.hex(byte)))))

    body = F.array_join(F.transform(F.sequence(F.lit(1), F.greatest(F.length(shown), F.lit(1))), one), "")
    more = F.when(F.length(data) > MAX_SHOWN_BYTES, F.lit("…")).otherwise(F.lit(""))
    return F.when(data.isNull(), F.lit(None).cast("string")).when(F.length(data) == 0, F.lit("")).otherwise(
        F.concat(body, more))
