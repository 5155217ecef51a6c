"""Local sessions' Python daemon: Spark's zips off the workers' path only where the same versions are installed."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

import pyspark
import pytest

from taskassign.pipeline.spark_daemon import drop_zips, installed_first

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
