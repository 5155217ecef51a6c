"""Every command's input files go through the one safe reader: a device, a FIFO or an oversized file is
refused with exit code 2 and a message naming it, at once, whatever the command (issue 18, point 6).

The commands run in their own process, with a memory ceiling and a timeout, so that a reader that blocks
or reads without end fails the test instead of hanging or exhausting the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from taskassign.formats.json_io import MAX_INPUT_BYTES_ENV
from tests.helpers import EXAMPLES_DIR

SCENARIO = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
EVENTS = str(EXAMPLES_DIR / "events" / "scale-out.events.json")
GROUP = str(EXAMPLES_DIR / "groups" / "orders-app.group.json")
BAD = "{bad}"

#: Each command with the input under test replaced by ``{bad}``.
COMMANDS = {
    "assign": ["assign", BAD],
    "validate-scenario": ["validate", BAD, SCENARIO],
    "validate-assignment": ["validate", SCENARIO, BAD],
    "optimize": ["optimize", BAD, "--active"],
    "simulate-scenario": ["simulate", BAD, "--events", EVENTS],
    "simulate-events": ["simulate", SCENARIO, "--events", BAD],
    "report": ["report", BAD, "--out", "{tmp}/r.html"],
    "rebalance": ["rebalance", BAD],
    "decode": ["decode", "subscription", "@" + BAD],
    "encode": ["encode", BAD],
    "capture-topology": ["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--topology", BAD,
                         "-o", "{tmp}/g.json"],
    "capture-command-config": ["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g",
                               "--command-config", BAD, "-o", "{tmp}/g.json"],
}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


def run(args: list[str], bad: str, tmp: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [a.replace(BAD, bad).replace("{tmp}", str(tmp)) for a in args]
    return subprocess.run([sys.executable, "-m", "taskassign", *argv], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limits, env={**os.environ, "COLUMNS": "200", **(env or {})}, check=False)


def _assert_refused(result: subprocess.CompletedProcess[str], bad: str, words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert bad in message and words in message, message


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_dev_zero_is_refused(command: str, tmp_path: Path) -> None:
    result = run(COMMANDS[command], "/dev/zero", tmp_path)
    _assert_refused(result, "/dev/zero", "not a regular file")


@pytest.mark.parametrize("command", ["assign", "simulate-events", "decode", "encode", "report"])
def test_fifo_is_refused_without_blocking(command: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        result = run(COMMANDS[command], str(fifo), tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} blocked on a FIFO")
    _assert_refused(result, str(fifo), "not a regular file")


@pytest.mark.parametrize("command", ["assign", "validate-assignment", "simulate-events", "rebalance", "encode",
                                     "decode"])
def test_the_cap_applies_to_every_json_input(command: str, tmp_path: Path) -> None:
    cap = max(Path(p).stat().st_size for p in (SCENARIO, EVENTS, GROUP)) + 1000
    big = tmp_path / "big.json"
    big.write_text(" " * cap + "{}")
    result = run(COMMANDS[command], str(big), tmp_path, {MAX_INPUT_BYTES_ENV: str(cap)})
    _assert_refused(result, str(big), f"larger than {cap} bytes")


def test_assign_reads_standard_input(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "taskassign", "assign", "-", "--json", "-a", "identity"],
                            input=Path(SCENARIO).read_text(), capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert '"format": "taskassign/assignment/v1"' in result.stdout


JSON_COMMANDS = ["assign", "validate-assignment", "optimize", "simulate-events", "report", "rebalance", "encode"]


@pytest.mark.parametrize("command", JSON_COMMANDS)
def test_json_nested_100000_deep_is_refused(command: str, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = run(COMMANDS[command], str(deep), tmp_path)
    _assert_refused(result, str(deep), "JSON nested too deeply")


def test_a_scenario_with_an_unpaired_surrogate_exits_2_naming_the_path(tmp_path: Path) -> None:
    text = Path(SCENARIO).read_text().replace('"rack-a"', '"\\ud800"', 1)
    bad = tmp_path / "s.scenario.json"
    bad.write_text(text)
    result = run(["assign", BAD, "-o", "{tmp}/out.json"], str(bad), tmp_path)
    _assert_refused(result, str(bad), "unpaired surrogate")
    assert not (tmp_path / "out.json").exists()
