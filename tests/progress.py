"""Progress the default test run shows beyond pytest's line per file.

pytest prints a file's name when its first test starts and a dot per finished test, so one test that runs
for minutes looks like a hang, above all on a busy machine. This plugin adds two things:

- a heartbeat: while one test has run longer than ``TASKASSIGN_TEST_HEARTBEAT`` seconds (30 by default,
  0 turns it off), a line every such interval naming the test and how long it has run;
- at the end, the files that took longest, so that whoever keeps the default run short knows what to
  mark ``slow`` (docs/contributing.md, "Tests").

The heartbeat writes to a copy of the terminal's file descriptor taken before any test runs, so pytest's
output capture of the test itself is untouched.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from typing import IO

import pytest

HEARTBEAT_ENV = "TASKASSIGN_TEST_HEARTBEAT"
SLOWEST_FILES_SHOWN = 12


class ProgressPlugin:
    """Heartbeat for long tests and the slowest files at the end (wall time, for people, never asserted)."""

    def __init__(self, terminal: IO[str], interval: float) -> None:
        self._terminal = terminal
        self._interval = interval
        self._lock = threading.Lock()
        self._current: tuple[str, float] | None = None
        self._stop = threading.Event()
        self._file_seconds: dict[str, float] = defaultdict(float)
        self._file_tests: dict[str, int] = defaultdict(int)
        self._thread: threading.Thread | None = None
        if interval > 0:
            self._thread = threading.Thread(target=self._beat, name="test-heartbeat", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        last_line: tuple[str, float] | None = None  # (test, when its last heartbeat line was written)
        while not self._stop.wait(min(self._interval / 3, 5.0)):
            now = time.monotonic()
            with self._lock:
                current = self._current
                if current is None:
                    continue
                nodeid, started = current
                since = last_line[1] if last_line is not None and last_line[0] == nodeid else started
                if now - since < self._interval:
                    continue
                self._terminal.write(f"\n    ... still running {nodeid} ({now - started:.0f} s)\n")
                self._terminal.flush()
                last_line = (nodeid, now)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        with self._lock:
            self._current = (nodeid, time.monotonic())

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        with self._lock:
            current = self._current
            self._current = None
        if current is not None:
            path = location[0]
            self._file_seconds[path] += time.monotonic() - current[1]
            self._file_tests[path] += 1

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self._file_seconds:
            return
        slowest = sorted(self._file_seconds.items(), key=lambda item: (-item[1], item[0]))[:SLOWEST_FILES_SHOWN]
        terminalreporter.section("slowest test files (wall time, setup included)", sep="-")
        for path, seconds in slowest:
            terminalreporter.write_line(f"{seconds:7.1f} s  {self._file_tests[path]:5d} tests  {path}")

    def pytest_unconfigure(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        self._terminal.close()


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines from the environment (a bad value is a usage error, not a crash)."""
    raw = os.environ.get(HEARTBEAT_ENV, "30")
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{HEARTBEAT_ENV}={raw!r}: expected seconds (0 turns the heartbeat off)") from None
    if value < 0:
        raise pytest.UsageError(f"{HEARTBEAT_ENV}={raw!r}: expected seconds >= 0 (0 turns the heartbeat off)")
    return value


def pytest_configure(config: pytest.Config) -> None:
    """Hook for ``-p tests.progress`` (tests/conftest.py calls ``register`` itself)."""
    register(config)


def register(config: pytest.Config) -> None:
    """Add the plugin unless pytest runs quietly for a tool (``-qq``) or under xdist workers."""
    if config.get_verbosity() < -1 or hasattr(config, "workerinput"):
        return
    terminal = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="replace")
    config.pluginmanager.register(ProgressPlugin(terminal, heartbeat_interval()), "taskassign-progress")
