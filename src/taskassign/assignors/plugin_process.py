"""A plug-in assignor's own process: its code runs in a child, so that nothing it does takes taskassign down.

A plug-in (``module.Class``, ``file.py:Class``) is the user's code. In taskassign's process a ``sys.exit`` in
it ended the command with its exit code, a print to stdout broke ``--json``, a loop without end hung the command
and an allocation without bound took the machine's memory. Here each plug-in spec gets one child process (forked
at its first use, one per spec, kept for the run so that a plug-in's module state lives as long as Kafka's
would): the child imports the plug-in, builds and configures its instances, runs their ``assign`` and
``on_assignment_computed``, and answers with data (pickled values) over a pipe. The parent waits for each
answer at most ``PluginLimits.timeout_s`` (``--plugin-timeout``); the child's address space is limited
(``RLIMIT_AS``: taskassign's own at the fork plus ``PluginLimits.memory_mib``, ``--plugin-memory``); the
child's standard output goes to a file of its own, and any byte the plug-in writes there is an error. Each of
these ends as a ``PluginAssignorError`` (one line naming the plug-in, exit 1) and stops the child; the next use
of that plug-in starts a new one. Built-in assignors never come here: they run in-process, at full speed.

Kafka gives its leader no such fence (an assignor runs inside the consumer's poll loop, where a hang costs the
member its place in the group after ``max.poll.interval.ms``), so the limits are taskassign's own, documented
in docs/assignors.md.
"""

from __future__ import annotations

import atexit
import contextlib
import copyreg
import gc
import io
import os
import pickle
import resource
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from types import MappingProxyType
from typing import Any

from taskassign.errors import AssignorNotFoundError, PluginAssignorError, TaskAssignmentException

__all__ = (
    "DEFAULT_PLUGIN_LIMITS",
    "DEFAULT_PLUGIN_MEMORY_MIB",
    "DEFAULT_PLUGIN_TIMEOUT_S",
    "PluginFailure",
    "PluginHost",
    "PluginLimits",
    "host_for",
    "plugin_limits",
    "set_plugin_limits",
    "stop_hosts",
)

#: ``--plugin-timeout``: how long one call into a plug-in (its import, constructor, ``configure``, ``assign``,
#: ``on_assignment_computed``) may take. Far more than any assignor needs inside the documented input limits
#: (docs/limits.md); Kafka's own bound on the leader, ``max.poll.interval.ms``, is 300 s by default.
DEFAULT_PLUGIN_TIMEOUT_S = 60.0
#: ``--plugin-memory``: the address space a plug-in's process may take beyond taskassign's own at the fork.
DEFAULT_PLUGIN_MEMORY_MIB = 2048
_PREVIEW = 60  # bytes of a plug-in's stray output quoted in the error


@dataclass(frozen=True)
class PluginLimits:
    """What a plug-in may take: seconds per call and MiB of address space beyond taskassign's own."""

    timeout_s: float = DEFAULT_PLUGIN_TIMEOUT_S
    memory_mib: int = DEFAULT_PLUGIN_MEMORY_MIB

    def __post_init__(self) -> None:
        if not self.timeout_s > 0 or self.timeout_s > 86_400:
            raise ValueError(f"plug-in timeout {self.timeout_s} s: expected more than 0 and at most 86400")
        if not 16 <= self.memory_mib <= 1 << 30:
            raise ValueError(f"plug-in memory {self.memory_mib} MiB: expected 16 to {1 << 30}")


#: The limits without --plugin-timeout or --plugin-memory.
DEFAULT_PLUGIN_LIMITS = PluginLimits()
_limits = DEFAULT_PLUGIN_LIMITS


def set_plugin_limits(limits: PluginLimits) -> None:
    """Set the limits of every plug-in started from now on (a command's ``--plugin-timeout`` and
    ``--plugin-memory``; the pipeline's executors from the run's options). The timeout also applies to the
    calls of plug-ins already running."""
    global _limits
    _limits = limits


def plugin_limits() -> PluginLimits:
    """The limits in force (``set_plugin_limits``; the defaults otherwise)."""
    return _limits


class PluginFailure(Exception):
    """What became of a plug-in's call when it did not answer with a value or an exception of its own: a
    timeout, an exit, memory, stray output, a crash. ``kind`` names which (``timeout``, ``exit``, ``memory``,
    ``stdout``, ``crash``)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _RemoteError(Exception):
    """An exception of the plug-in's own that cannot travel between processes: its type name and message."""


def _mapping_proxy(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


_DISPATCH = {**copyreg.dispatch_table, MappingProxyType: lambda m: (_mapping_proxy, (dict(m),))}


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH  # the model's read-only mappings (MappingProxyType) travel as dicts
    pickler.dump(value)
    return buffer.getvalue()


class PluginHost:
    """The child process of one plug-in spec. ``call`` sends one request and waits for its answer under the
    deadline; thread-safe (``taskassign serve`` runs requests in threads)."""

    def __init__(self, spec: str, loader: Callable[[], type[Any]], limits: PluginLimits) -> None:
        self.spec = spec
        self._loader = loader
        self._memory_mib = limits.memory_mib
        self._lock = threading.Lock()
        self._pid = 0
        self._conn: Connection | None = None
        self._next_id = 0
        self._dropped: list[int] = []
        self.class_name = ""

    # -- the parent's side ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Fork the child and import the plug-in there: AssignorNotFoundError if it does not load (exit 2, as
        for any bad name), PluginAssignorError if loading it exits, hangs, prints or runs out of memory."""
        self.class_name = self.call("load", "import")

    def new_instance(self) -> tuple[int, dict[str, Any]]:
        """Construct an instance in the child: its id and the attributes the leader reads (``name``,
        ``fallback_when_lags_unknown``)."""
        with self._lock:
            self._next_id += 1
            iid = self._next_id
        return iid, self.call("new", f"{self.class_name}()", iid)

    def drop(self, iid: int) -> None:
        """Forget instance ``iid``; sent with the next request (safe to call from a finalizer)."""
        self._dropped.append(iid)

    def call(self, op: str, method: str, *args: Any) -> Any:
        """Run ``op`` in the child and return its value; raise what the plug-in raised (a TaskAssignmentException
        as itself, AssignorNotFoundError for a class that does not load, anything else as PluginAssignorError),
        or PluginAssignorError(PluginFailure) when the call did not end with an answer."""
        with self._lock:
            if self._conn is None:
                if op != "load":
                    raise PluginAssignorError(self.spec, method, PluginFailure(
                        "crash", "its process stopped after an earlier failure"))
                self._fork()
            assert self._conn is not None
            dropped, self._dropped = self._dropped, []
            timeout = _limits.timeout_s
            try:
                self._conn.send_bytes(_dumps((op, dropped, args)))
                answered = self._conn.poll(timeout)
                answer: tuple[Any, ...] = pickle.loads(self._conn.recv_bytes()) if answered else ()
            except (EOFError, OSError):
                raise PluginAssignorError(self.spec, method, PluginFailure("crash", self._ended())) from None
            except pickle.PicklingError as exc:
                raise PluginAssignorError(self.spec, method, exc) from None
            if not answered:
                self._kill()
                raise PluginAssignorError(self.spec, method, PluginFailure(
                    "timeout", f"it gave no answer within {timeout:g} s (--plugin-timeout); its process was stopped"))
        return self._outcome(method, answer)

    def _outcome(self, method: str, answer: tuple[Any, ...]) -> Any:
        kind = answer[0]
        if kind == "ok":
            return answer[1]
        if kind == "gave_up":
            raise TaskAssignmentException(answer[1])
        if kind == "not_found":
            self.stop()
            raise AssignorNotFoundError(f"assignor {self.spec!r}: {answer[1]}")
        if kind == "raised":
            exc = _exception(answer[1], answer[2], answer[3])
            exc.add_note(f"traceback in the plug-in's process:\n{answer[4]}")
            raise PluginAssignorError(self.spec, method, exc) from exc
        self.stop()
        raise PluginAssignorError(self.spec, method, PluginFailure(kind, answer[1]))

    def _fork(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()  # else the child inherits, and later writes, what the parent has buffered
        parent, child = Pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child: never returns into the parent's stack
            code = 0
            try:
                parent.close()
                _child_main(child, self._loader, self._memory_mib)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        child.close()
        self._pid, self._conn = pid, parent

    def _ended(self) -> str:
        status = self._reap(block=True)
        self._conn = None
        if status is None:
            return "its process ended without an answer"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
            return (f"its process was killed by {name} (a crash, or the memory limit: --plugin-memory "
                    f"{self._memory_mib} MiB)")
        return f"its process exited with status {os.WEXITSTATUS(status)} (os._exit or a crash) without an answer"

    def _reap(self, *, block: bool) -> int | None:
        if not self._pid:
            return None
        try:
            pid, status = os.waitpid(self._pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return None
        self._pid = 0
        return status

    def _kill(self) -> None:
        if self._pid:
            try:
                os.killpg(self._pid, signal.SIGKILL)  # its group: whatever the plug-in started goes too
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            self._reap(block=True)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def running(self) -> bool:
        """Whether its process is up (a failure stops it; ``host_for`` then starts another)."""
        return self._conn is not None

    def stop(self) -> None:
        """End the child (idempotent)."""
        self._kill()


def _exception(type_name: str, message: str, pickled: bytes | None) -> BaseException:
    if pickled is not None:
        try:
            exc: object = pickle.loads(pickled)
            if isinstance(exc, BaseException):
                return exc
        except Exception:
            pass
    remote: type[_RemoteError] = type(type_name, (_RemoteError,), {})
    return remote(message)


# -- the child's side ---------------------------------------------------------------------------------------


def _child_main(conn: Connection, loader: Callable[[], type[Any]], memory_mib: int) -> None:  # pragma: no cover
    os.setpgid(0, 0)
    with contextlib.suppress(Exception):  # Linux: killed with taskassign, even mid-call (PR_SET_PDEATHSIG)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    for name in os.listdir("/proc/self/fd"):  # taskassign's sockets and files (serve's listener) are not its own
        if int(name) > 2 and int(name) != conn.fileno():
            with contextlib.suppress(OSError):
                os.close(int(name))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this process
    gc.enable()
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm", encoding="ascii") as statm:
        own = int(statm.read().split()[0]) * resource.getpagesize()
    wanted = own + memory_mib * (1 << 20)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    captured = tempfile.TemporaryFile()  # noqa: SIM115 - the plug-in's stdout, for the life of the process
    os.dup2(captured.fileno(), 1)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    instances: dict[int, Any] = {}
    classes: list[type[Any]] = []
    while True:
        try:
            op, dropped, args = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        for iid in dropped:
            instances.pop(iid, None)
        answer = _serve(op, args, loader, classes, instances)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        written = os.fstat(captured.fileno()).st_size
        if written and answer[0] in ("ok", "gave_up", "raised"):  # an exit or memory says more
            head = os.pread(captured.fileno(), _PREVIEW, 0).decode("utf-8", "replace")
            answer = ("stdout", f"it wrote {written} byte(s) to standard output ({head!r}"
                                f"{'...' if written > _PREVIEW else ''}), where taskassign's own output goes; "
                                "a plug-in writes to stderr or a logger")
        try:
            data = _dumps(answer)
        except Exception as exc:
            data = _dumps(("raised", type(exc).__name__, f"its answer cannot be sent to taskassign: {exc}", None,
                           ""))
        conn.send_bytes(data)
        if answer[0] not in ("ok", "gave_up", "raised"):
            return


def _serve(op: str, args: tuple[Any, ...], loader: Callable[[], type[Any]], classes: list[type[Any]],
           instances: dict[int, Any]) -> tuple[Any, ...]:  # pragma: no cover - runs in the child
    try:
        if op == "load":
            try:
                classes.append(loader())
            except AssignorNotFoundError as exc:
                return ("not_found", str(exc).split(": ", 1)[-1])
            return ("ok", classes[0].__name__)
        if op == "new":
            try:
                instance = classes[0]()
            except TypeError as exc:
                return ("not_found", f"cannot construct {classes[0].__name__}() without arguments ({exc})")
            instances[args[0]] = instance
            name = getattr(instance, "name", "")
            fallback = getattr(instance, "fallback_when_lags_unknown", None)
            return ("ok", {"name": name if isinstance(name, str) else "",
                           "fallback_when_lags_unknown": fallback if isinstance(fallback, str) else None})
        instance = instances[args[0]]
        if op == "configure":
            configure = getattr(instance, "configure", None)
            if callable(configure):
                configure(args[1])
            return ("ok", None)
        if op == "assign":
            return ("ok", instance.assign(args[1]))
        if op == "callback":
            callback = getattr(instance, "on_assignment_computed", None)
            if callable(callback):
                callback(*args[1:])
            return ("ok", None)
        if op == "attr":
            return ("ok", getattr(instance, args[1]))
        raise ValueError(f"unknown request {op!r}")
    except TaskAssignmentException as exc:
        return ("gave_up", str(exc) or type(exc).__name__)
    except SystemExit as exc:
        return ("exit", f"it called sys.exit({exc.code!r}); a plug-in returns or raises, it does not end "
                        "taskassign")
    except MemoryError:
        return ("memory", "it ran out of memory (--plugin-memory: at most "
                          f"{_limits.memory_mib} MiB beyond taskassign's own)")
    except BaseException as exc:
        try:
            pickled: bytes | None = pickle.dumps(exc)
        except Exception:
            pickled = None
        return ("raised", type(exc).__name__, str(exc), pickled, "".join(traceback.format_exception(exc)))


_HOSTS: dict[tuple[int, str, PluginLimits], PluginHost] = {}
_HOSTS_LOCK = threading.Lock()


def host_for(spec: str, loader: Callable[[], type[Any]]) -> PluginHost:
    """The running child of plug-in ``spec`` (started, and the plug-in imported there, at the first call; again
    after a failure stopped it). ``loader`` imports the class; it runs in the child only."""
    key = (os.getpid(), spec, _limits)
    with _HOSTS_LOCK:
        host = _HOSTS.get(key)
        if host is not None and host.running:
            return host
        host = PluginHost(spec, loader, _limits)
        _HOSTS[key] = host
    host.start()
    return host


def stop_hosts() -> None:
    """Stop every plug-in process this process started (at exit; tests between cases)."""
    with _HOSTS_LOCK:
        hosts = [h for (pid, _, _), h in _HOSTS.items() if pid == os.getpid()]
        _HOSTS.clear()
    for host in hosts:
        host.stop()


atexit.register(stop_hosts)
