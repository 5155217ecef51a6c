"""Rows as Arrow IPC stream bytes: how the Python side hands its output tables to Spark and the driver.

Spark converts what a Python worker returns value by value (Arrow to its rows, then to Parquet), and again
when a job reads it back. The output tables hold every task id of every application, so the pipeline
returns them as bytes instead: Spark stores a few applications' rows as one binary value and the driver
reads them back with pyarrow (pipeline.assemble).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ("from_ipc", "to_ipc")


def to_ipc(table: pa.Table, options: pa.ipc.IpcWriteOptions | None = None) -> bytes:
    """``table`` as the bytes of an Arrow IPC stream (schema included; ``options``: e.g. its compression)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    payload: bytes = sink.getvalue().to_pybytes()
    return payload


def from_ipc(payload: pa.Buffer | bytes) -> pa.Table:
    """The table of one IPC stream (zero-copy over ``payload``)."""
    with pa.ipc.open_stream(payload) as reader:
        table: pa.Table = reader.read_all()
    return table
