"""The engine side of ``taskassign capture``: read the user's files first (a mistake in them fails before
any connection), then read the cluster, then hand back a group file's document or a fleet snapshot.

One application: ``capture_application``. Every Kafka Streams application of a cluster:
``capture_fleet``, which reports each group it cannot use with the reason and writes the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.capture.cluster import ClusterReader
from taskassign.capture.group_capture import CapturedGroup, capture_group, check_capturable
from taskassign.capture.security import read_client_settings
from taskassign.capture.snapshot import SkippedGroup, SnapshotWritten, write_snapshot
from taskassign.capture.streams_config import StreamsConfig, streams_config
from taskassign.capture.topology_text import TopologyDescription, parse_topology_description
from taskassign.errors import CaptureError, UserInputError
from taskassign.formats.group import GroupSpec, parse_group
from taskassign.formats.json_io import dump_json, read_input_text
from taskassign.formats.output_paths import OutputGuard
from taskassign.formats.properties import read_properties

__all__ = (
    "DEFAULT_TIMEOUT_S",
    "MAX_TEXT_BYTES",
    "FleetCapture",
    "capture_application",
    "capture_fleet",
    "write_group_file",
)

DEFAULT_TIMEOUT_S = 30.0
#: The largest topology text read (a describe() of thousands of nodes is far below it).
MAX_TEXT_BYTES = 16 * 1024 * 1024
TOPOLOGY_SUFFIX = ".txt"
PROPERTIES_SUFFIX = ".properties"


@dataclass(frozen=True, slots=True)
class FleetCapture:
    """A fleet capture: the snapshot written, the groups captured, and every group left out with why."""

    written: SnapshotWritten
    captured: tuple[str, ...]
    skipped: tuple[SkippedGroup, ...]


def capture_application(
    bootstrap: str,
    group: str,
    *,
    topology_file: Path | None = None,
    streams_config_file: Path | None = None,
    command_config_file: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    now_ms: Callable[[], int],
) -> CapturedGroup:
    """Capture one application (its group id is its application.id) into a group file's document."""
    topology = read_topology(topology_file) if topology_file is not None else None
    config = _streams_config(streams_config_file, group)
    settings = read_client_settings(command_config_file).kwargs if command_config_file is not None else {}
    with ClusterReader(bootstrap, timeout=timeout, settings=settings) as reader:
        return capture_group(reader, group, topology=topology, topology_source=_name(topology_file), config=config,
                             configs_source=_name(streams_config_file) or "Kafka's defaults", captured_at_ms=now_ms())


def capture_fleet(
    bootstrap: str,
    out_dir: Path,
    *,
    topology_dir: Path | None = None,
    streams_config_dir: Path | None = None,
    command_config_file: Path | None = None,
    infer_topologies: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    now_ms: Callable[[], int],
    progress: Callable[[str], None] = lambda _: None,
) -> FleetCapture:
    """Capture every Kafka Streams group the principal can read into a fleet snapshot at ``out_dir``.

    A group's topology comes from ``<topology_dir>/<application.id>.txt`` and its configs from
    ``<streams_config_dir>/<application.id>.properties``; a group without a topology file is left out unless
    ``infer_topologies`` (then its topology is read off its members' assignments).
    """
    settings = read_client_settings(command_config_file).kwargs if command_config_file is not None else {}
    skipped: list[SkippedGroup] = []
    captured: list[tuple[str, GroupSpec]] = []
    with ClusterReader(bootstrap, timeout=timeout, settings=settings) as reader:
        listings = reader.list_groups()
        for listing in listings:
            group = listing.group_id
            progress(group)
            reason = _fleet_group(reader, group, topology_dir, streams_config_dir, infer_topologies, now_ms,
                                  captured)
            if reason is not None:
                skipped.append(SkippedGroup(group, reason))
    written = write_snapshot(out_dir, captured)
    # A group read but not expressible in the snapshot is reported once, as skipped with its reason, never also
    # as captured.
    return FleetCapture(written, tuple(g for g, _ in captured if g in written.applications),
                        tuple(skipped) + tuple(written.skipped))


def _fleet_group(
    reader: ClusterReader, group: str, topology_dir: Path | None, streams_config_dir: Path | None,
    infer_topologies: bool, now_ms: Callable[[], int], captured: list[tuple[str, GroupSpec]],
) -> str | None:
    """Capture one group of a fleet into ``captured``; the reason it cannot be used, else None."""
    try:
        check_capturable(reader.describe_group(group))
        topology_file = topology_dir / f"{group}{TOPOLOGY_SUFFIX}" if topology_dir is not None else None
        if topology_file is not None and not topology_file.exists():
            topology_file = None
        if topology_file is None and not infer_topologies:
            where = f"no {group}{TOPOLOGY_SUFFIX} in {topology_dir}" if topology_dir else "no --topology-dir"
            return f"no topology given ({where}; --infer-topologies reads it off the members' assignments)"
        config_file = streams_config_dir / f"{group}{PROPERTIES_SUFFIX}" if streams_config_dir is not None else None
        if config_file is not None and not config_file.exists():
            config_file = None
        topology = read_topology(topology_file) if topology_file is not None else None
        result = capture_group(reader, group, topology=topology, topology_source=_name(topology_file),
                               config=_streams_config(config_file, group),
                               configs_source=_name(config_file) or "Kafka's defaults", captured_at_ms=now_ms())
        captured.append((group, parse_group(result.document, source=f"group {group}")))
    except CaptureError as exc:
        return str(exc)
    except UserInputError as exc:
        return f"unusable: {exc}"
    return None


def read_topology(path: Path) -> TopologyDescription:
    """A ``Topology#describe()`` text from a regular file (or ``-`` for standard input)."""
    return parse_topology_description(_read_text(path, "topology"), source=str(path))


def _streams_config(path: Path | None, group: str) -> StreamsConfig:
    properties = read_properties(path) if path is not None else None
    return streams_config(properties, application_id=group, source=str(path) if path else "")


def _read_text(path: Path, what: str) -> str:
    """A text input (``-``: standard input) through the shared safe reader, capped at MAX_TEXT_BYTES."""
    return read_input_text(path, what=f"{what} text", limit=MAX_TEXT_BYTES)


def write_group_file(document: dict[str, Any], path: Path, guard: OutputGuard | None = None) -> None:
    """Write a captured group file where ``guard`` allows it (formats.output_paths: never over a file taskassign
    did not write, unless --force; never over an input; never a directory)."""
    (guard or OutputGuard()).file(path)
    dump_json(document, path)


def _name(path: Path | None) -> str | None:
    return None if path is None else str(path)
