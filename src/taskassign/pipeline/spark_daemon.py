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
workers run the driver's own interpreter.

The daemon also imports what every worker would import at its first task (``preload``): Spark's worker, the
pipeline's modules, pandas, the default assignor and OR-Tools, once, instead of once in each worker while the
driver reads the snapshot on the same cores (docs/pipeline.md, Performance). Spark's own daemon imports nothing
before it forks because numpy and pyarrow start threads on import, and a forked child inherits none of them
(nor any lock they held). Here they start none: OpenBLAS is told to use one thread and pyarrow's jemalloc to run
no background thread (a local run's workers already use one core each). Where the user set either differently,
or the process's threads cannot be counted (no ``/proc``), nothing is preloaded; and should a thread exist after
the imports all the same, the daemon starts again without preloading (``execv``: the same process, which has told
Spark nothing yet) rather than fork it.
"""

from __future__ import annotations

import gc
import os
import re
import sys
import zipfile
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

__all__ = ("drop_zips", "installed_first", "main", "preload", "thread_count")

#: ``__version__ = "4.3.0"`` (optionally annotated) in a package's version module.
_VERSION = re.compile(r"""^__version__(?:\s*:\s*str)?\s*=\s*["']([^"']+)["']""", re.MULTILINE)
#: Spark's zips on a worker's path: the package each holds, and its version module inside the zip.
_ZIPS = {"pyspark.zip": ("pyspark", "pyspark/version.py"), "py4j": ("py4j", "py4j/version.py")}
#: Settings under which importing numpy and pyarrow starts no thread: OpenBLAS's pool of one thread is the
#: caller's, and jemalloc (pyarrow's allocator) then purges in the threads that allocate.
NO_IMPORT_THREADS = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
#: "off" in the daemon's environment: preload nothing (the daemon sets it itself before starting again); the
#: daemon sets "done" once it has preloaded.
PRELOAD_SWITCH = "TASKASSIGN_DAEMON_PRELOAD"
_THREADS = Path("/proc/self/task")


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


def thread_count() -> int | None:
    """This process's threads, native ones included; None where the system does not list them."""
    try:
        return len(os.listdir(_THREADS))
    except OSError:
        return None


def preload(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Import what a worker's first task imports, unless the switch is off, threads cannot be counted, or the
    user's own setting of ``NO_IMPORT_THREADS`` differs (the environment is then left as it is); those settings are
    made first. True if the modules were imported."""
    if environ.get(PRELOAD_SWITCH) == "off" or thread_count() is None:
        return False
    if any(environ.get(name, value) != value for name, value in NO_IMPORT_THREADS.items()):
        return False
    environ.update(NO_IMPORT_THREADS)
    import pyspark.worker  # noqa: F401

    from taskassign.pipeline import engine_udf

    engine_udf.warm_up()
    return True


def main() -> None:
    drop_zips(sys.path, sys.path_importer_cache)
    if preload():
        if thread_count() != 1:  # a thread the settings did not prevent: start again, forking nothing yet
            os.environ[PRELOAD_SWITCH] = "off"
            os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
        os.environ[PRELOAD_SWITCH] = "done"  # (the workers' environment tells that they started preloaded)
        gc.freeze()  # the workers' collections skip the imported modules' objects (and leave their pages shared)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
