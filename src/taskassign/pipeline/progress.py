"""How many applications a run has finished, for its progress bar: the buckets count the applications rows
they return into a Spark accumulator, which reaches the driver as each bucket's task ends (so the count moves
a bucket at a time). Spark Connect sessions have no accumulators: there the count is unknown (None).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from taskassign.pipeline.schemas import KIND_APP

__all__ = ("ApplicationCounter", "classic_context")

ArrowBatches = Iterator[pa.RecordBatch]


def classic_context(spark: Any) -> Any | None:
    """The SparkContext of a classic session; None for Spark Connect (which has none on the client). A classic
    session's class lives in ``pyspark.sql.session`` (Spark 4: also ``pyspark.sql.classic``), Spark Connect's
    in ``pyspark.sql.connect``."""
    if "connect" in type(spark).__module__.split("."):
        return None
    return getattr(spark, "sparkContext", None)


class ApplicationCounter:
    """Applications done out of ``total`` (set by the run once it has counted the applications rows, times
    the assignors of a comparison run)."""

    def __init__(self, spark: Any) -> None:
        context = classic_context(spark)
        self._accumulator = context.accumulator(0) if context is not None else None
        self.total: int | None = None

    def done(self) -> int | None:
        """Applications the finished buckets returned, or None when this session cannot count them."""
        return None if self._accumulator is None else int(self._accumulator.value)

    def row_counter(self) -> Callable[[ArrowBatches], ArrowBatches] | None:
        """A pass-through for a bucket's PROCESSED rows that adds the applications rows among them to the
        count (run in the Python workers; it holds the accumulator only); None when this session cannot count."""
        accumulator = self._accumulator
        if accumulator is None:
            return None

        def counted(batches: ArrowBatches) -> ArrowBatches:
            for batch in batches:
                apps = pc.sum(pc.if_else(pc.equal(batch.column("kind"), KIND_APP), batch.column("rows"), 0)).as_py()
                accumulator.add(int(apps or 0))
                yield batch

        return counted
