from __future__ import annotations

from typing import Any

import pytest

from taskassign.errors import ScenarioError
from taskassign.formats.events import (
    Advance,
    AppendRate,
    ClientSelector,
    Crash,
    Join,
    Leave,
    Perturb,
    RackDown,
    RackUp,
    Rebalance,
    Rejoin,
    RestoreRate,
    RollingRestart,
    parse_events,
    read_events,
)
from tests.helpers import EXAMPLES_DIR, PID_1, PID_2, tid

P1, P2 = str(PID_1), str(PID_2)


def doc(*events: dict[str, Any], **settings: Any) -> dict[str, Any]:
    return {"format": "taskassign/events/v1", **settings, "events": list(events)}


def test_every_event_type_parses() -> None:
    parsed = parse_events(doc(
        {"type": "advance", "ms": 1000},
        {"type": "join", "process_id": P1, "threads": 2, "rack": "a", "tags": {"zone": "z"}, "host": "h:1",
         "restore_rate": 5},
        {"type": "join", "count": 3},
        {"type": "leave", "client": P1},
        {"type": "crash", "clients": [P1, P2], "wipe_state": True},
        {"type": "rejoin", "clients": "all"},
        {"type": "rolling_restart", "count": 2, "downtime_ms": 1, "interval_ms": 2, "order": "random"},
        {"type": "rack_down", "rack": "a"},
        {"type": "rack_up", "rack": "a"},
        {"type": "restore_rate", "records_per_s": 7},
        {"type": "append_rate", "tasks": ["0_1"], "records_per_s": 3},
        {"type": "append_rate", "tasks": "all", "records_per_s": 4},
        {"type": "perturb", "count": 2, "threads": 3},
        {"type": "rebalance"},
        seed=5, protocol="eager", restore_rate=1, session_timeout_ms=2, state_cleanup_delay_ms=3,
        sample_interval_ms=4, max_rebalances=6, until_ms=7, max_duration_ms=8,
    ))
    assert parsed.events == (
        Advance(1000),
        Join(PID_1, 1, 2, "a", {"zone": "z"}, "h:1", 5),
        Join(None, 3, 1, None, {}, None, None),
        Leave(ClientSelector((PID_1,))),
        Crash(ClientSelector((PID_1, PID_2)), True),
        Rejoin(ClientSelector(all=True)),
        RollingRestart(ClientSelector(count=2), 1, 2, True),
        RackDown("a", False),
        RackUp("a"),
        RestoreRate(ClientSelector(all=True), 7),
        AppendRate((tid("0_1"),), 3),
        AppendRate(None, 4),
        Perturb(2, 3),
        Rebalance(),
    )
    assert (parsed.seed, parsed.protocol, parsed.restore_rate, parsed.session_timeout_ms) == (5, "eager", 1, 2)
    assert (parsed.state_cleanup_delay_ms, parsed.sample_interval_ms, parsed.max_rebalances) == (3, 4, 6)
    assert (parsed.until_ms, parsed.max_duration_ms) == (7, 8)
    assert parsed.paths[3] == "$.events[3]"


def test_defaults_are_kafkas() -> None:
    parsed = parse_events(doc())
    assert (parsed.protocol, parsed.session_timeout_ms, parsed.state_cleanup_delay_ms) == (None, 45_000, 600_000)
    assert parsed.until_ms is None and parsed.seed == 0


@pytest.mark.parametrize(("document", "path", "message"), [
    ({"format": "nope", "events": []}, "$.format", "expected 'taskassign/events/v1'"),
    (doc({"type": "explode"}), "$.events[0].type", "unknown event type 'explode'"),
    (doc({"type": "advance", "ms": -1}), "$.events[0].ms", "must be between 0"),
    (doc({"type": "advance", "ms": 1, "msec": 2}), "$.events[0].msec", "unknown key 'msec'"),
    (doc({"type": "leave"}), "$.events[0]", "say which clients"),
    (doc({"type": "leave", "client": P1, "count": 1}), "$.events[0].count", "give one of"),
    (doc({"type": "crash", "client": "not-a-uuid"}), "$.events[0].client", "is not a UUID"),
    (doc({"type": "crash", "clients": [P1, P1]}), "$.events[0].clients", "listed twice"),
    (doc({"type": "rejoin", "clients": []}), "$.events[0].clients", "non-empty list"),
    (doc({"type": "join", "process_id": P1, "count": 2}), "$.events[0].count", "not both"),
    (doc({"type": "join", "tags": {"zone": 1}}), "$.events[0].tags.zone", "expected a string tag value"),
    (doc({"type": "join", "threads": 0}), "$.events[0].threads", "must be between 1"),
    (doc({"type": "rolling_restart", "order": "alphabetical"}), "$.events[0].order", "must be 'process_id'"),
    (doc({"type": "append_rate", "tasks": ["x"], "records_per_s": 1}), "$.events[0].tasks[0]", "does not parse"),
    (doc(protocol="sticky"), "$.protocol", "must be one of cooperative, eager"),
    (doc(sample_interval_ms=0), "$.sample_interval_ms", "must be between 1"),
])
def test_mistakes_name_their_json_path(document: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_events(document)
    assert info.value.path == path
    assert message in info.value.message


def test_shipped_example_events_files_parse() -> None:
    files = sorted((EXAMPLES_DIR / "events").glob("*.events.json"))
    assert files
    for path in files:
        assert read_events(path).events
