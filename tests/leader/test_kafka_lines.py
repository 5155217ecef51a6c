"""What each Kafka release line refuses: ``upgrade.from`` values (KAFKA-18839 on 4.0, KAFKA-19703 on 4.2) and eager
groups (4.0 removed eager rebalancing), with Kafka's messages."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.configs import (
    KAFKA_LINES,
    REBALANCE_PROTOCOL,
    AssignmentConfigs,
    kafka_line_at_least,
)
from taskassign.errors import ConfigError
from taskassign.formats.group import group_with_config_overrides, read_group
from taskassign.leader.group import rebalance_group
from tests.helpers import GOLDEN_DIR

COLD = GOLDEN_DIR / "live_cases" / "sticky-legacy-gen01-cold-3.group.json"


def test_the_default_line_is_the_newest_release() -> None:
    assert AssignmentConfigs().kafka_version == "4.4"
    assert AssignmentConfigs.from_properties({"kafka.version": "3.9"}).kafka_version == "3.9"
    with pytest.raises(ConfigError, match=r"kafka\.version"):
        AssignmentConfigs.from_properties({"kafka.version": "3.8"})
    assert [kafka_line_at_least(line, "4.4") for line in KAFKA_LINES] == [False] * 5 + [True, True]


def test_upgrade_from_2_3_means_eager_on_3_9() -> None:
    configs = AssignmentConfigs.from_properties({"kafka.version": "3.9", "upgrade.from": "2.3"})
    assert configs.extension(REBALANCE_PROTOCOL) == "eager"
    assert configs.to_properties()["upgrade.from"] == "2.3"
    assert AssignmentConfigs.from_properties({"kafka.version": "3.9", "upgrade.from": "2.4"}).extension(
        REBALANCE_PROTOCOL) == "cooperative"


@pytest.mark.parametrize("line", ["4.0", "4.1"])
def test_4_0_and_4_1_refuse_2_3_and_below_when_the_application_starts(line: str) -> None:
    with pytest.raises(ConfigError, match="The eager rebalancing protocol is no longer supported in 4.0 which means "
                                          r"live upgrades from 2.3 or below are not possible.*Got upgrade.from='2.0'"):
        AssignmentConfigs.from_properties({"kafka.version": line, "upgrade.from": "2.0"})
    assert AssignmentConfigs.from_properties({"kafka.version": line, "upgrade.from": "3.9"})


@pytest.mark.parametrize("line", ["4.2", "4.3", "4.4", "trunk"])
def test_4_2_and_later_no_longer_know_the_values(line: str) -> None:
    with pytest.raises(ConfigError, match=r"Invalid value 2.3 for configuration upgrade.from: String must be one of: "
                                          r"null, 2.4, 2.5, .*KAFKA-19703"):
        AssignmentConfigs.from_properties({"kafka.version": line, "upgrade.from": "2.3"})


def test_a_line_does_not_know_its_own_release_or_later() -> None:
    with pytest.raises(ConfigError, match=r"Invalid value 4\.2 for configuration upgrade\.from"):
        AssignmentConfigs.from_properties({"kafka.version": "4.2", "upgrade.from": "4.2"})
    assert AssignmentConfigs.from_properties({"kafka.version": "4.3", "upgrade.from": "4.2"})


def test_an_eager_group_is_refused_from_4_0_on() -> None:
    eager = group_with_config_overrides(read_group(COLD), {REBALANCE_PROTOCOL: "eager", "kafka.version": "4.0"})
    result = rebalance_group(eager, "legacy_sticky")
    assert result.failure is not None and "KAFKA-18839" in result.failure and not result.members
    on_3_9 = rebalance_group(group_with_config_overrides(eager, {"kafka.version": "3.9"}), "legacy_sticky")
    assert on_3_9.failure is None and on_3_9.members


def test_the_cli_names_the_refusal_and_exits_2() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["rebalance", str(COLD), "--kafka-version", "4.2", "--set", "upgrade.from=2.3"])
    assert result.exit_code == 2, result.output
    assert "upgrade.from" in result.output
    bad = runner.invoke(app, ["rebalance", str(COLD), "--kafka-version", "9.9"])
    assert bad.exit_code == 2 and "--kafka-version" in bad.output
    ok = runner.invoke(app, ["rebalance", str(COLD), "--json"])
    assert ok.exit_code == 0, ok.output
    assert '"kafka_version": "4.4"' in ok.output
