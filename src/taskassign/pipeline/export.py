"""Applications of a snapshot as scenario files: exactly the Scenario the pipeline hands the engine.

The requested applications' rows go through the pipeline's own gathering and ``fleet.bucket`` (every
check and derivation is per application, so the restriction changes nothing), up to the engine's input,
and each record through ``build_scenario``, as inside the pipeline's workers. ``taskassign assign`` on
the written file therefore computes what the pipeline computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from taskassign.errors import UserInputError
from taskassign.fleet.bucket import process_bucket
from taskassign.fleet.build import build_scenario
from taskassign.formats.scenario import Scenario
from taskassign.pipeline import stages
from taskassign.pipeline.engine_udf import split_tables
from taskassign.pipeline.read import read_snapshot, unreadable_file

__all__ = ("ExportedApplication", "export_scenarios")


@dataclass(frozen=True)
class ExportedApplication:
    """One application: its Scenario, or why the pipeline does not assign it."""

    app_id: str
    scenario: Scenario | None
    rejection: str | None = None


def export_scenarios(
    spark: Any, input_dir: str | Path, app_ids: Sequence[str] | None = None, *, kafka_compat: bool = False,
    allow_plugins: bool = False,
) -> dict[str, ExportedApplication]:
    """The scenario of each application in ``app_ids`` (all applications when None), computed on the
    driver: meant for a few applications, not a whole large fleet. ``allow_plugins``: as the run's option
    (checking an application resolves its assignor, which for a plug-in means importing it)."""
    snapshot = read_snapshot(spark, input_dir)
    tables = {name: t.df for name, t in snapshot.items()}
    if app_ids is not None:
        wanted = list(dict.fromkeys(app_ids))
        tables = {name: df.where(F.col("app_id").isin(wanted)) for name, df in tables.items()}
    try:
        gathered = stages.gather(tables, None).toArrow()
    except Exception as exc:
        unreadable = unreadable_file(exc, {name: (t.path, t.format) for name, t in snapshot.items()})
        if unreadable is not None:
            raise unreadable from None
        raise
    bucket = process_bucket(split_tables(gathered), kafka_compat=kafka_compat, run_engine=False,
                            allow_plugins=allow_plugins)
    result: dict[str, ExportedApplication] = {}
    for app_id, record in bucket.inputs.items():
        try:
            built = build_scenario(record, kafka_compat=kafka_compat)
        except UserInputError as exc:
            result[app_id] = ExportedApplication(app_id, None, f"INVALID_STATE: {exc}")
            continue
        result[app_id] = ExportedApplication(app_id, built.scenario)
    for rejected in bucket.results:
        app_id = rejected["app_id"]
        result.setdefault(app_id, ExportedApplication(app_id, None, f"{rejected['reason_code']}: {rejected['reason']}"))
    for app_id in app_ids or ():
        result.setdefault(app_id, ExportedApplication(app_id, None, "not in the applications table"))
    return dict(sorted(result.items()))
