"""Plug-in assignors that try to take taskassign down (issue 32 point 4), referenced by file path as a user's
plug-in would be. Each runs in its own process (assignors.plugin_process), where it fails alone."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from taskassign.assignors.identity import IdentityTaskAssignor
from taskassign.model import ApplicationState, TaskAssignment

HERE = Path(__file__).resolve()


def spec(name: str) -> str:
    return f"{HERE}:{name}"


class Exits(IdentityTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        sys.exit(0)


class Hangs(IdentityTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        while True:
            time.sleep(60)


class Allocates(IdentityTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        hoard = []
        while True:
            hoard.append(bytearray(8 << 20))


class Prints(IdentityTaskAssignor):
    """A valid assignment, and a line on stdout that would corrupt --json."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        print("computing the assignment...")
        return super().assign(application_state)


class ExitsHard(IdentityTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        os._exit(3)


class ExitsInConfigure(IdentityTaskAssignor):
    def configure(self, configs: object) -> None:
        raise SystemExit("bye")


#: What each plug-in's one-line error says (after "plug-in assignor SPEC failed in METHOD: PluginFailure: it" or "its").
KINDS: dict[str, str] = {
    "Exits": r"called sys\.exit\(0\)",
    "Hangs": r"gave no answer within 5 s \(--plugin-timeout\)",
    "Allocates": r"ran out of memory \(--plugin-memory",
    "Prints": r"wrote \d+ byte\(s\) to standard output \('computing the assignment",
    "ExitsHard": r"process exited with status 3",
}
#: The limits the tests run them with: 5 s (far above what the others take, even on a loaded machine), 64 MiB.
LIMITS = ["--plugin-timeout", "5", "--plugin-memory", "64"]
