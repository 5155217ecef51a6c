"""Bucketing a Parquet snapshot in the Python workers: Spark shuffles Arrow streams, never the rows.

Spark's own path (pipeline.stages.gather) scans every input row into the JVM, converts it to a wide
union row, shuffles it by application and converts it again to Arrow for the Python workers: for 1,000
applications of 1,000 tasks (2.7 M rows) that was ~2/3 of the run's JVM CPU, plus the compiler's work on
that code (docs/pipeline.md, Performance). When every table is Parquet that Spark would read without a
cast, the workers read it themselves instead: a *scatter* task reads some row groups with pyarrow, splits
their rows by bucket (a stable hash of ``app_id``) and returns one Arrow IPC stream per (bucket, table);
Spark shuffles those few large binary values to their bucket's partition (``spark_hash.partition_keys``),
where ``engine_udf.scattered_processor`` reads them back into the tables ``fleet.bucket.process_bucket``
takes. The tables' values are exactly those Spark's reader would give; any other snapshot (CSV, JSON,
Parquet needing a cast or with partition directories) takes Spark's path.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from taskassign.fleet.snapshot_files import arrow_schema, arrow_type
from taskassign.fleet.tables import INPUT_TABLES, TableSpec
from taskassign.internals.gc_pause import gc_paused_task
from taskassign.pipeline.ipc import to_ipc
from taskassign.pipeline.read import PIECE_READ_FAILED, parquet_files

__all__ = ("SCATTERED_FIELDS", "Piece", "bucket_numbers", "plan_scatter", "read_piece", "scatter_options",
           "scatter_reader", "scattered_parts", "split_by_bucket")

ArrowBatches = Iterator[pa.RecordBatch]

#: What a scatter task returns per (bucket, table): the partition key of the bucket, the table's name,
#: the rows and their IPC stream; and one row (table null) with the task's own time in ``read_seconds``.
SCATTERED_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("key", pa.int32()), ("table", pa.string()), ("rows", pa.int64()), ("payload", pa.binary()),
    ("read_seconds", pa.float64()),
)
#: Compression of the scattered streams: Spark moves a quarter of the bytes, for ~0.3 s of lz4 in the workers
#: (1,000 x 1,000: 320 MB of rows).
_COMPRESSION = "lz4"


@dataclass(frozen=True)
class Piece:
    """Row groups of one Parquet file of one table."""

    table: str
    path: str
    row_groups: tuple[int, ...]


def _plain(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with lists' and maps' inner fields under their default names (Parquet writers name them
    differently; the values are the same)."""
    if pa.types.is_list(dtype):
        return pa.list_(_plain(dtype.value_type))
    if pa.types.is_map(dtype):
        return pa.map_(_plain(dtype.key_type), _plain(dtype.item_type))
    return dtype


def _as_is(spec: TableSpec, schema: pa.Schema) -> bool:
    """True when the file has every required column and each of its columns has exactly its spec's type
    (Spark would cast nothing; a snapshot that is not, Spark's reader reports or converts)."""
    wanted = {c.name: arrow_type(c.type) for c in spec.columns}
    return (all(c.name in schema.names for c in spec.columns if c.required)
            and all(f.name in wanted and _plain(f.type).equals(wanted[f.name]) for f in schema))


def _files(path: str) -> list[Path] | None:
    """The table's files, or None if Spark would see more than their columns (partition directories)."""
    root = Path(path)
    files = parquet_files(root)
    if root.is_dir() and any("=" in part for f in files for part in f.relative_to(root).parts[:-1]):
        return None
    return files


def plan_scatter(tables: Mapping[str, tuple[str | None, str | None]], tasks: int) -> list[tuple[Piece, ...]] | None:
    """The scatter tasks (each some row groups, about the same uncompressed bytes) for tables given as
    ``name -> (path, format)`` (path None: an absent optional table); None when a table must go through
    Spark's reader (not Parquet, a column needing a cast, files of different schemas, a file whose footer
    does not read)."""
    units: list[tuple[Piece, int]] = []
    for name, (path, fmt) in tables.items():
        if path is None:
            continue
        if fmt != "parquet":
            return None
        files = _files(path)
        if not files:
            return None
        first: pa.Schema | None = None
        for file in files:
            try:
                metadata = pq.read_metadata(file)
            except (OSError, ValueError, pa.ArrowException):
                return None  # not Parquet (empty, truncated): Spark's path names the table and file (read.py)
            schema = metadata.schema.to_arrow_schema()
            if first is None:
                if not _as_is(INPUT_TABLES[name], schema):
                    return None
                first = schema
            elif not schema.equals(first):
                return None
            units += [(Piece(name, str(file), (g,)), metadata.row_group(g).total_byte_size)
                      for g in range(metadata.num_row_groups)]
    return _pack(units, tasks)


def _pack(units: Sequence[tuple[Piece, int]], tasks: int) -> list[tuple[Piece, ...]]:
    """Consecutive row groups cut into at most ``tasks`` runs of about equal bytes; a run's row groups of
    one file become one Piece."""
    total = sum(size for _, size in units)
    share = total / max(1, tasks)
    runs: list[list[Piece]] = [[]]
    filled = 0
    for piece, size in units:
        if filled >= share * len(runs) and runs[-1]:
            runs.append([])
        last = runs[-1][-1] if runs[-1] else None
        if last is not None and (last.table, last.path) == (piece.table, piece.path):
            runs[-1][-1] = Piece(last.table, last.path, last.row_groups + piece.row_groups)
        else:
            runs[-1].append(piece)
        filled += size
    return [tuple(run) for run in runs if run]


def bucket_numbers(app_ids: pa.ChunkedArray | pa.Array, buckets: int) -> np.ndarray:
    """Each row's bucket: CRC-32 of its ``app_id`` (UTF-8) modulo ``buckets``, the same in every task and
    run; rows without an app_id go to bucket 0 (their checks reject them wherever they are)."""
    array = app_ids.combine_chunks() if isinstance(app_ids, pa.ChunkedArray) else app_ids
    encoded = pc.dictionary_encode(array)
    per_value = np.fromiter((zlib.crc32(v.encode()) % buckets for v in encoded.dictionary.to_pylist()),
                            dtype=np.int32, count=len(encoded.dictionary))
    indices = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    if len(per_value) == 0:
        return np.zeros(len(indices), dtype=np.int32)
    return np.where(indices >= 0, per_value[np.maximum(indices, 0)], 0).astype(np.int32)


def split_by_bucket(table: pa.Table, buckets: int) -> Iterator[tuple[int, pa.Table]]:
    """``table``'s rows by bucket (bucket_numbers), for the buckets that have some."""
    numbers = bucket_numbers(table.column("app_id"), buckets)
    order = np.argsort(numbers, kind="stable")
    ordered = table.take(pa.array(order, pa.int64()))
    bounds = np.searchsorted(numbers[order], np.arange(buckets + 1))
    for bucket in range(buckets):
        start, end = int(bounds[bucket]), int(bounds[bucket + 1])
        if end > start:
            yield bucket, ordered.slice(start, end - start)


def scatter_options() -> pa.ipc.IpcWriteOptions:
    """Write options of the scattered streams (made where they are used: they do not pickle)."""
    return pa.ipc.IpcWriteOptions(compression=_COMPRESSION)


def scattered_parts(
    piece: Piece, buckets: int, options: pa.ipc.IpcWriteOptions
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The piece's rows split by bucket: per bucket with rows, a SCATTERED_FIELDS row but its ``key`` (the
    part as one compressed IPC stream)."""
    for bucket, part in split_by_bucket(read_piece(piece), buckets):
        yield bucket, {"table": piece.table, "rows": part.num_rows, "payload": to_ipc(part, options)}


def read_piece(piece: Piece) -> pa.Table:
    """The piece's rows with its table's spec columns and types (absent columns null)."""
    spec = INPUT_TABLES[piece.table]
    try:
        raw = pq.ParquetFile(piece.path).read_row_groups(list(piece.row_groups))
    except (OSError, ValueError, pa.ArrowException) as exc:  # the driver names the table and file (read.py)
        raise OSError(f"{PIECE_READ_FAILED} {Path(piece.path).absolute()} : {exc}") from exc
    schema = arrow_schema(spec)
    columns = [raw.column(f.name).cast(f.type) if f.name in raw.column_names else pa.nulls(raw.num_rows, f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def scatter_reader(tasks: Sequence[tuple[Piece, ...]], keys: Sequence[int]) -> Callable[[ArrowBatches], ArrowBatches]:
    """The scatter tasks as a mapInArrow function over rows of task numbers (``id``): each task's rows as
    IPC streams per (bucket, table), keyed by the bucket's partition key (``keys[bucket]``)."""
    schema = pa.schema(SCATTERED_FIELDS)

    def read(batches: ArrowBatches) -> ArrowBatches:
        with gc_paused_task():  # the worker's collection after the task scans only its leftovers
            yield from _scatter(batches, tasks, keys, schema)

    return read


def _scatter(batches: ArrowBatches, tasks: Sequence[tuple[Piece, ...]], keys: Sequence[int],
             schema: pa.Schema) -> ArrowBatches:
    """``scatter_reader``'s work: for each task number, its pieces' rows by bucket, then its time."""
    options = scatter_options()
    for batch in batches:
        for task in batch.column("id").to_pylist():
            spent = 0.0  # the task's own time, not its waits for Spark to take the batches
            for piece in tasks[task]:
                started = time.perf_counter()
                rows = [{"key": keys[bucket], **part} for bucket, part in scattered_parts(piece, len(keys), options)]
                scattered = pa.RecordBatch.from_pylist(rows, schema=schema)
                spent += time.perf_counter() - started
                yield scattered
            yield pa.RecordBatch.from_pylist([{"key": keys[task % len(keys)], "read_seconds": spent}],
                                             schema=schema)
