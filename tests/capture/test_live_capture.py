"""taskassign against Kafka's own leader: real Kafka Streams instances go through real rebalances on the lab's
broker; after each, the group is captured, and ``rebalance`` on the captured file must send every member the
bytes Kafka's leader sent (the follow-up time aside); ``assign`` and ``simulate`` must run on the same file.

A capture reads the changelogs' end offsets when it runs, not when the leader did: the tests therefore give an
application its input, wait until its changelogs and commits stop moving, and only then make the rebalance
happen (a cold start has no input yet). docs/capture.md tells users the same.

Each test is its own application (its own application.id and topics). The events follow what operators do:
a cold start, scale-out (warm-ups and a probing rebalance), an instance leaving cleanly, a crash (SIGKILL), a
rolling restart, standbys 1 and 2, several threads, client tags over zones (rack.aware.assignment.tags),
client racks against the broker's rack (rack.aware.assignment.strategy), and topologies with several
subtopologies and stores, a co-partitioned join, stateless tasks and a source table.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from taskassign.api.capture import capture_application
from taskassign.api.rebalance import rebalance_group_file
from taskassign.capture.broker_line import broker_line
from taskassign.capture.cluster import ClusterReader
from taskassign.formats.events import parse_events
from taskassign.formats.group import GroupSpec, parse_group
from taskassign.formats.json_io import dump_json
from taskassign.leader.assign import assign_scenario
from taskassign.leader.group import group_scenario
from taskassign.model import AssignmentError
from taskassign.simulate import simulate
from taskassign.wire import NO_FOLLOWUP_MS, Assignment, AssignmentInfo
from tests.capture.kafka_cluster import KafkaBroker, create_topics, produce
from tests.capture.streams_apps import TOPOLOGIES, StreamsInstance, StreamsLab

pytestmark = pytest.mark.kafka

#: Streams settings of every instance here: state reaches the changelogs at once (no cache, short commits),
#: so that the end offsets a capture reads are the ones the leader read.
QUICK_STATE = {"commit.interval.ms": 100, "statestore.cache.max.bytes": 0}
EVENTS = {"format": "taskassign/events/v1", "events": [
    {"type": "rolling_restart", "interval_ms": 30_000},
    {"type": "advance", "ms": 600_000},
]}


# --- the check every test makes ------------------------------------------------------------------------------


def check_capture(lab: StreamsLab, app_id: str, topology: StreamsInstance, tmp_path: Path, *,
                  streams_config: Mapping[str, object] | None = None, label: str = "",
                  kafka_line: str | None = None) -> GroupSpec:
    """Capture ``app_id`` now, replay its leader (as Kafka ``kafka_line`` when given: the application's Streams
    line, ``--kafka-version``), and require Kafka's bytes for every member; then run ``assign`` and ``simulate``
    on the captured file. Returns the captured group."""
    group = lab.wait_stable(app_id, timeout=120)
    work = tmp_path / f"{app_id}{label}"
    work.mkdir(parents=True, exist_ok=True)
    topology_file = work / "topology.txt"
    topology_file.write_text(topology.topology_description())
    config_file = None
    if streams_config is not None:
        config_file = work / "streams.properties"
        config_file.write_text("".join(f"{k}={v}\n" for k, v in {"application.id": app_id, **streams_config}.items()))
    captured = capture_application(lab.bootstrap, app_id, topology_file=topology_file,
                                   streams_config_file=config_file, timeout=30, now_ms=lambda: 1_700_000_000_000)
    dump_json(captured.document, work / "captured.group.json")
    spec = parse_group(captured.document, source=str(work / "captured.group.json"))
    if kafka_line is not None:
        from taskassign.configs import KAFKA_VERSION
        from taskassign.formats.group import group_with_config_overrides

        spec = group_with_config_overrides(spec, {KAFKA_VERSION: kafka_line})
    assert {m.member_id for m in spec.members} == {m.member_id for m in group.members}
    run = rebalance_group_file(spec, spec.capture.assignor if spec.capture else "high_availability")
    assert run.result.failure is None, run.result.failure
    assert run.comparison is not None
    different = {m.member_id: m.differences for m in run.comparison.members if not m.matches}
    assert not different, (f"{app_id}{label}: {run.comparison.matching} of {len(run.comparison.members)} members "
                           f"match Kafka's leader; the others: {json.dumps(different, indent=1)} "
                           f"(file: {work / 'captured.group.json'})")
    if spec.capture is not None and spec.capture.leader_source.startswith("inferred"):
        # the leader's clock was read off its probing deadline: the replay must land on the same deadline
        assert not [m.member_id for m in run.comparison.members if m.followup_time_differs], run.comparison
    scenario = group_scenario(spec)
    assert assign_scenario(scenario, "high_availability").error is AssignmentError.NONE
    assert assign_scenario(scenario, "state_aware").error is AssignmentError.NONE
    result = simulate(scenario, parse_events(EVENTS, source="events"), "high_availability", seed=1)
    assert result.rebalances, "the simulation ran no rebalance"
    return spec


def warmups_and_deadlines(spec: GroupSpec, *, standbys: int) -> tuple[dict[str, int], list[int]]:
    """From the bytes Kafka's leader sent: the standby replicas of each task beyond ``standbys`` per task
    (warm-ups), and the follow-up deadlines the members carry."""
    replicas: Counter[str] = Counter()
    deadlines: list[int] = []
    for member in spec.members:
        assert member.recorded_assignment is not None
        user_data = Assignment.decode(member.recorded_assignment).user_data
        assert user_data is not None
        info = AssignmentInfo.decode(user_data)
        replicas.update(str(task) for task, _partitions in info.standby_tasks)
        if info.version >= 7 and info.next_rebalance_ms not in (0, NO_FOLLOWUP_MS):
            deadlines.append(info.next_rebalance_ms)
    return {task: n - standbys for task, n in replicas.items() if n > standbys}, deadlines


def topics_for(bootstrap: str, topology: str, prefix: str, partitions: int) -> None:
    """Create a lab topology's topics under ``prefix`` (empty: a cold start restores nothing)."""
    create_topics(bootstrap, dict.fromkeys(TOPOLOGIES[topology].topics(prefix), partitions))


def feed_and_settle(bootstrap: str, app_id: str, topology: str, prefix: str, records: int = 300) -> None:
    """Give the application input, then wait until it has processed all of it: its changelogs' end offsets
    and its committed offsets stay the same for a while (what the next rebalance's leader reads then is
    what a capture reads afterwards)."""
    for topic in TOPOLOGIES[topology].inputs:
        produce(bootstrap, prefix + topic, [(f"k{i % 37}", f"w{i % 11} x{i % 5} y{i}") for i in range(records)])
    last: tuple[Any, ...] = ()
    still_since = time.monotonic()
    deadline = time.monotonic() + 60
    with ClusterReader(bootstrap, timeout=30) as reader:
        inputs = [prefix + t for t in TOPOLOGIES[topology].inputs]
        while time.monotonic() < deadline:
            own = [t for t in reader.all_topic_names() if t.startswith(f"{app_id}-")]
            metadata, _ = reader.topics([*own, *inputs])
            partitions = [(t, p.partition) for t, m in metadata.items() for p in m.partitions]
            ends = reader.end_offsets(partitions)
            committed = reader.committed_offsets(app_id, [(t, p) for t, p in partitions if t in inputs])
            state = (sorted(ends.items()), sorted(committed.items()))
            done = all(committed.get(tp) == ends.get(tp) for tp in partitions if tp[0] in inputs)
            if state != last:
                last, still_since = state, time.monotonic()
            elif done and time.monotonic() - still_since > 1.5:
                return
            time.sleep(0.3)
    raise AssertionError(f"{app_id} did not settle within 60 s (its input, changelogs or commits kept moving)")
# --- the tests -----------------------------------------------------------------------------------------------


def test_lifecycle_cold_start_scale_out_leave_crash_and_rolling_restart(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path
) -> None:
    """One application through everything an operator does, with 2 threads, 1 standby, client tags over two
    zones (rack.aware.assignment.tags) and interactive-query endpoints, checked after every rebalance."""
    app, prefix = "live-life", "life-"
    topics_for(kafka_cluster.bootstrap, "multi-store", prefix, partitions=6)
    # a restoring client counts as caught up only 10 records behind: a new instance gets warm-ups first
    config = {"num.standby.replicas": 1, "rack.aware.assignment.tags": "zone", "acceptable.recovery.lag": 10,
              **QUICK_STATE}

    def start(i: int) -> StreamsInstance:
        props = {**config, "num.stream.threads": 2, "client.tag.zone": f"zone-{i % 2}",
                 "application.server": f"instance-{i}.live:{8080 + i}"}
        return streams_lab.start("multi-store", app, f"i{i}", props=props, topic_prefix=prefix)

    instances = [start(i) for i in range(3)]
    check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-cold")

    feed_and_settle(kafka_cluster.bootstrap, app, "multi-store", prefix)
    instances.append(start(3))  # scale-out: warm-ups, and the leader schedules a probing rebalance
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-scaled")
    # Kafka schedules a probing rebalance exactly while warm-ups are out; the capture must then read the
    # leader and its clock off that deadline. (On a loaded machine the new instance can catch up between the
    # cooperative rounds, and the settled assignment then has no warm-up and no deadline: both or neither.)
    warmups, deadlines = warmups_and_deadlines(spec, standbys=1)
    assert bool(warmups) == bool(deadlines), (warmups, deadlines)
    assert spec.capture is not None
    assert spec.capture.leader_source.startswith("inferred") == bool(deadlines), spec.capture

    instances[1].stop()  # leaves cleanly (LeaveGroup)
    check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-left")

    instances[2].crash()  # SIGKILL: the group notices after the session timeout
    check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-crashed")

    for i in (0, 3):  # rolling restart of the survivors, each back on its own state directory
        instances[i].stop()
        streams_lab.wait_stable(app, timeout=60)
        instances[i] = start(i)
        check_capture(streams_lab, app, instances[i], tmp_path, streams_config=config, label=f"-restarted-{i}")


def test_two_standbys_three_threads_and_a_crash(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path
) -> None:
    app, prefix = "live-standbys", "sb-"
    topics_for(kafka_cluster.bootstrap, "multi-store", prefix, partitions=5)
    config = {"num.standby.replicas": 2, **QUICK_STATE}
    instances = [streams_lab.start("multi-store", app, f"i{i}", props={**config, "num.stream.threads": 3},
                                   topic_prefix=prefix) for i in range(3)]
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-cold")
    assert spec.configs.num_standby_replicas == 2
    feed_and_settle(kafka_cluster.bootstrap, app, "multi-store", prefix)
    instances[2].crash()
    check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-crashed")


def test_co_partitioned_join_and_its_window_stores(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path
) -> None:
    app, prefix = "live-join", "jn-"
    topics_for(kafka_cluster.bootstrap, "join", prefix, partitions=4)
    config = {"num.standby.replicas": 1, **QUICK_STATE}
    instances = [streams_lab.start("join", app, f"i{i}", props={**config, "num.stream.threads": 2},
                                   topic_prefix=prefix) for i in range(2)]
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config)
    (join,) = spec.subtopologies
    assert join.copartition_groups == ((f"{prefix}join-orders", f"{prefix}join-payments"),)
    assert len(join.changelog_topics) == 2


def test_stateless_tasks(kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path) -> None:
    app, prefix = "live-stateless", "sl-"
    topics_for(kafka_cluster.bootstrap, "stateless", prefix, partitions=6)
    instances = [streams_lab.start("stateless", app, f"i{i}", props={"num.stream.threads": 2}, topic_prefix=prefix)
                 for i in range(2)]
    spec = check_capture(streams_lab, app, instances[0], tmp_path)
    assert all(not s.changelog_topics for s in spec.subtopologies)


@pytest.mark.parametrize("optimization", ["none", "all"])
def test_source_table_with_and_without_its_own_changelog(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path, optimization: str
) -> None:
    """With topology.optimization=all the table's source topic is its changelog: the leader then reads the
    group's committed offsets of that topic instead of a changelog's end offsets."""
    app, prefix = f"live-table-{optimization}", f"tb{optimization}-"
    topics_for(kafka_cluster.bootstrap, "source-table", prefix, partitions=4)
    config = {"num.standby.replicas": 1, "topology.optimization": optimization, **QUICK_STATE}
    instances = [streams_lab.start("source-table", app, f"i{i}", props=config, topic_prefix=prefix)
                 for i in range(2)]
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-cold")
    (table,) = spec.subtopologies
    expected = f"{prefix}st-input" if optimization == "all" else f"{app}-st-table-store-changelog"
    assert table.changelog_topics == (expected,)
    feed_and_settle(kafka_cluster.bootstrap, app, "source-table", prefix)
    instances[1].stop()  # the survivor takes the table over: its lag comes from the committed offsets (all)
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config, label="-left")
    ends = [p.committed_offset if optimization == "all" else p.end_offset
            for p in spec.topics[expected].partitions]
    assert sum(e or 0 for e in ends) > 0, ends


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_client_racks_against_the_brokers_rack(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path, strategy: str
) -> None:
    """Every partition lives on the broker's rack; clients on that rack and on another one: the leader's
    rack-aware optimisation (KIP-925) moves tasks to cut cross-rack traffic."""
    app, prefix = f"live-racks-{strategy}", f"rk{strategy[:3]}-"
    topics_for(kafka_cluster.bootstrap, "multi-store", prefix, partitions=4)
    config = {"num.standby.replicas": 1, "rack.aware.assignment.strategy": strategy, **QUICK_STATE}
    racks = [kafka_cluster.rack or "rack-a", "rack-z", "rack-z"]
    instances = [streams_lab.start("multi-store", app, f"i{i}", props={**config, "client.rack": rack},
                                   topic_prefix=prefix) for i, rack in enumerate(racks)]
    spec = check_capture(streams_lab, app, instances[0], tmp_path, streams_config=config)
    assert spec.configs.rack_aware_assignment_strategy == strategy
    assert any(p.racks for t in spec.topics.values() for p in t.partitions)


def test_without_a_topology_the_assignments_still_tell_the_tasks(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path
) -> None:
    """No describe() text: subtopologies come from the members' assignments, the changelog from the cluster's
    topic names; for a topology with one stateful subtopology that is everything the leader used."""
    app, prefix = "live-notext", "nt-"
    topics_for(kafka_cluster.bootstrap, "source-table", prefix, partitions=3)
    config = {"num.standby.replicas": 1, **QUICK_STATE}
    for i in range(2):
        streams_lab.start("source-table", app, f"i{i}", props=config, topic_prefix=prefix)
    streams_lab.wait_stable(app, timeout=120)
    captured = capture_application(kafka_cluster.bootstrap, app, timeout=30, now_ms=lambda: 0,
                                   streams_config_file=_properties(tmp_path, app, config))
    assert any("no --topology" in n for n in captured.notes)
    spec = parse_group(captured.document)
    run = rebalance_group_file(spec, "high_availability")
    assert run.comparison is not None and run.comparison.all_match, run.comparison


def test_capture_reads_the_raw_bytes_the_broker_holds(kafka_cluster: KafkaBroker, streams_lab: StreamsLab) -> None:
    """The group file keeps every member's subscription and assignment exactly as DescribeGroups returned them."""
    from tests.capture.kafka_groups import describe_group

    app, prefix = "live-raw", "rw-"
    topics_for(kafka_cluster.bootstrap, "stateless", prefix, partitions=2)
    streams_lab.start("stateless", app, "i0", topic_prefix=prefix)
    streams_lab.wait_stable(app)
    with ClusterReader(kafka_cluster.bootstrap, timeout=30) as reader:
        mine = reader.describe_group(app)
        advertised = reader.api_versions()
    theirs = describe_group(kafka_cluster.bootstrap, app)
    assert {(m.member_id, m.metadata, m.assignment) for m in mine.members} == {
        (m.member_id, m.metadata, m.assignment) for m in theirs.members}
    # kafka-python fills config['api_version'] in itself: the broker's answer must still be read (its line)
    assert advertised is not None and advertised[18][1] >= 3, advertised  # ApiVersions itself
    line = broker_line(advertised)
    assert line.line is not None or line.candidates, line  # an exact line, or the range the versions allow


def _properties(tmp_path: Path, app: str, config: Mapping[str, Any]) -> Path:
    path = tmp_path / f"{app}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in {"application.id": app, **config}.items()))
    return path
