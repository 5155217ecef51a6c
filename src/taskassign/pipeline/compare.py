"""A comparison run's outputs (``pipeline run --assignor A,B``): every assignor's pass assembled as a single
run's, then combined into the same tables with an ``assignor`` column, plus the fleet comparison.

Each table keeps its single-run schema; ``app_metrics`` and ``needs_attention`` have an ``assignor`` column of
their own (set to the name as given to ``--assignor``, for rejected applications too), every other table gets
one appended. Rows are ordered by the table's keys, then the assignor, so one application's rows under every
assignor sit together. ``assignor_comparison`` (analysis.fleet_comparison) says, per metric, on how many
applications each assignor is best and by how much it differs from the first.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema

from taskassign.analysis.attention import DEFAULT_ATTENTION
from taskassign.analysis.fleet_comparison import compare_assignors
from taskassign.fleet import reasons
from taskassign.pipeline.assemble import (
    OUTPUT_FILE,
    SORT_KEYS,
    Assembled,
    assemble_outputs,
    sorted_table,
    write_table,
)
from taskassign.pipeline.schemas import ASSIGNOR_COLUMN, ASSIGNOR_COMPARISON, OUTPUT_SCHEMAS

__all__ = ("COMPARISON_TABLE", "Comparison", "assemble_comparison", "comparison_table")

COMPARISON_TABLE = "assignor_comparison"
#: Where one assignor's pass is assembled before the tables are combined (removed afterwards).
_PASS = "_assignor-"


@dataclass(frozen=True)
class Comparison:
    """Each assignor's pass (in the order given) and the rows written per combined table."""

    passes: Mapping[str, Assembled]
    written: Mapping[str, int]


def assemble_comparison(
    staged: Mapping[str, Path], staging: Path, attention: int = DEFAULT_ATTENTION
) -> Comparison:
    """Write the combined output tables and ``assignor_comparison`` into ``staging`` from each assignor's
    staged results (``staged``: assignor -> its pass's PROCESSED directory, the first the baseline)."""
    passes: dict[str, Assembled] = {}
    for position, (assignor, processed) in enumerate(staged.items()):
        passes[assignor] = assemble_outputs(processed, staging / f"{_PASS}{position}", attention)
    written: dict[str, int] = {}
    for name in OUTPUT_SCHEMAS:
        parts = [_tagged(pq.read_table(staging / f"{_PASS}{position}" / name / OUTPUT_FILE), assignor)
                 for position, assignor in enumerate(staged)]
        combined = pa.concat_tables(parts)
        if name in SORT_KEYS:
            combined = sorted_table(combined, (*SORT_KEYS[name], ASSIGNOR_COLUMN))
        written[name] = write_table(combined, staging / name)
    for position in range(len(staged)):
        shutil.rmtree(staging / f"{_PASS}{position}")
    written[COMPARISON_TABLE] = write_table(comparison_table(passes), staging / COMPARISON_TABLE)
    return Comparison(passes, written)


def comparison_table(passes: Mapping[str, Assembled]) -> pa.Table:
    """analysis.fleet_comparison over the applications each pass ran (every status but REJECTED)."""
    metrics: dict[str, dict[str, dict[str, Any]]] = {}
    for assignor, assembled in passes.items():
        apps = assembled.apps
        ran = apps.filter(pc.not_equal(apps["status"], reasons.STATUS_REJECTED)).to_pylist()
        metrics[assignor] = {row["app_id"]: row for row in ran}
    rows = [row.to_dict() for row in compare_assignors(metrics)]
    return pa.Table.from_pylist(rows, schema=to_arrow_schema(ASSIGNOR_COMPARISON))


def _tagged(table: pa.Table, assignor: str) -> pa.Table:
    """``table`` with its ``assignor`` column (its own, or appended) set to ``assignor`` on every row."""
    column = pa.array([assignor] * table.num_rows, pa.string())
    if ASSIGNOR_COLUMN in table.column_names:
        return table.set_column(table.column_names.index(ASSIGNOR_COLUMN), ASSIGNOR_COLUMN, column)
    return table.append_column(ASSIGNOR_COLUMN, column)
