"""The what-if transformation: configs, removed clients and racks, added clients, and errors naming the flag."""

from __future__ import annotations

import pytest

from taskassign.api.application import read_application
from taskassign.api.what_if import (
    WhatIf,
    apply_what_if,
    apply_what_if_to_group,
    chosen_assignor,
    parse_what_if,
)
from taskassign.assignors.registry import resolve
from taskassign.errors import PluginNotAllowedError, UserInputError
from taskassign.formats.group import read_group
from taskassign.formats.scenario import parse_scenario, with_config_overrides
from taskassign.ids import ProcessId
from tests.helpers import EXAMPLES_DIR, scenario_doc

EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
A = "1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11"  # rack-a, 2 threads


def _apply(**flags: list[str]) -> tuple[object, tuple[str, ...]]:
    return apply_what_if(read_application(EXAMPLE), parse_what_if(**flags))


def test_an_empty_what_if_returns_the_input_itself() -> None:
    scenario = read_application(EXAMPLE)
    assert apply_what_if(scenario, WhatIf()) == (scenario, ())


def test_set_takes_kafka_names_and_properties_file_values() -> None:
    scenario, notes = apply_what_if(read_application(EXAMPLE), parse_what_if(
        sets=["num.standby.replicas=2", "rack.aware.assignment.tags=zone,cell", "taskassign.kafka.compat=true"]))
    configs = scenario.state.configs
    assert configs.num_standby_replicas == 2
    assert configs.rack_aware_assignment_tags == ("zone", "cell")
    assert configs.kafka_compat is True
    assert scenario.raw_configs["num.standby.replicas"] == 2
    assert notes[0] == "num.standby.replicas=2 (was 1)"


@pytest.mark.parametrize(("flags", "message"), [
    ({"sets": ["num.standby.replicas"]}, "--set 'num.standby.replicas': expected CONFIG=VALUE"),
    ({"sets": ["num.standbys=1"]}, "config 'num.standbys': unknown config"),
    ({"sets": ["num.standby.replicas=two"]}, "expected an integer, got 'two'"),
    ({"sets": ["max.warmup.replicas=0"]}, "must be >= 1"),
    ({"add_clients": ["two"]}, "--add-clients 'two': expected N"),
    ({"add_clients": ["0"]}, "N must be between 1"),
    ({"add_clients": ["1:threads=0"]}, "threads must be a whole number"),
    ({"add_clients": ["1:colour=red"]}, "unknown key 'colour'"),
    ({"remove_clients": ["ffff"]},
     "--remove-client 'ffff': no client has that name and no client's process id starts with it"),
    ({"racks_down": ["rack-z"]}, "--rack-down 'rack-z': no client is on that rack; racks: rack-a, rack-b"),
])
def test_errors_name_the_flag_and_the_value(flags: dict[str, list[str]], message: str) -> None:
    with pytest.raises(UserInputError) as caught:
        _apply(**flags)
    assert message in str(caught.value)


def test_remove_client_by_unique_prefix() -> None:
    scenario, notes = _apply(remove_clients=["1b6f"])
    assert ProcessId(A) not in scenario.state.clients
    assert len(scenario.state.clients) == 2
    assert notes == (f"removed client app-1b6f ({A}; 2 thread(s), rack rack-a, zone=eu-west-1a, 4 active, 1 standby "
                     "before)",)


def test_remove_client_by_its_name() -> None:
    scenario, _ = _apply(remove_clients=["app-1b6f"])
    assert ProcessId(A) not in scenario.state.clients


def test_an_ambiguous_prefix_is_refused() -> None:
    scenario = parse_scenario(scenario_doc())
    with pytest.raises(UserInputError, match="2 clients' process ids start with it"):
        apply_what_if(scenario, parse_what_if(remove_clients=["00000000"]))


def test_rack_down_removes_every_client_of_the_rack() -> None:
    scenario, notes = _apply(racks_down=["rack-b"])
    assert {c.rack_id for c in scenario.state.clients.values()} == {"rack-a"}
    assert notes[0].startswith("rack rack-b down: removed 2 client(s)")


def test_added_clients_take_the_most_common_shape_and_stable_ids() -> None:
    first, _ = _apply(add_clients=["2"])
    again, notes = _apply(add_clients=["2"])
    added = sorted(set(first.state.clients) - set(read_application(EXAMPLE).state.clients))
    assert len(added) == 2 and added == sorted(set(again.state.clients) - set(read_application(EXAMPLE).state.clients))
    for pid in added:
        client = first.state.clients[pid]
        # three clients, three shapes: the tie goes to the first in sorted order
        assert client.num_processing_threads == 2 and client.rack_id == "rack-a"
        assert not client.previous_active_tasks and not client.task_offset_sums
        # an empty client has every changelog's whole end offset to restore
        assert client.lag_for(next(iter(first.state.stateful_task_ids))) > 0
    assert "added 2 empty client(s) (2 thread(s), rack rack-a" in notes[0]
    assert len({str(p)[:8] for p in added}) == 2  # the short ids differ


def test_added_clients_take_the_shape_given() -> None:
    scenario, _ = _apply(add_clients=["1:threads=4,rack=rack-c,tag.zone=z9"])
    new = [c for c in scenario.state.clients.values() if c.rack_id == "rack-c"]
    assert len(new) == 1 and new[0].num_processing_threads == 4 and dict(new[0].client_tags) == {"zone": "z9"}


def test_removing_every_client_is_refused() -> None:
    with pytest.raises(UserInputError, match="removes every client"):
        _apply(racks_down=["rack-a", "rack-b"])


def test_task_assignor_class_chooses_the_assignor_and_plugins_need_the_opt_in() -> None:
    scenario = read_application(EXAMPLE)
    kafka_sticky = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"
    what_if = parse_what_if(sets=[f"task.assignor.class={kafka_sticky}"])
    altered, _ = apply_what_if(scenario, what_if)
    assert chosen_assignor(None, altered, what_if, default="high_availability", allow_plugins=False).name == "sticky"
    identity = resolve("identity")
    assert chosen_assignor(identity, altered, what_if, default="high_availability", allow_plugins=False) is identity
    plugin = "taskassign.assignors.identity.IdentityTaskAssignor"  # module.Class: a plug-in spec, as Kafka writes it
    from_data = with_config_overrides(scenario, {"task.assignor.class": plugin})
    with pytest.raises(PluginNotAllowedError, match="--allow-plugins"):
        chosen_assignor(None, from_data, WhatIf(), default="high_availability", allow_plugins=False)
    chosen = chosen_assignor(None, from_data, WhatIf(), default="high_availability", allow_plugins=True)
    assert chosen.is_plugin and chosen.name == plugin


def test_a_group_loses_members_and_its_recorded_outcome() -> None:
    spec = read_group(GROUP)
    altered, notes = apply_what_if_to_group(spec, parse_what_if(sets=["num.standby.replicas=1"],
                                                                remove_clients=["1b6f"]))
    assert altered.configs.num_standby_replicas == 1
    assert all(m.info.process_id != ProcessId(A) for m in altered.members)
    assert len(altered.members) < len(spec.members)
    assert any(m.member_id == altered.leader for m in altered.members)
    with pytest.raises(UserInputError, match="--add-clients"):
        apply_what_if_to_group(spec, parse_what_if(add_clients=["1"]))
    assert notes[0] == "num.standby.replicas=1"


def test_the_most_common_shape_wins_over_the_first_in_order() -> None:
    doc = scenario_doc()
    doc["clients"][0]["rack"] = doc["clients"][1]["rack"] = "r1"  # shapes (2, r1) and (1, r1)
    doc["clients"].append({"process_id": "00000000-0000-0000-0000-000000000003", "threads": 1, "rack": "r2"})
    doc["clients"].append({"process_id": "00000000-0000-0000-0000-000000000004", "threads": 1, "rack": "r2"})
    scenario, _ = apply_what_if(parse_scenario(doc), parse_what_if(add_clients=["1"]))
    new = [c for pid, c in scenario.state.clients.items() if not str(pid).startswith("00000000-")]
    assert [(c.num_processing_threads, c.rack_id) for c in new] == [(1, "r2")]
    # after the two r2 clients go, the shapes tie again and sorted order decides: (1, r1) before (2, r1)
    scenario, _ = apply_what_if(parse_scenario(doc), parse_what_if(racks_down=["r2"], add_clients=["1"]))
    new = [c for pid, c in scenario.state.clients.items() if not str(pid).startswith("00000000-")]
    assert [(c.num_processing_threads, c.rack_id) for c in new] == [(1, "r1")]
