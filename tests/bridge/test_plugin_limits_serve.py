"""Issue 32 point 4 in `taskassign serve`: a plug-in that exits, hangs, allocates without bound or prints runs in
its own process (assignors.plugin_process); the request gets a 500 naming it (a hang: the service's deadline,
503) and the service stays up."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from taskassign.assignors.plugin_process import PluginLimits, set_plugin_limits
from taskassign.bridge.request import request_from_scenario
from tests.assignors.hostile_plugins import KINDS, spec
from tests.bridge.conftest import EXAMPLES, kip924_view

SCENARIO = EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"


@pytest.fixture(autouse=True)
def _tight_limits() -> Iterator[None]:
    set_plugin_limits(PluginLimits(timeout_s=5, memory_mib=64))
    yield


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_serve_answers_500_naming_the_plugin_and_stays_up(kind: str, start_service: Any) -> None:
    # a deadline the plug-in's process meets on a loaded machine, but for the one that hangs (the default 400 ms)
    service = start_service(assignor=spec(kind), **({} if kind == "Hangs" else {"deadline_ms": 60_000}))
    scenario = kip924_view(SCENARIO)
    status, body = service.post("/v1/assign", request_from_scenario(scenario, "orders"))
    if kind == "Hangs":  # the service's own deadline (deadline_ms, 400 ms) answers first; --plugin-timeout stops it
        assert status == 503 and "deadline" in body["error"], body
        time.sleep(5.5)  # --plugin-timeout stopped the hanging process
        status, body = service.post("/v1/assign", request_from_scenario(scenario, "orders"))
        assert status == 503, body  # a fresh process, hanging again: the service still answers
        return
    assert status == 500 and re.search(rf"hostile_plugins\.py:{kind}.*{KINDS[kind]}", body["error"]), body
    status, _ = service.get("/healthz")
    assert status == 200


