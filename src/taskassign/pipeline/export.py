"""Applications of a snapshot as scenario files: exactly the Scenario the pipeline hands the engine.

The snapshot goes through the pipeline's own checks and stages (``run.plan``), restricted to the
requested applications (every check is per application, so the restriction changes nothing), and each
application's record through ``build_scenario``, as inside the pipeline's workers. ``taskassign assign``
on the written file therefore computes what the pipeline computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from taskassign.errors import UserInputError
from taskassign.fleet.build import build_scenario
from taskassign.pipeline.read import read_snapshot
from taskassign.pipeline.run import PipelineOptions, plan, release
from taskassign.pipeline.validate import CODE, REASON, rejected
from taskassign.scenario import Scenario

__all__ = ("ExportedApplication", "export_scenarios")


@dataclass(frozen=True)
class ExportedApplication:
    """One application: its Scenario, or why the pipeline does not assign it."""

    app_id: str
    scenario: Scenario | None
    rejection: str | None = None


def export_scenarios(
    spark: Any, input_dir: str | Path, app_ids: Sequence[str] | None = None, *, kafka_compat: bool = False
) -> dict[str, ExportedApplication]:
    """The scenario of each application in ``app_ids`` (all applications when None)."""
    tables = read_snapshot(spark, input_dir)
    if app_ids is not None:
        wanted = list(dict.fromkeys(app_ids))
        tables = {name: replace(t, df=t.df.where(F.col("app_id").isin(wanted))) for name, t in tables.items()}
    options = PipelineOptions(Path(input_dir), Path(input_dir), kafka_compat=kafka_compat)
    the_plan = plan(spark, options, tables)
    try:
        records = the_plan.inputs.drop("bucket").toArrow().to_pylist()
        rejected_rows = (rejected(the_plan.checked["applications"]).where(F.col("app_id").isNotNull())
                         .select("app_id", CODE, REASON).collect())
    finally:
        release(the_plan)
    result: dict[str, ExportedApplication] = {}
    for record in records:
        app_id = record["app_id"]
        try:
            built = build_scenario(record, kafka_compat=kafka_compat)
        except UserInputError as exc:
            result[app_id] = ExportedApplication(app_id, None, f"INVALID_STATE: {exc}")
            continue
        result[app_id] = ExportedApplication(app_id, built.scenario)
    for row in rejected_rows:
        result.setdefault(row["app_id"], ExportedApplication(row["app_id"], None, f"{row[CODE]}: {row[REASON]}"))
    for app_id in app_ids or ():
        result.setdefault(app_id, ExportedApplication(app_id, None, "not in the applications table"))
    return dict(sorted(result.items()))
