"""``taskassign capture --watch``: one group followed as it rebalances, every new assignment recorded as a file
of a history directory, without joining the group (each poll is a fresh read-only connection).

* A streams group: StreamsGroupDescribe every ``interval`` seconds; each new target-assignment epoch is
  completed (group configs, topic partitions) and written as ``<group>-epoch-<NNNNNNNNNN>.json``. Epochs that
  begin and end between two polls are not seen (``taskassign rebalance`` on the history searches for them).
* A classic group: DescribeGroups every ``interval`` seconds; its generation id is not in the answer, so a new
  generation is recognised by a Stable group whose members or assignment bytes changed, then captured as
  ``capture --group`` does and written as ``<group>-gen-<NNNN>.json`` (a counter of the generations seen).

A first read that fails (no such group, no streams protocol, a bad file) ends the watch with its error; once
watching, an unreachable broker or a group that is empty or rebalancing is read again at the next poll.

Files are written atomically (a temp file, then a rename): stopping the watch (Ctrl-C, ``--until``) keeps every
file written so far, and none half-written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from taskassign.api.capture import capture_application
from taskassign.api.streams_capture import capture_streams_application
from taskassign.capture.cluster import ClusterReader
from taskassign.capture.group_capture import REBALANCING_STATES, check_capturable
from taskassign.capture.security import read_client_settings
from taskassign.capture.streams_client import StreamsClient
from taskassign.capture.streams_group_capture import complete_streams_group, describe_streams_group
from taskassign.errors import ClusterUnreachableError, GroupNotCapturableError, UserInputError
from taskassign.formats.json_io import dump_json
from taskassign.formats.output_paths import OutputGuard, check_not_input

__all__ = ("WatchLimit", "WatchResult", "parse_until", "watch_group")

_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class WatchLimit:
    """Stop after ``count`` recorded assignments, or after ``seconds``; neither: until interrupted."""

    count: int | None = None
    seconds: float | None = None


def parse_until(text: str | None) -> WatchLimit:
    """``--until``: a number of recorded assignments (``5``) or a duration (``90s``, ``10m``, ``2h``)."""
    if text is None:
        return WatchLimit()
    if text.strip().isdigit() and int(text) > 0:
        return WatchLimit(count=int(text))
    match = _DURATION.match(text)
    if match is None:
        raise UserInputError(f"--until {text!r}: expected a number of assignments to record (5) or a duration "
                             "(90s, 10m, 2h)")
    return WatchLimit(seconds=float(match.group(1)) * _UNITS[match.group(2)])


@dataclass
class WatchResult:
    protocol: str
    written: list[Path] = field(default_factory=list)
    interrupted: bool = False
    polls: int = 0


def watch_group(
    bootstrap: str,
    group: str,
    out_dir: Path,
    *,
    protocol: str = "auto",
    limit: WatchLimit,
    interval: float = 1.0,
    timeout: float = 30.0,
    command_config_file: Path | None = None,
    topology_file: Path | None = None,
    streams_config_file: Path | None = None,
    now_ms: Callable[[], int],
    on_written: Callable[[Path], None] = lambda _: None,
    guard: OutputGuard | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> WatchResult:
    """Record every new assignment of ``group`` into ``out_dir`` until ``limit`` or Ctrl-C."""
    outputs = guard or OutputGuard()
    check_not_input(out_dir, outputs.inputs)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserInputError(f"{out_dir}: exists and is not a directory (--watch writes a history directory)")
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = dict(read_client_settings(command_config_file).kwargs) if command_config_file is not None else {}
    first = capture_streams_application(bootstrap, group, protocol=protocol, command_config_file=command_config_file,
                                        timeout=timeout, now_ms=now_ms)
    result = WatchResult("streams" if first is not None else "classic")
    start = clock()
    last: object = None

    def write(name: str, document: dict[str, object]) -> None:
        path = outputs.file(out_dir / name)
        dump_json(document, path)
        result.written.append(path)
        on_written(path)

    def done() -> bool:
        return ((limit.count is not None and len(result.written) >= limit.count)
                or (limit.seconds is not None and clock() - start >= limit.seconds))

    try:
        if first is not None:
            capture = first.document["capture"]
            assert isinstance(capture, dict)
            epoch = int(str(capture["assignmentEpoch"]))
            last = epoch
            write(f"{group}-epoch-{epoch:010d}.json", first.document)
        else:  # a classic group: one that does not exist or is not Kafka Streams ends the watch at once
            with ClusterReader(bootstrap, timeout=timeout, settings=settings) as reader:
                described = reader.describe_group(group)
            if described.state not in REBALANCING_STATES:
                check_capturable(described)
        while not done():
            sleep(interval)
            result.polls += 1
            try:
                if result.protocol == "streams":
                    last = _poll_streams(bootstrap, group, settings, timeout, now_ms, last, write)
                else:
                    last = _poll_classic(bootstrap, group, settings, timeout, now_ms, last, write, topology_file,
                                         streams_config_file, command_config_file, len(result.written))
            except (ClusterUnreachableError, GroupNotCapturableError):
                continue  # a broker restarting, a group emptied or mid-rebalance: keep watching until the limit
    except KeyboardInterrupt:
        result.interrupted = True
    return result


def _poll_streams(bootstrap: str, group: str, settings: dict[str, object], timeout: float,
                  now_ms: Callable[[], int], last: object, write: Callable[[str, dict[str, object]], None]) -> object:
    with StreamsClient(bootstrap, timeout=timeout, settings=settings) as client:
        described = describe_streams_group(client, group)
        if described.assignment_epoch == last or not described.members:
            return last
        captured = complete_streams_group(client, described, captured_at_ms=now_ms())
        write(f"{group}-epoch-{described.assignment_epoch:010d}.json", captured.document)
        return described.assignment_epoch


def _poll_classic(bootstrap: str, group: str, settings: dict[str, object], timeout: float, now_ms: Callable[[], int],
                  last: object, write: Callable[[str, dict[str, object]], None], topology_file: Path | None,
                  streams_config_file: Path | None, command_config_file: Path | None, seen: int) -> object:
    with ClusterReader(bootstrap, timeout=timeout, settings=settings) as reader:
        described = reader.describe_group(group)
    if described.state in REBALANCING_STATES or described.state != "Stable":
        return last
    signature = tuple(sorted((m.member_id, m.assignment) for m in described.members))
    if signature == last:
        return last
    captured = capture_application(bootstrap, group, topology_file=topology_file,
                                   streams_config_file=streams_config_file, command_config_file=command_config_file,
                                   timeout=timeout, now_ms=now_ms)
    write(f"{group}-gen-{seen + 1:04d}.json", captured.document)
    return signature
