"""Child processes of the live-Kafka lab (a broker, Streams instances) that can never outlive the test run.

Every process is started in its own session, so that stopping it reaches a JVM behind a wrapper script too.
Every live process is kept in a registry that an `atexit` hook empties with SIGKILL, and is told to die with its
parent where Linux allows it: a test that dies half-way, a Ctrl-C or a killed test run must not leave JVMs
holding ports and hundreds of megabytes behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_LIVE: set[ManagedProcess] = set()
# Where util-linux's setpriv exists, the child gets SIGKILL when the test process dies, even by SIGKILL (when no
# atexit hook runs). The signal survives the `exec` of the wrapper scripts, so it reaches the JVM. Linux sends
# it when the *thread* that started the child ends: start lab processes from the thread that outlives them.
_SETPRIV = shutil.which("setpriv")
_DIE_WITH_PARENT: tuple[str, ...] = (_SETPRIV, "--pdeathsig", "KILL", "--") if _SETPRIV else ()
_LIVE_LOCK = threading.Lock()


class LabTimeoutError(TimeoutError):
    """A lab wait ran past its deadline; the message says what was awaited and shows the evidence."""


def wait_for(
    condition: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.1,
    details: Callable[[], str] | None = None,
    retry_on: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll `condition` until it returns something truthy, and return that.

    Every wait of the lab goes through here so that none can hang a test run: past `timeout` seconds it raises
    `LabTimeoutError` naming `what` was awaited, followed by `details()` (typically the tail of a log). An
    exception of a `retry_on` type counts as "not yet" (a broker still loading a group answers with an error a
    later poll does not get) and is reported if the deadline passes; any other exception ends the wait at once
    (a process that died will not come back: waiting out the deadline would only hide why).
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = condition()
        except retry_on as error:
            last_error = error
            result = None
        if result:
            return result
        if time.monotonic() >= deadline:
            message = f"timed out after {timeout:.1f}s waiting for {what}"
            if last_error is not None:
                message += f"\nlast error: {last_error!r}"
            if details is not None:
                message += "\n" + details()
            raise LabTimeoutError(message) from last_error
        time.sleep(interval)


def log_tail(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log file, headed by its path, for failure messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return f"--- {path}: unreadable ({error})"
    tail = text.splitlines()[-lines:]
    return f"--- last {len(tail)} lines of {path}:\n" + "\n".join(tail)


class ManagedProcess:
    """One child process whose stdout and stderr go to a log file, stopped by SIGTERM or killed by SIGKILL."""

    def __init__(self, name: str, args: Sequence[str], log_path: Path, *, env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.args = [*_DIE_WITH_PARENT, *args]
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("wb") as log:
            self.popen = subprocess.Popen(
                self.args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        with _LIVE_LOCK:
            _LIVE.add(self)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def returncode(self) -> int | None:
        return self.popen.poll()

    def output(self) -> str:
        """Everything the process printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def tail(self, lines: int = 60) -> str:
        return log_tail(self.log_path, lines)

    def terminate(self) -> None:
        """Send SIGTERM and return at once (to stop several processes in parallel, then `stop` each)."""
        if self.alive():
            self._signal(signal.SIGTERM)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (a clean shutdown: the JVM runs its shutdown hooks), then SIGKILL if it is not gone in time."""
        if self.alive():
            self.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
        return self._reap()

    def kill(self) -> int:
        """SIGKILL: a crash, no shutdown hook runs, the group only notices through the session timeout."""
        if self.alive():
            self._signal(signal.SIGKILL)
        return self._reap()

    def _signal(self, signum: signal.Signals) -> None:
        # The whole session: the wrapper script's children die with it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signum)

    def _reap(self) -> int:
        code = self.popen.wait(10)
        # A child of the session may survive its leader (a JVM forked by a script that did not exec).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return code

    def __repr__(self) -> str:
        state = "alive" if self.alive() else f"exited {self.returncode()}"
        return f"ManagedProcess({self.name!r}, pid={self.pid}, {state}, log={self.log_path})"


def kill_all() -> None:
    """SIGKILL every process the lab started and that is still registered (the atexit safety net)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        with contextlib.suppress(Exception):
            process.kill()


atexit.register(kill_all)
