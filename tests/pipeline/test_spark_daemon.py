"""Local sessions' Python daemon: Spark's zips off the workers' path only where the same versions are installed."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pyspark
import pytest

from taskassign.pipeline.spark_daemon import NO_IMPORT_THREADS, PRELOAD_SWITCH, drop_zips, installed_first, preload

SPARK_LIB = Path(pyspark.__file__).parent / "python" / "lib"
SITE = str(Path(pyspark.__file__).parents[1])  # where this interpreter's pyspark is installed


def _zip(path: Path, member: str, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, text)
    return str(path)


def test_the_zips_of_the_installed_versions_leave_the_path_and_the_rest_keeps_its_order(tmp_path: Path) -> None:
    pyspark_zip = _zip(tmp_path / "lib" / "pyspark.zip", "pyspark/version.py",
                       f"__version__: str = {pyspark.__version__!r}\n")
    import py4j.version

    py4j_zip = _zip(tmp_path / "lib" / f"py4j-{py4j.version.__version__}-src.zip", "py4j/version.py",
                    f"__version__ = '{py4j.version.__version__}'\n")
    other = str(tmp_path / "mine")
    assert installed_first([other, pyspark_zip, py4j_zip, SITE]) == [other, SITE]


def test_a_zip_of_another_version_or_unreadable_stays(tmp_path: Path) -> None:
    older = _zip(tmp_path / "a" / "pyspark.zip", "pyspark/version.py", "__version__ = '3.5.0'\n")
    (tmp_path / "b").mkdir()
    broken = tmp_path / "b" / "pyspark.zip"
    broken.write_bytes(b"not a zip")
    no_version = _zip(tmp_path / "c" / "py4j-0.10.9.9-src.zip", "py4j/__init__.py", "")
    path = [older, str(broken), no_version, SITE]
    assert installed_first(path) == path


def test_without_an_installed_package_the_zip_stays(tmp_path: Path) -> None:
    pyspark_zip = _zip(tmp_path / "pyspark.zip", "pyspark/version.py", f"__version__ = {pyspark.__version__!r}\n")
    path = [pyspark_zip, str(tmp_path / "empty")]
    assert installed_first(path) == path


def test_sparks_own_zips_of_this_installation_are_dropped() -> None:
    zips = sorted(str(p) for p in SPARK_LIB.glob("*.zip"))
    assert zips, f"no zips in {SPARK_LIB}"
    assert installed_first([*zips, SITE]) == [SITE]


def test_the_test_sessions_workers_import_the_installed_pyspark(spark: Any) -> None:
    assert spark.conf.get("spark.python.daemon.module") == "taskassign.pipeline.spark_daemon"

    def origin(_: Any) -> list[str]:
        import pyspark as worker_pyspark

        zips = [entry for entry in sys.path_importer_cache if Path(entry).parent == SPARK_LIB]
        return [worker_pyspark.__file__ or "", sys.executable, repr(zips)]

    found = spark.sparkContext.parallelize([0, 1], 2).mapPartitions(origin).collect()
    assert found[0] == str(Path(pyspark.__file__)) and ".zip" not in found[0]
    assert found[1] == sys.executable
    assert found[2] == "[]"  # no importer of a dropped zip left for importlib.invalidate_caches() to refresh


def test_a_dropped_zips_importer_leaves_the_cache_and_the_rest_stays(tmp_path: Path) -> None:
    zips = sorted(str(p) for p in SPARK_LIB.glob("*.zip"))
    other = str(tmp_path / "mine")
    path = [other, *zips, SITE]
    importers: dict[str, Any] = {entry: object() for entry in path}
    kept_importers = {other: importers[other], SITE: importers[SITE]}
    drop_zips(path, importers)
    assert path == [other, SITE] and importers == kept_importers


@pytest.mark.parametrize("name", ["pyspark.zip", "py4j-0.10.9.9-src.zip"])
def test_only_sparks_zip_names_are_considered(tmp_path: Path, name: str) -> None:
    renamed = _zip(tmp_path / ("x" + name), "pyspark/version.py", f"__version__ = {pyspark.__version__!r}\n")
    assert installed_first([renamed, SITE]) == [renamed, SITE]


def test_the_test_sessions_workers_start_preloaded_and_single_threaded_blas(spark: Any) -> None:
    def seen(_: Any) -> list[str]:
        import os

        return [os.environ.get(PRELOAD_SWITCH, ""), os.environ.get("OPENBLAS_NUM_THREADS", ""),
                os.environ.get("JE_ARROW_MALLOC_CONF", "")]

    found = spark.sparkContext.parallelize([0], 1).mapPartitions(seen).collect()
    assert found == ["done", *NO_IMPORT_THREADS.values()]


def test_a_fresh_interpreter_preloads_without_starting_a_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*NO_IMPORT_THREADS, PRELOAD_SWITCH)}
    script = ("import sys; from taskassign.pipeline.spark_daemon import preload, thread_count; "
              "done = preload(); print(done, thread_count(), 'taskassign.fleet.bucket' in sys.modules, "
              "'ortools.graph.python.min_cost_flow' in sys.modules, 'pyspark.worker' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1", "True", "True", "True"]


@pytest.mark.parametrize(("environ", "kept"), [
    ({PRELOAD_SWITCH: "off"}, {PRELOAD_SWITCH: "off"}),
    ({"OPENBLAS_NUM_THREADS": "4"}, {"OPENBLAS_NUM_THREADS": "4"}),
    ({"JE_ARROW_MALLOC_CONF": "narenas:2"}, {"JE_ARROW_MALLOC_CONF": "narenas:2"}),
])
def test_nothing_is_preloaded_against_the_users_own_settings(environ: dict[str, str], kept: dict[str, str]) -> None:
    assert preload(environ) is False
    assert environ == kept  # left as it was


def test_a_thread_after_the_imports_restarts_the_daemon_without_preloading(monkeypatch: pytest.MonkeyPatch) -> None:
    import taskassign.pipeline.spark_daemon as daemon

    started: list[list[str]] = []

    class Restarted(Exception):
        pass

    def execv(path: str, args: list[str]) -> None:
        started.append([path, *args])
        raise Restarted

    monkeypatch.setattr(daemon, "preload", lambda: True)
    monkeypatch.setattr(daemon, "thread_count", lambda: 2)
    monkeypatch.setattr(daemon.os, "execv", execv)
    monkeypatch.setattr(daemon, "drop_zips", lambda path, importers: None)
    monkeypatch.delenv(PRELOAD_SWITCH, raising=False)
    with pytest.raises(Restarted):
        daemon.main()
    assert started == [[sys.executable, sys.executable, *sys.orig_argv[1:]]]
    assert os.environ[PRELOAD_SWITCH] == "off"
