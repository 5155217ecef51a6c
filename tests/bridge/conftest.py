"""Shared pieces of the bridge's tests: a running service in a thread, and requests built from scenarios."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskassign.bridge.service import BridgeServer, make_server, read_service_config
from taskassign.formats.json_io import load_json_file
from taskassign.formats.scenario import Scenario, parse_scenario

EXAMPLES = Path(__file__).parents[2] / "examples"


def kip924_view(path: Path) -> Scenario:
    """The scenario as KIP-924 shows it to an assignor: no state sizes (Kafka's ApplicationState has none)."""
    doc = load_json_file(path)
    for task in doc["tasks"]:
        task.pop("state_bytes", None)
    return parse_scenario(doc, default_name=path.name.removesuffix(".scenario.json"))


class Running:
    def __init__(self, server: BridgeServer) -> None:
        self.server = server
        host, port = server.server_address[:2]
        self.url = f"http://{host}:{port}"

    def post(self, path: str, doc: Any, *, token: str | None = None, raw: bytes | None = None
             ) -> tuple[int, dict[str, Any]]:
        data = raw if raw is not None else json.dumps(doc).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST",
                                         headers={"Content-Type": "application/json"})
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()


@pytest.fixture
def start_service(tmp_path: Path) -> Iterator[Any]:
    servers: list[BridgeServer] = []

    def start(config_doc: dict[str, Any] | None = None, **flags: Any) -> Running:
        config_path = None
        if config_doc is not None:
            config_path = tmp_path / "serve.json"
            config_path.write_text(json.dumps(config_doc))
        flags.setdefault("listen", "127.0.0.1:0")
        flags.setdefault("state_dir", tmp_path / "state")
        server = make_server(read_service_config(config_path, **flags))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return Running(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
