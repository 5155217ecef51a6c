"""Bucketing a Parquet snapshot on the driver of a local session, while Spark plans the run.

On a cluster the snapshot's rows are read and split by bucket in Spark tasks (pipeline.scatter), so the
reading is spread over the executors. A local session has its executors on the driver's own cores, and
there a Spark stage of scatter tasks cost more than the reading itself: its tasks, the start of the Python
workers, their first calls into pyarrow and Spark's shuffle of the streams took more wall time than
the reading (docs/performance.md). Here a thread of the driver reads and splits the same rows
(``scatter.scattered_parts``, as the scatter tasks do: the same values) into one file per bucket while the
main thread builds, plans and starts the Spark job, which runs the buckets straight from those files
(``engine_udf.bucket_file_processor``): no scatter stage, no shuffle. A bucket's task waits for its file
(``read_bucket``): the files appear together once complete, or a marker says the reading failed (its error
is raised on the driver by ``LocalScatter.wait``). Waiting for the files before starting the job would
add the job's start to the reading: the two overlap instead. The files are written under the
run's staging directory, which the buckets already share for their results (``engine_udf.stage_file``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from taskassign.pipeline.scatter import SCATTERED_FIELDS, Piece, scatter_options, scattered_parts

__all__ = ("FAILED", "LocalScatter", "bucket_file", "read_bucket", "write_bucket_files")

#: The marker a failed reading leaves in the directory, so that the buckets' tasks stop waiting.
FAILED = "_failed"
#: How often a bucket's task looks for its file.
_POLL_SECONDS = 0.01
#: Pieces read at once (``write_bucket_files``): a local run's two cores.
_READERS = 2


def bucket_file(directory: str | Path, bucket: int) -> Path:
    """The file holding bucket ``bucket``'s rows (an Arrow IPC stream of SCATTERED_FIELDS rows)."""
    return Path(directory) / f"bucket-{bucket:05d}.arrows"


def read_bucket(directory: str | Path, bucket: int, while_waiting: Callable[[], None] | None = None) -> pa.Table:
    """Bucket ``bucket``'s rows (SCATTERED_FIELDS), once the driver has written them; ``while_waiting`` runs
    once first when the file is not there yet (work the bucket would do anyway, done while the driver reads)."""
    path = bucket_file(directory, bucket)
    if while_waiting is not None and not path.exists():
        while_waiting()
    while not path.exists():
        # the marker of a failed or cancelled reading, or the staging directory gone with an abandoned run
        if (Path(directory) / FAILED).exists() or not Path(directory).is_dir():
            raise RuntimeError(f"the driver could not read the snapshot for bucket {bucket} (its error ends the run)")
        time.sleep(_POLL_SECONDS)
    return pa.ipc.open_stream(path).read_all()


def write_bucket_files(
    tasks: Sequence[tuple[Piece, ...]], buckets: int, directory: Path, cancelled: threading.Event | None = None
) -> None:
    """Every piece's rows split by bucket, one IPC stream per (bucket, table piece) appended to the bucket's
    file in piece order (at most ``_READERS`` pieces held at once, nothing for the whole snapshot); every
    bucket gets a file, empty or not, under its final name only once all are complete. ``cancelled``: stop
    before the next piece once it is set.

    The pieces are read ``_READERS`` at a time: the buckets' tasks wait for the files, so the run's cores are
    the reading's until they are complete, and pyarrow's reading, sorting and writing release the GIL."""
    schema = pa.schema(SCATTERED_FIELDS)
    options = scatter_options()
    directory.mkdir(parents=True, exist_ok=True)
    partial = [bucket_file(directory, b).with_suffix(".partial") for b in range(buckets)]
    writers = [pa.ipc.new_stream(path, schema) for path in partial]

    def parts(piece: Piece) -> list[tuple[int, dict[str, Any]]]:
        return list(scattered_parts(piece, buckets, options))

    def write(done: Future[list[tuple[int, dict[str, Any]]]]) -> None:
        for bucket, part in done.result():
            writers[bucket].write_batch(pa.RecordBatch.from_pylist([{"key": bucket, **part}], schema=schema))

    try:
        with ThreadPoolExecutor(_READERS, thread_name_prefix="taskassign-read") as pool:
            window: deque[Future[list[tuple[int, dict[str, Any]]]]] = deque()
            for piece in (piece for task in tasks for piece in task):
                if cancelled is not None and cancelled.is_set():
                    return
                window.append(pool.submit(parts, piece))
                if len(window) >= _READERS:
                    write(window.popleft())
            while window:
                if cancelled is not None and cancelled.is_set():
                    return
                write(window.popleft())
    finally:
        for writer in writers:
            writer.close()
    for bucket, path in enumerate(partial):
        path.replace(bucket_file(directory, bucket))


class LocalScatter:
    """``write_bucket_files`` in a thread of the driver, started at once; ``wait`` joins it (its error, if
    any, raised there) and returns the seconds it took: the run's reading, counted as Python time."""

    def __init__(self, tasks: Sequence[tuple[Piece, ...]], buckets: int, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)  # before any task can look for it (read_bucket)
        self._error: BaseException | None = None
        self._seconds = 0.0
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(tasks, buckets), name="taskassign-scatter",
                                        daemon=True)
        self._thread.start()

    def _run(self, tasks: Sequence[tuple[Piece, ...]], buckets: int) -> None:
        started = time.perf_counter()
        try:
            write_bucket_files(tasks, buckets, self.directory, self._cancelled)
        except BaseException as exc:  # re-raised by wait(), in the run's own thread
            self._error = exc
            (self.directory / FAILED).touch()
        else:
            if self._cancelled.is_set():  # stopped early: no bucket file will come
                (self.directory / FAILED).touch()
        self._seconds = time.perf_counter() - started

    def wait(self) -> float:
        """The seconds the files took, once they are complete."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._seconds

    def cancel(self) -> None:
        """Stop after the piece being read (a failed run), and wait for the thread to end."""
        self._cancelled.set()
        self._thread.join()
