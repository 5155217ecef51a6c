"""The bridge's bearer token read from its file (``serve --token-file``, ``approve --token-file``), with errors
that name the file and never show what it holds (a decoding error's text would quote the token's bytes); and
URLs as messages show them, without the ``user:password@`` a URL may carry."""

from __future__ import annotations

import re
from pathlib import Path

from taskassign.errors import UserInputError

__all__ = ("read_token_file", "shown_url")

_USER_INFO = re.compile(r"(?<=//)[^/?#@]*@")


def read_token_file(path: Path) -> str:
    """The token in ``path`` (surrounding white space removed); UserInputError naming the file otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read the token file ({exc.strerror})") from None
    try:
        token: str | None = data.decode("utf-8").strip()
    except UnicodeDecodeError:  # raised below, outside the handler: the decode error (its bytes) is no context
        token = None
    if token is None:
        raise UserInputError(f"{path}: the token file is not UTF-8 text")
    if not token:
        raise UserInputError(f"{path}: the token file is empty")
    return token


def shown_url(url: str) -> str:
    """``url`` with any user information (``user:password@``) replaced by ``***@``."""
    return _USER_INFO.sub("***@", url)
