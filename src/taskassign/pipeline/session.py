"""The one place a SparkSession is made: local (default ``local[*]``), a cluster (``master``) or Spark
Connect (``remote``), configured the same way everywhere.

Python workers run this interpreter (``PYSPARK_PYTHON``), Spark binds to 127.0.0.1 unless told
otherwise, the UI and console progress bars are off (the CLI shows its own progress), the session
time zone is UTC, and shuffles use few partitions (fleets are many small groups, not big data).
When the workers are not in this process's environment (a cluster or Spark Connect), the taskassign
package is shipped to them as a zip, so they run exactly the driver's code.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError

__all__ = ("BUCKETS_CONF", "DEFAULT_MASTER", "build_session", "command_session", "is_connect", "is_local",
           "package_zip")

DEFAULT_MASTER = "local[*]"
#: Session setting holding the default number of buckets (partitions of applications, Python calls).
BUCKETS_CONF = "spark.taskassign.buckets"
_CLUSTER_BUCKETS = 32
#: Locally: buckets per core. Many small buckets balance a fleet of mixed sizes over the cores (a bucket
#: costs a Spark task and a Python call, milliseconds): 10,000 applications of mixed sizes on 2 cores took
#: 132 s with 4 buckets per core, 106 s with 16.
_BUCKETS_PER_CORE = 16
_BASE_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # The one shuffle (by app_id) makes exactly the run's buckets; adaptive execution would re-plan them.
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.pythonUDF.arrow.enabled": "true",
    # No byte limit on the Arrow batches sent to Python (maxRecordsPerBatch still bounds them): with a
    # limit, Spark measures the batch after every row, which on the gathered rows' wide schema costs more
    # than writing the rows (the exact Int.MaxValue switches the check off).
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    "spark.python.worker.reuse": "true",
}


_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
# A task that fails (a damaged snapshot file, say) fails the job, whose exception carries the task's error:
# the run reports it once (an unreadable file as an input error naming it), not as stack traces per attempt.
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasksets.name = org.apache.spark.scheduler.TaskSetManager
logger.tasksets.level = off
logger.writer.name = org.apache.spark.sql.execution.datasources.FileFormatWriter
logger.writer.level = off
"""


#: HotSpot's optimising compiler (C2) starts on a method after 5,000 calls by default. A pipeline run is
#: short and goes through much Spark code once (readers, generated code, writers): in paired runs of 1,000
#: applications x 1,000 tasks on 2 cores, the compiler threads took 26-30 s of CPU next to ~19 s for Spark's
#: tasks, CPU the Python workers then lacked. Ten times the thresholds leave C2 to the really hot code: the
#: compiler threads took 17-18 s and the tasks no longer (docs/pipeline.md, Performance).
_JIT_OPTIONS = ("-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=20000",
                "-XX:Tier4CompileThreshold=60000", "-XX:Tier4BackEdgeThreshold=400000")


def _java_options() -> str:
    """The JVMs' options: a quiet log and the compiler thresholds of a short-lived JVM."""
    return " ".join((_quiet_logging(), *_JIT_OPTIONS))


def _quiet_logging() -> str:
    """JVM options that keep Spark's log at ERROR: the CLI shows its own progress and summary."""
    path = Path(tempfile.gettempdir()) / "taskassign-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        path.write_text(_LOG4J2)
    return f"-Dlog4j2.configurationFile=file:{path}"


def _default_parallelism(master: str) -> int:
    if master.startswith("local[") and master.endswith("]"):
        inner = master[len("local["):-1].split(",")[0]
        if inner == "*":
            return os.cpu_count() or 1
        if inner.isdigit():
            return int(inner)
    return 8


def build_session(
    master: str | None = None,
    remote: str | None = None,
    *,
    app_name: str = "taskassign-pipeline",
    conf: Mapping[str, str] | None = None,
    driver_memory: str = "3g",
) -> Any:
    """A SparkSession for the pipeline. ``remote`` (``sc://host:port``) uses Spark Connect; otherwise
    ``master`` (default ``local[*]``). ``conf`` entries win over the defaults."""
    if master and remote:
        raise UserInputError("give either a master URL or a Spark Connect remote, not both")
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - depends on the installation
        raise UserInputError("the pipeline needs pyspark: pip install 'taskassign[spark]'") from None
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings = dict(_BASE_CONF)
    if remote:
        if not remote.startswith("sc://"):
            raise UserInputError(f"Spark Connect remote must look like sc://host:port, got {remote!r}")
        builder = SparkSession.builder.remote(remote)
        # The server owns the cluster; only session-level SQL settings apply to a Connect session.
        settings = {k: v for k, v in settings.items() if k.startswith("spark.sql.")}
        settings[BUCKETS_CONF] = str(_CLUSTER_BUCKETS)
    else:
        resolved = master or DEFAULT_MASTER
        parallelism = _default_parallelism(resolved)
        settings.update({
            BUCKETS_CONF: str(_BUCKETS_PER_CORE * parallelism if resolved.startswith("local") else _CLUSTER_BUCKETS),
            "spark.sql.shuffle.partitions": str(max(2, 2 * parallelism)),
            "spark.default.parallelism": str(max(2, 2 * parallelism)),
            "spark.driver.memory": driver_memory,
            "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
            "spark.driver.extraJavaOptions": _java_options(),
            "spark.executor.extraJavaOptions": _java_options(),
        })
        if resolved.startswith("local"):  # workers run this interpreter: its installed pyspark (spark_daemon)
            settings["spark.python.daemon.module"] = "taskassign.pipeline.spark_daemon"
        builder = SparkSession.builder.master(resolved)
    settings.update(conf or {})
    builder = builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    if remote or not (master or DEFAULT_MASTER).startswith("local"):
        _ship_package(spark)
    return spark


def is_connect(spark: Any) -> bool:
    """True for a Spark Connect session (no SparkContext on this side)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def is_local(spark: Any) -> bool:
    """True for a classic session whose executors are this process's machine (a ``local`` master)."""
    return not is_connect(spark) and str(spark.sparkContext.master).startswith("local")


def package_zip(directory: str | Path) -> Path:
    """Zip the installed taskassign package (sources only) into ``directory``; returns the zip's path."""
    root = Path(__file__).resolve().parents[1]  # the taskassign package this module belongs to
    target = Path(directory) / "taskassign.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
                zf.write(path, Path("taskassign") / path.relative_to(root))
    return target


def _ship_package(spark: Any) -> None:
    """Make the driver's taskassign importable on workers that do not share this process's path."""
    workdir = Path(tempfile.mkdtemp(prefix="taskassign-ship-"))
    # Executors fetch added files from the driver for the session's lifetime: keep the zip until exit.
    atexit.register(shutil.rmtree, workdir, True)
    archive = package_zip(workdir)
    if is_connect(spark):
        spark.addArtifacts(str(archive), pyfile=True)
    else:
        spark.sparkContext.addPyFile(str(archive))


@contextmanager
def command_session(master: str | None, remote: str | None, conf: dict[str, str] | None = None) -> Iterator[Any]:
    """A session for one command, stopped afterwards unless it was already running in this process
    (an embedding program's or a test's session is left alone)."""
    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession() if remote is None else None
    spark = build_session(master, remote, conf=conf)
    try:
        yield spark
    finally:
        if existing is None:
            spark.stop()
