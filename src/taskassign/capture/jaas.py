"""The ``sasl.jaas.config`` property, parsed exactly as Kafka's Java client parses it.

A client's credentials sit inside one JAAS entry::

    org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a\\"b";

Kafka's ``JaasConfig`` reads it with ``java.io.StreamTokenizer`` (with ``//`` and ``/* */`` comments on and
``-``, ``_``, ``$`` made word characters), so the grammar is that tokenizer's, quirks and all:

- words are runs of letters, digits, ``.``, ``-``, ``_``, ``$`` and characters from U+00A0 up, starting
  with a letter (or ``_``, ``$``, U+00A0+); a token starting with a digit, ``.`` or ``-digit`` is a
  number, which has no text, so ``iterations=4096`` is an error ("Value not specified") while
  ``iterations="4096"`` is fine;
- a value is quoted with ``"`` or ``'``; inside, ``\\n \\t \\r \\b \\f \\a \\v``, octal ``\\0``-``\\377`` and
  ``\\`` before any other character (that character) are escapes, and an unterminated quote ends at the end
  of its line without complaint;
- ``/`` starts a comment even alone (a bare ``/path`` is a comment, so paths must be quoted);
- keys and control flags are case-sensitive and case-insensitive respectively; a later duplicate option
  replaces the earlier one.

A client's ``sasl.jaas.config`` must hold exactly one entry (``JaasContext.loadClientContext``). Errors are
JaasErrors: ``kafka_message`` holds Java's own words, which quote the offending token, and that token may be a
secret (``username="alice" "S3cretPass";`` makes ``S3cretPass`` the key Java names); the message shown quotes
a key only when it is a login module option's name and a control flag only when it is a near miss of one.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from taskassign.errors import JaasError

__all__ = ("CONTROL_FLAGS", "JaasEntry", "JaasError", "parse_client_jaas_config", "parse_jaas_config")

CONTROL_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
#: Option names of the login modules a client uses (Kafka's PLAIN, SCRAM, OAUTHBEARER; the JDK's Krb5): a key
#: among them is a name, safe to quote; any other key may be a value that lost its name or ``=``.
OPTION_NAMES = frozenset({
    "username", "password", "tokenauth", "serviceName", "useKeyTab", "keyTab", "principal", "useTicketCache",
    "ticketCache", "storeKey", "doNotPrompt", "refreshKrb5Config", "renewTGT", "isInitiator", "debug",
    "clientId", "clientSecret", "scope", "unsecuredLoginStringClaim_sub",
})  # fmt: skip


def _key_error(key: str | None, previous: str | None) -> JaasError:
    kafka = f"Value not specified for key '{key}' in JAAS config"
    if key in OPTION_NAMES:
        return JaasError(kafka)
    after = f" (after option '{previous}')" if previous in OPTION_NAMES else ""
    return JaasError(f"Value not specified for a key in JAAS config{after}; the key is not shown, as it may be a "
                     "value that lost its name or '=' (a password, say): check the quotes and '=' signs", kafka)


def _flag_error(flag: str) -> JaasError:
    kafka = f"Invalid login module control flag '{flag}' in JAAS config"
    if difflib.get_close_matches(flag.upper(), CONTROL_FLAGS, n=1, cutoff=0.7):
        return JaasError(kafka)
    return JaasError("Invalid login module control flag in JAAS config (the word is not shown, as it may be a "
                     f"value; one of {', '.join(f.lower() for f in CONTROL_FLAGS)})", kafka)

# StreamTokenizer's token types (``ttype``): an ordinary character is its own code, these are negative.
_EOF = -1
_NUMBER = -2
_WORD = -3
_NEED_CHAR = 1 << 31  # nothing looked ahead

# Character classes, a bit set per character below 256 (everything from 256 up is a word character).
_WHITESPACE = 1
_DIGIT = 2
_ALPHA = 4
_QUOTE = 8
_COMMENT = 16


def _character_classes() -> tuple[int, ...]:
    """StreamTokenizer's default table plus JaasConfig's ``wordChars('-')``, ``('_')``, ``('$')``."""
    table = [0] * 256
    for low, high in ((ord("a"), ord("z")), (ord("A"), ord("Z")), (0xA0, 0xFF)):
        for code in range(low, high + 1):
            table[code] |= _ALPHA
    for code in range(ord(" ") + 1):
        table[code] = _WHITESPACE
    table[ord("/")] = _COMMENT
    table[ord('"')] = table[ord("'")] = _QUOTE
    for char in "0123456789.-":
        table[ord(char)] |= _DIGIT
    for char in "-_$":
        table[ord(char)] |= _ALPHA
    return tuple(table)


_CLASSES = _character_classes()
_QUOTED_ESCAPES = {"a": 0x7, "b": 0x8, "f": 0xC, "n": 0xA, "r": 0xD, "t": 0x9, "v": 0xB}


def _class_of(code: int) -> int:
    return _CLASSES[code] if code < 256 else _ALPHA


@dataclass(frozen=True)
class JaasEntry:
    """One login module entry: its class name, control flag (upper case) and options."""

    login_module: str
    control_flag: str
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __repr__(self) -> str:
        """Option names only: the values are credentials."""
        return f"JaasEntry({self.login_module!r}, {self.control_flag!r}, options={sorted(self.options)})"


def parse_client_jaas_config(text: str) -> JaasEntry:
    """The single entry of a client's ``sasl.jaas.config``, as ``JaasContext.loadClientContext`` demands."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise JaasError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]


def parse_jaas_config(text: str) -> tuple[JaasEntry, ...]:
    """Every entry of a JAAS configuration text, as Kafka's ``JaasConfig`` parses it."""
    tokens = _Tokenizer(text)
    entries = []
    while tokens.next() != _EOF:
        entries.append(_entry(tokens))
    if not entries:
        raise JaasError("Login module not specified in JAAS config")
    return tuple(entries)


def _entry(tokens: _Tokenizer) -> JaasEntry:
    """One ``<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;`` from the current token on."""
    login_module = tokens.text
    if tokens.next() == _EOF:
        raise JaasError("Login module control flag not specified in JAAS config")
    flag = tokens.text
    if flag is None:
        raise JaasError("Login module control flag is not available in the JAAS config")
    if flag.upper() not in CONTROL_FLAGS:
        raise _flag_error(flag)
    options: dict[str, str] = {}
    previous: str | None = None
    while tokens.next() != _EOF and tokens.type != ord(";"):
        key = tokens.text
        if tokens.next() != ord("=") or tokens.next() == _EOF or tokens.text is None:
            raise _key_error(key, previous)
        options["null" if key is None else key] = tokens.text  # Java's HashMap takes a null key
        previous = key
    if tokens.type != ord(";"):
        raise JaasError("JAAS config entry not terminated by semi-colon")
    if not login_module:  # javax.security.auth.login.AppConfigurationEntry refuses it
        raise JaasError("Login module name not specified in JAAS config")
    return JaasEntry(login_module, flag.upper(), MappingProxyType(options))


class _Tokenizer:
    """The part of ``java.io.StreamTokenizer.nextToken`` that JaasConfig's settings reach.

    ``type`` is the last token's type (``_WORD``, ``_NUMBER``, ``_EOF``, a quote character or an ordinary
    character's code) and ``text`` its text (``sval``: None unless a word or a quoted string).
    """

    def __init__(self, text: str) -> None:
        self.source = text
        self.position = 0
        self.peek = _NEED_CHAR
        self.type = _EOF
        self.text: str | None = None

    def _read(self) -> int:
        if self.position >= len(self.source):
            return -1
        self.position += 1
        return ord(self.source[self.position - 1])

    def next(self) -> int:
        """Advance to the next token and return its type."""
        while True:
            found = self._token()
            if found is not None:
                self.type = found
                return found

    def _token(self) -> int | None:
        """The next token's type, or None after skipping a comment (then the caller asks again)."""
        self.text = None
        code = self.peek if 0 <= self.peek < _NEED_CHAR else self._read()
        self.peek = _NEED_CHAR
        if code < 0:
            return _EOF
        kind = _class_of(code)
        while kind & _WHITESPACE:
            code = self._read()
            if code < 0:
                return _EOF
            kind = _class_of(code)
        if kind & _DIGIT:
            return self._number(code)
        if kind & _ALPHA:
            return self._word(code)
        if kind & _QUOTE:
            return self._quoted(code)
        if code == ord("/"):
            return self._after_slash()
        return code  # an ordinary character: '=', ';', ...

    def _number(self, code: int) -> int:
        """A number token (its value is never used: a number has no ``text``)."""
        if code == ord("-"):
            code = self._read()
            if code != ord(".") and not ord("0") <= code <= ord("9"):
                self.peek = code
                return ord("-")
        seen_dot = False
        while (code == ord(".") and not seen_dot) or ord("0") <= code <= ord("9"):
            seen_dot = seen_dot or code == ord(".")
            code = self._read()
        self.peek = code
        return _NUMBER

    def _word(self, code: int) -> int:
        chars = []
        while code >= 0 and _class_of(code) & (_ALPHA | _DIGIT):
            chars.append(chr(code))
            code = self._read()
        self.peek = code
        self.text = "".join(chars)
        return _WORD

    def _quoted(self, quote: int) -> int:
        """A string in ``quote``s; it also ends, unterminated, at a line end or the end of the text."""
        chars = []
        code = self._read()
        while code >= 0 and code != quote and code not in (0xA, 0xD):
            if code == ord("\\"):
                value, code = self._escape()
            else:
                value, code = code, self._read()
            chars.append(chr(value) if value >= 0 else "\uffff")  # Java's (char) -1 at the end
        self.peek = _NEED_CHAR if code == quote else code
        self.text = "".join(chars)
        return quote

    def _escape(self) -> tuple[int, int]:
        """After a backslash in a quoted string: (the character it stands for, the next code read)."""
        code = self._read()
        if not ord("0") <= code <= ord("7"):
            escaped = _QUOTED_ESCAPES.get(chr(code), code) if code >= 0 else code
            return escaped, self._read()
        first = code
        value = code - ord("0")
        following = self._read()
        if not ord("0") <= following <= ord("7"):
            return value, following
        value = (value << 3) + following - ord("0")
        following = self._read()
        if ord("0") <= following <= ord("7") and first <= ord("3"):
            return (value << 3) + following - ord("0"), self._read()
        return value, following

    def _after_slash(self) -> int | None:
        """``/*...*/`` and ``//...`` are comments; so is a lone ``/`` (the default comment character)."""
        if self._read() == ord("*"):
            return self._skip_block_comment()
        # Java reads on from the character after the one that followed the slash, even for a lone
        # slash: "/" then a line end swallows the next line too.
        self.peek = self._skip_line(self._read())
        return None

    def _skip_line(self, code: int) -> int:
        """Skip to the end of the line; returns the line end (or -1), which the next token starts from."""
        while code >= 0 and code not in (0xA, 0xD):
            code = self._read()
        return code

    def _skip_block_comment(self) -> int | None:
        previous = 0
        while True:
            code = self._read()
            if code == ord("/") and previous == ord("*"):
                return None
            if code == 0xD:
                code = self._read()
                if code == 0xA:
                    code = self._read()
            elif code == 0xA:
                code = self._read()
            if code < 0:
                return _EOF
            previous = code
