"""docs/pipeline.md describes every table column, output column, reason code and status."""

from __future__ import annotations

import re
from pathlib import Path

from taskassign.fleet.reasons import REASON_CODES, STATUSES
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.pipeline.schemas import ASSIGNOR_COMPARISON, OUTPUT_SCHEMAS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pipeline.md").read_text()


def section(title: str) -> str:
    match = re.search(rf"^###? {re.escape(title)}\b.*?(?=^###? |\Z)", DOC, re.MULTILINE | re.DOTALL)
    assert match, f"docs/pipeline.md has no section {title!r}"
    return match.group(0)


def test_every_input_column_is_documented_with_its_type() -> None:
    for name, spec in INPUT_TABLES.items():
        text = section(name)
        for column in spec.columns:
            assert f"| `{column.name}` | {column.type} |" in text, (name, column.name)


def test_every_output_column_is_documented() -> None:
    for name, schema in {**OUTPUT_SCHEMAS, "assignor_comparison": ASSIGNOR_COMPARISON}.items():
        text = section(name)
        for field in schema.fields:
            if name == "app_metrics" and field.name not in ("app_id", "status", "reason_code", "reason", "assignor",
                                                           "error", "probing_rebalance_needed", "end_offsets_known"):
                continue  # the metric columns are taskassign.analysis.metrics', documented in docs/metrics.md
            assert f"`{field.name}`" in text, (name, field.name)


def test_every_reason_code_and_status_is_documented() -> None:
    for code in REASON_CODES:
        assert f"| `{code}` |" in DOC, code
    for status in STATUSES:
        assert f"| `{status}` |" in DOC, status
