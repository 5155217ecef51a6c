"""Spark's Python daemon for local sessions, importing the installed pyspark and py4j instead of Spark's zips.

Spark starts its Python daemon and workers with ``$SPARK_HOME/python/lib/pyspark.zip`` and py4j's source zip
first on PYTHONPATH. Python keeps no compiled bytecode for modules imported from a zip, so the daemon and every
worker it forks compile pyspark's modules from source at each start: ~0.8 s of CPU for the daemon and again
for each worker's ``pyspark.worker``, all before a local run's first bucket (docs/pipeline.md, Performance).
A pip-installed pyspark ships those zips inside the very package the driver imported; where this interpreter
has pyspark (and py4j) installed at the zips' own versions, this daemon takes the zips off ``sys.path`` and runs
Spark's own daemon (``pyspark.daemon.manager``), whose workers then import the installed packages with their
bytecode caches. Where a version differs, or a zip cannot be read, that zip stays where Spark put it.
``session.build_session`` names this module (``spark.python.daemon.module``) for local masters only, whose
workers run the driver's own interpreter; the daemon imports nothing else before it forks (pyarrow and pandas
start threads on import, which a fork must not inherit).
"""

from __future__ import annotations

import re
import sys
import zipfile
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

__all__ = ("drop_zips", "installed_first", "main")

#: ``__version__ = "4.3.0"`` (optionally annotated) in a package's version module.
_VERSION = re.compile(r"""^__version__(?:\s*:\s*str)?\s*=\s*["']([^"']+)["']""", re.MULTILINE)
#: Spark's zips on a worker's path: the package each holds, and its version module inside the zip.
_ZIPS = {"pyspark.zip": ("pyspark", "pyspark/version.py"), "py4j": ("py4j", "py4j/version.py")}


def _version(text: str) -> str | None:
    found = _VERSION.search(text)
    return found.group(1) if found else None


def _zip_package(entry: str) -> tuple[str, str] | None:
    """The package a Spark zip on the path holds and its version module's name inside; None for any other entry."""
    name = Path(entry).name
    if name == "pyspark.zip":
        return _ZIPS["pyspark.zip"]
    if name.startswith("py4j-") and name.endswith("-src.zip"):
        return _ZIPS["py4j"]
    return None


def _zip_version(entry: str, member: str) -> str | None:
    try:
        with zipfile.ZipFile(entry) as archive:
            return _version(archive.read(member).decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def _installed_version(package: str, path: list[str]) -> str | None:
    """The version of ``package`` as ``path`` (without Spark's zips) would import it, read without importing it
    (``PathFinder`` searches ``path`` only, whatever this process has imported)."""
    try:
        spec = PathFinder.find_spec(package, path)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return None
    try:
        return _version((Path(spec.origin).parent / "version.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def installed_first(path: list[str]) -> list[str]:
    """``path`` without those Spark zips whose package is installed elsewhere on it at the zip's own version."""
    zips = {entry: found for entry in path if (found := _zip_package(entry)) is not None}
    rest = [entry for entry in path if entry not in zips]
    dropped = {entry for entry, (package, member) in zips.items()
               if (version := _zip_version(entry, member)) is not None
               and _installed_version(package, rest) == version}
    return [entry for entry in path if entry not in dropped]


def drop_zips(path: list[str], importers: dict[str, Any]) -> None:
    """``installed_first`` on ``path`` in place, and the dropped zips' importers out of ``importers``
    (``sys.path_importer_cache``): Python made one for each zip while it looked for this module, and
    ``importlib.invalidate_caches()``, which Spark's worker calls as it sets up a task's files, has every cached
    zip importer read its zip's directory again (~8 ms of CPU for pyspark.zip each time)."""
    kept = installed_first(path)
    for entry in path:
        if entry not in kept:
            importers.pop(entry, None)
    path[:] = kept


def main() -> None:
    drop_zips(sys.path, sys.path_importer_cache)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
