"""The topology page without a browser: inputs told apart by their format header, the topology and the
placements read from group files, scenarios and streams groups, what moves, every task copy drawn once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taskassign.errors import UserInputError
from taskassign.report.topology_graph import graph_svg, subtopology_order
from taskassign.report.topology_inputs import classic_placement, client_name
from taskassign.report.topology_model import Move, Placement, SubtopologyNode, TopologyView, moves
from taskassign.report.topology_page import build_topology_report, input_kind, read_topology_view
from taskassign.report.topology_placement import placement_svg, use_compact
from tests.helpers import EXAMPLES_DIR
from tests.report.topology_cases import large_scenario

EXAMPLES = sorted([*EXAMPLES_DIR.glob("groups/*.json"), *EXAMPLES_DIR.glob("scenarios/*.json"),
                   *EXAMPLES_DIR.glob("streams-groups/*.json")])
#: Groups captured from a real Kafka (a foreign-key join: co-partitioned inputs, internal topics both ways; a
#: streams group with the broker's topology: repartition topics to two sub-topologies).
LIVE_CASES = [*sorted((Path(__file__).parents[1] / "golden" / "live_cases").glob("*.group.json")),
              Path(__file__).parents[1] / "capture" / "data" / "replays" / "44-leave" / "01-scale-out.json"]
DESCRIBED = """Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [lsp-ms-input])
      --> KSTREAM-SINK-0000000001
    Sink: KSTREAM-SINK-0000000001 (topic: by-word-repartition)
      <-- KSTREAM-SOURCE-0000000000

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000002 (topics: [by-word-repartition])
      --> KSTREAM-AGGREGATE-0000000003
    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [word-agg-store])
      --> KSTREAM-SINK-0000000004
      <-- KSTREAM-SOURCE-0000000002
    Sink: KSTREAM-SINK-0000000004 (topic: word-counts)
      <-- KSTREAM-AGGREGATE-0000000003

"""
TASK = re.compile(r'class="task(?: moved)?" data-task="([^"]+)" data-role="([a-z]+)" data-process="([^"]+)"')


def view_of(path: Path) -> TopologyView:
    kind, doc = input_kind(path)
    return read_topology_view(path, kind, doc)


def drawn_copies(html: str) -> list[tuple[str, str, str]]:
    return sorted(TASK.findall(html))


def expected_copies(view: TopologyView) -> list[tuple[str, str, str]]:
    shown = view.shown
    assert shown is not None
    return sorted((f"{t[0]}_{t[1]}", role, pid) for t, role, pid in shown.copies())


def test_inputs_are_told_apart_by_their_format_header(simulation_dir: Path, tmp_path: Path) -> None:
    assert input_kind(EXAMPLES_DIR / "groups" / "orders-app.group.json")[0] == "group"
    assert input_kind(EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json")[0] == "scenario"
    streams = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"
    assert input_kind(streams)[0] == "streams-group"
    assert input_kind(simulation_dir)[0] == "simulation"
    assert input_kind(simulation_dir / "simulation.json")[0] == "simulation"
    with pytest.raises(UserInputError, match=r"\$\.format: expected one of .*taskassign/group/v1.*got 'nope'"):
        input_kind(_write(tmp_path / "x.json", '{"format": "nope"}'))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_group_file_gives_its_topology_and_names_clients_by_endpoint() -> None:
    view = view_of(EXAMPLES_DIR / "groups" / "orders-app.group.json")
    assert view.kind == "group file"
    subs = {s.id: s for s in view.subtopologies}
    assert subs["0"].source_topics == ("orders",) and subs["0"].stores == ("counts",)
    assert subs["0"].changelog_topics == ("orders-app-counts-changelog",) and subs["0"].partitions == (0, 1, 2)
    assert subs["1"].source_topics == ("clicks",) and not subs["1"].stores
    # the members report their user endpoints; racks become the bands
    assert sorted((p.label, p.band) for p in view.processes) == [
        ("10.0.0.5:7070", "rack-a"), ("10.0.0.6:7070", "rack-b"), ("10.0.0.7:7070", "rack-b")]
    assert view.before is not None and view.after is not None
    assert view.before.label == "the members' previous tasks"
    for task in view.tasks:  # one active per task, before and after
        assert len(view.before.holders("active", task)) == 1 and len(view.after.holders("active", task)) == 1


def test_every_move_lands_where_the_task_was_not() -> None:
    for path in EXAMPLES:
        view = view_of(path)
        assert view.before is not None and view.after is not None
        for m in view.moves():
            assert m.target in view.after.holders(m.role, m.task)
            assert m.target not in view.before.holders(m.role, m.task)
            if m.role == "active" and m.source is not None:
                assert view.before.holders("active", m.task) == (m.source,)


def test_a_captured_group_draws_kafkas_recorded_assignment_against_the_assignors() -> None:
    view = view_of(next(p for p in LIVE_CASES if "legacy-fk" in p.name))
    assert view.before is not None and view.before.label == "Kafka's recorded assignment"
    assert view.after is not None and view.after.label == "legacy_sticky's assignment"
    assert view.moves() == ()  # taskassign reproduces Kafka's leader: nothing moves
    assert sorted(p.label for p in view.processes) == [f"live3-legfk-i{n}" for n in range(4)]
    subs = {s.id: s for s in view.subtopologies}
    assert subs["0"].copartition_groups and subs["0"].repartition_sinks and subs["1"].repartition_sinks
    svg = graph_svg(view.subtopologies)
    assert sorted(re.findall(r'class="topo-edge" data-from="([^"]+)" data-to="([^"]+)"', svg)) == [("0", "1"),
                                                                                                  ("1", "0")]
    assert svg.count('data-node="copartition"') == 2


def test_a_captured_streams_group_draws_the_brokers_topology() -> None:
    import json

    from taskassign.report.topology_inputs import streams_group_view
    from taskassign.streams_protocol.format import parse_streams_group

    path = LIVE_CASES[-1]
    view = view_of(path)
    subs = {s.id: s for s in view.subtopologies}
    assert subs["0"].source_topics == ("lsp-ms-input",)
    assert subs["0"].repartition_sinks == ("live-streams-by-length-repartition", "live-streams-by-word-repartition")
    assert subs["1"].repartition_sources == ("live-streams-by-word-repartition",)
    assert subs["1"].changelog_topics == ("live-streams-word-agg-store-changelog",)
    assert sorted(p.label for p in view.processes) == ["live-streams-a", "live-streams-b", "live-streams-c"]
    assert len(re.findall(r'class="topo-edge"', graph_svg(view.subtopologies))) == 2
    # a 4.4 broker keeps the Topology#describe() text (KIP-1331): stores and external sinks come from it
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["capture"]["topologyDescription"] = DESCRIBED
    described = {s.id: s for s in streams_group_view(parse_streams_group(doc), None).subtopologies}
    assert described["1"].stores == ("word-agg-store",) and "word-counts" in described["1"].sink_topics
    doc["capture"]["topologyDescription"] = "Topologies:\n   Sub-topology: x\n"
    assert "was not read" in streams_group_view(parse_streams_group(doc), None).notes[0]


def test_moves_of_two_placements() -> None:
    before = Placement.of("b", {"active": {("0", 0): ["A"], ("0", 1): ["A"]}, "standby": {("0", 0): ["B"]},
                                "warmup": {("0", 1): ["C"]}})
    after = Placement.of("a", {"active": {("0", 0): ["B"], ("0", 1): ["A"]}, "standby": {("0", 0): ["A"],
                                                                                          ("0", 1): ["C"]}})
    assert moves(before, after) == (Move(("0", 0), "active", "B", "A"), Move(("0", 0), "standby", "A", None))


def test_standbys_beyond_the_configured_count_on_fresh_processes_are_warm_ups() -> None:
    from taskassign.ids import ProcessId, TaskId
    from taskassign.model import AssignedTask, GroupAssignment, KafkaStreamsAssignment

    a, b, c = (ProcessId.of_ints(0, n) for n in (1, 2, 3))
    t = TaskId.parse("0_0")
    assignment = GroupAssignment(clients={
        a: KafkaStreamsAssignment.of(a, [AssignedTask.active(t)]),
        b: KafkaStreamsAssignment.of(b, [AssignedTask.standby(t)]),
        c: KafkaStreamsAssignment.of(c, [AssignedTask.standby(t)]),
    })
    before = Placement.of("b", {"active": {("0", 0): [str(a)]}, "standby": {("0", 0): [str(b)]}})
    placed = classic_placement(assignment, before, 1, "after")
    assert placed.holders("standby", ("0", 0)) == (str(b),) and placed.holders("warmup", ("0", 0)) == (str(c),)


def test_client_ids_lose_the_thread_suffix() -> None:
    assert client_name("orders-app-1b6f-StreamThread-3-consumer") == "orders-app-1b6f"
    assert client_name("orders-app-1b6f-StreamThread-12") == "orders-app-1b6f"
    assert client_name("plain") == "plain" and client_name(None) is None


def test_the_streams_group_draws_the_target_assignment_against_the_brokers() -> None:
    view = view_of(EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json")
    assert view.kind == "streams group" and [p.threads for p in view.processes] == [2, 2, 2]
    assert view.before is not None and view.before.label == "the members' target assignment"
    assert view.after is not None and "sticky" in view.after.label
    assert {p.band for p in view.processes} == {"rack-a", "rack-b"}


@pytest.mark.parametrize("path", EXAMPLES + LIVE_CASES, ids=lambda p: p.name)
def test_every_task_copy_is_drawn_once(path: Path) -> None:
    view = view_of(path)
    html = build_topology_report(view, str(path))
    assert drawn_copies(html) == expected_copies(view)
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert not re.search(r"(?:src|href)=\"(?!data:|#)", html)
    for s in view.subtopologies:
        assert f'data-node="subtopology" data-id="{s.id}"' in html
        for store in s.stores:
            assert f'data-node="store" data-name="{store}"' in html


def test_the_page_is_deterministic() -> None:
    path = EXAMPLES_DIR / "groups" / "orders-app.group.json"
    assert build_topology_report(view_of(path)) == build_topology_report(view_of(path))


def test_repartition_topics_become_edges_upstream_first() -> None:
    subs = [
        SubtopologyNode("1", source_topics=("a-repartition",), sink_topics=("out",), partitions=(0,)),
        SubtopologyNode("5", source_topics=("in",), sink_topics=("a-repartition",), partitions=(0,),
                        repartition_sinks=("a-repartition",)),
        SubtopologyNode("0", source_topics=("left", "right"), partitions=(0, 1),
                        copartition_groups=(("left", "right"),)),
    ]
    assert [s.id for s in subtopology_order(subs)] == ["0", "5", "1"]
    svg = graph_svg(subs)
    assert re.findall(r'class="topo-edge" data-from="([^"]+)" data-to="([^"]+)"', svg) == [("5", "1")]
    assert svg.count('data-node="copartition"') == 1
    assert 'data-kind="repartition" data-name="a-repartition"' in svg and 'data-kind="sink" data-name="out"' in svg


def test_fifty_subtopologies_on_two_hundred_processes_use_the_compact_view() -> None:
    from taskassign.report.topology_page import read_topology_view as read

    view = read("generated.json", "scenario", large_scenario(50, 200))
    assert len(view.subtopologies) == 50 and len(view.processes) == 200 and use_compact(view)
    svg = placement_svg(view)
    assert drawn_copies(svg) == expected_copies(view)
    assert svg.count('class="process"') == 200 and svg.count('data-band="eu-west-1') == 3
    graph = graph_svg(view.subtopologies)  # dense boxes: a store's changelog is a mark on the store's line
    assert 'data-node="changelog" data-name="app-store-1-changelog"' in graph
    assert ">Sub-topology 1 · 4 tasks · stateful<" in graph
    assert not re.search(r"<text[^>]*>changelog app-store-1-changelog", graph)
    small = read("small.json", "scenario", large_scenario(3, 6))
    assert not use_compact(small)
    assert drawn_copies(placement_svg(small)) == expected_copies(small)


def test_the_compare_page_has_a_topology_section_per_assignor(compare_report_path: Path) -> None:
    html = compare_report_path.read_text(encoding="utf-8")
    assert html.count('id="topology-0-graph"') == 1 and 'id="topology-1-graph"' not in html
    assert 'id="topology-0-placement"' in html and 'id="topology-1-placement"' in html
    assert "Tasks with state_aware" in html


def test_the_simulation_page_draws_the_last_assignment(report_path: Path) -> None:
    html = report_path.read_text(encoding="utf-8")
    assert 'id="topology-graph"' in html and 'id="topology-placement"' in html
    assert "the last assignment" in html and TASK.search(html) is not None


def test_a_broken_final_scenario_leaves_the_section_out_not_the_page(simulation_dir: Path, tmp_path: Path) -> None:
    import shutil

    from taskassign.report import write_report

    copy = tmp_path / "sim"
    shutil.copytree(simulation_dir, copy)
    (copy / "final.scenario.json").write_text('{"format": "taskassign/scenario/v1", "tasks": 3}', encoding="utf-8")
    html = write_report(copy, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Topology and the last assignment" in html and "left out: " in html and "$.tasks" in html
    assert 'id="plot-movements"' in html
