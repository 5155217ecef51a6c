"""Deterministic JSON output: same document, same bytes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ("dump_json", "to_json_text")


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
