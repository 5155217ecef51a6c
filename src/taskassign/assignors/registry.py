"""Finding an assignor by short name or by path, so users can plug in their own.

Accepted forms: a built-in short name (``high_availability``, dashes allowed), ``module:Class``,
``module.Class`` (Kafka style), or ``path/to/file.py:Class``. The class is instantiated with no
arguments and, if it has ``configure``, configured with the application's configs.

The streams protocol's broker-side assignors (``streams_sticky``, ``streams_balanced``) are names here too,
but not classes: they assign members (stream threads) on the broker, not clients on the group leader, so
they are not KIP-924 assignors. ``resolve`` accepts them (a ResolvedAssignor of protocol ``"streams"``);
``leader.assign.assign_scenario`` runs them through ``streams_protocol``.

``resolve`` is the one place a spec is read: it returns a frozen ResolvedAssignor (name, protocol, built-in or
plug-in, class) that the api, the leader, the fleet and the CLI pass on, so a run consults the registry once.

A plug-in spec (any form but a built-in name) is code execution: resolving it imports a module or runs a
file. A spec the user typed (``--assignor``) is the user's choice; a spec that comes from data (a fleet
snapshot, a group file) is resolved with ``allow_plugins=False`` unless the run opted in, and then fails
with PluginNotAllowedError before anything is imported.

A plug-in runs in a process of its own (``plugin_process``: a deadline, a memory limit, its stdout kept
away from taskassign's); resolving one imports it there. ``create_assignor`` hands out a plug-in as a
``PluginAssignor``: anything its code raises (but the ``TaskAssignmentException`` KIP-924 gives a meaning), and
any way it ends without an answer, becomes a PluginAssignorError naming the assignor, the method and the cause,
which every command prints as one line (``assign --debug`` adds the plug-in's traceback).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from taskassign.assignors.base import TaskAssignor
from taskassign.assignors.plugin_process import PluginHost, host_for
from taskassign.errors import AssignorNotFoundError, PluginAssignorError, PluginNotAllowedError, TaskAssignmentException
from taskassign.model import ApplicationState, AssignmentError, GroupAssignment, GroupSubscription, TaskAssignment

__all__ = (
    "BUILTIN_ASSIGNORS",
    "DEFAULT_ASSIGNOR",
    "KAFKA_ASSIGNOR_CLASSES",
    "KAFKA_INTERNAL_ASSIGNORS",
    "STREAMS_GROUP_ASSIGNORS",
    "PluginAssignor",
    "ResolvedAssignor",
    "assignor_from_class_config",
    "builtin_name",
    "create_assignor",
    "resolve",
)

#: Built-in assignors: short name -> (import target, one-line description).
BUILTIN_ASSIGNORS: Mapping[str, tuple[str, str]] = {
    "high_availability": ("taskassign.assignors.high_availability:HighAvailabilityTaskAssignor",
                          "Kafka's default (KIP-441): caught-up clients keep actives, warm-ups and probing "
                          "rebalances move the rest"),
    "identity": ("taskassign.assignors.identity:IdentityTaskAssignor",
                 "every client keeps its previous tasks (TaskAssignmentUtils.identity_assignment)"),
    "legacy_sticky": ("taskassign.assignors.legacy_sticky:LegacyStickyTaskAssignor",
                      "Kafka's internal LegacyStickyTaskAssignor: sticky and lag-blind, balanced per thread"),
    "fallback_prior": ("taskassign.assignors.fallback_prior:FallbackPriorTaskAssignor",
                       "Kafka's FallbackPriorTaskAssignor: previous actives stay put, probing rebalance requested"),
    "sticky": ("taskassign.assignors.sticky:StickyTaskAssignor",
               "Kafka's public KIP-924 StickyTaskAssignor (task.assignor.class)"),
    "state_aware": ("taskassign.assignors.state_aware.assignor:StateAwareTaskAssignor",
                    "balances state bytes per thread (KAFKA-6583) with high-availability moves, rack-aware, "
                    "explains every move"),
    "sticky_preserve": ("taskassign.assignors.sticky:StickyPreserveTaskAssignor",
                        "Kafka's StickyTaskAssignor(true): previous actives never move, immediate follow-up"),
}

#: The broker-side assignors of the streams rebalance protocol (KIP-1071): short name -> (Kafka's name, what it
#: does). Names only: ``streams_protocol`` has them (spec streams-group-assignors.md).
STREAMS_GROUP_ASSIGNORS: Mapping[str, tuple[str, str]] = {
    "streams_sticky": ("sticky", "streams protocol (KIP-1071): Kafka's broker-side sticky assignor, the default "
                                 "(members = threads; previous owners, and from Kafka 4.4 reported task offsets, "
                                 "first, within quotas)"),
    "streams_balanced": ("balanced", "PROPOSAL, in no Kafka release (KAFKA-20998, open): streams protocol (KIP-1071), "
                                     "a broker-side balanced assignor (the high-availability placement on the broker; "
                                     "sticky only within a process)"),
}

#: Kafka's internal assignors (StreamsPartitionAssignor's legacy path, ``internal.task.assignor.class``):
#: they work on Kafka's ClientState, whose task sets are TreeSets. Every other assignor is a KIP-924 one
#: (``task.assignor.class``), whose result Kafka copies into HashSets. The difference shows in the order of
#: the bytes the leader writes.
KAFKA_INTERNAL_ASSIGNORS = frozenset({"high_availability", "legacy_sticky", "fallback_prior"})

#: Kafka's assignor classes (``task.assignor.class`` for KIP-924 ones, ``internal.task.assignor.class``
#: for the internal ones) and the taskassign assignor that reproduces each.
KAFKA_ASSIGNOR_CLASSES: Mapping[str, str] = {
    "org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor": "high_availability",
    "org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor": "legacy_sticky",
    "org.apache.kafka.streams.processor.internals.assignment.StickyTaskAssignor": "legacy_sticky",
    "org.apache.kafka.streams.processor.internals.assignment.FallbackPriorTaskAssignor": "fallback_prior",
    "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor": "sticky",
}

DEFAULT_ASSIGNOR = "high_availability"


def _normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


@dataclass(frozen=True)
class ResolvedAssignor:
    """The text naming an assignor, resolved once (``resolve``): everything the engine reads of it afterwards.

    ``spec`` is the text as given (error messages quote it); ``name`` the name written into assignment files
    (the short name for built-ins, else the stripped text); ``protocol`` ``"classic"`` for a KIP-924 assignor
    run by the group leader, ``"streams"`` for a broker-side assignor of the streams protocol (KIP-1071);
    ``builtin`` False for a plug-in (code the run imported); ``assignor_class`` the KIP-924 class (None under
    the streams protocol, and for a plug-in, whose class lives in its own process: ``class_name`` names it);
    ``kafka_name`` Kafka's name of a broker-side assignor (``streams_sticky`` -> ``sticky``, None for a classic
    one). No assignor has settings of its own at resolution: its configs are the
    application's, given to ``create`` for each rebalance."""

    spec: str
    name: str
    protocol: Literal["classic", "streams"]
    builtin: bool
    assignor_class: type[Any] | None = None
    kafka_name: str | None = None
    #: The class's name (a plug-in's, as its process loaded it; a built-in's).
    class_name: str = ""

    @property
    def is_streams(self) -> bool:
        """Whether this is a broker-side assignor of the streams protocol (KIP-1071)."""
        return self.protocol == "streams"

    @property
    def is_plugin(self) -> bool:
        """Whether this is a plug-in: the user's code, not one of taskassign's assignors."""
        return not self.builtin

    def classic_class(self) -> type[Any]:
        """The KIP-924 class (``PluginAssignor`` for a plug-in, whose class lives in its own process);
        AssignorNotFoundError for a broker-side assignor of the streams protocol."""
        if self.is_plugin:
            return PluginAssignor
        if self.assignor_class is None:
            raise AssignorNotFoundError(
                f"{self.spec!r} is a broker-side assignor of the streams protocol (KIP-1071): it assigns members "
                "on the broker, not clients on the group leader, so it has no place here; `taskassign assign`, "
                "`simulate`, `streams-migration` and `pipeline run` take it"
            )
        return self.assignor_class

    def create(self, configs: Mapping[str, Any] | None = None) -> TaskAssignor:
        """A fresh, configured instance (Kafka: one per rebalance); a plug-in comes wrapped in
        ``PluginAssignor``."""
        if self.is_plugin:
            plugin = PluginAssignor(self.name, host_for(self.name, partial(_load, self.name, self.spec)))
            plugin.configure(dict(configs or {}))
            return plugin
        cls = self.classic_class()
        try:
            assignor = cls()
        except TypeError as exc:
            raise AssignorNotFoundError(f"assignor {self.spec!r}: cannot construct {cls.__name__}() without "
                                        f"arguments ({exc})") from None
        configure = getattr(assignor, "configure", None)
        if callable(configure):
            configure(dict(configs or {}))
        return assignor  # type: ignore[no-any-return]


def resolve(spec: str | ResolvedAssignor, *, allow_plugins: bool = True, source: str = "data") -> ResolvedAssignor:
    """Resolve ``spec`` once: AssignorNotFoundError (listing the valid names) for an unknown name or an
    unloadable plug-in. ``allow_plugins=False`` (for a spec from data, ``source`` naming it): only built-in
    assignors, a plug-in spec is a PluginNotAllowedError raised before anything is imported. An already
    resolved assignor comes back as it is."""
    if isinstance(spec, ResolvedAssignor):
        return spec
    short = _normalise(spec)
    streams = STREAMS_GROUP_ASSIGNORS.get(short)
    if streams is not None:
        return ResolvedAssignor(spec, short, "streams", True, kafka_name=streams[0])
    if short in BUILTIN_ASSIGNORS:
        cls = _load(BUILTIN_ASSIGNORS[short][0], spec)
        return ResolvedAssignor(spec, short, "classic", True, cls, class_name=cls.__name__)
    if ":" in spec or "." in spec:
        if not allow_plugins:
            raise PluginNotAllowedError(
                f"assignor {spec!r} from {source} is a plug-in (module:Class or file.py:Class): loading it runs its "
                f"code, so {source} may name built-in assignors only ({', '.join(sorted(BUILTIN_ASSIGNORS))}) "
                "unless the run allows plug-ins (--allow-plugins)"
            )
        host = host_for(spec.strip(), partial(_load, spec.strip(), spec))  # imports it in its own process
        return ResolvedAssignor(spec, spec.strip(), "classic", False, class_name=host.class_name)
    raise AssignorNotFoundError(
        f"unknown assignor {spec!r}; built-in assignors: {', '.join(sorted(BUILTIN_ASSIGNORS))}; "
        f"streams protocol (KIP-1071): {', '.join(sorted(STREAMS_GROUP_ASSIGNORS))}; "
        "or give 'module:Class' or 'path/to/file.py:Class'"
    )


def builtin_name(spec: str) -> str | None:
    """The short name of the built-in assignor (streams-protocol ones included) ``spec`` names, else None (a
    plug-in or an unknown name). A table look-up that imports nothing: for reading data, which may name
    built-ins only; to run an assignor, ``resolve`` it."""
    short = _normalise(spec)
    return short if short in BUILTIN_ASSIGNORS or short in STREAMS_GROUP_ASSIGNORS else None


def assignor_from_class_config(value: str) -> str:
    """The assignor name a ``task.assignor.class`` value names: Kafka's own classes as the taskassign assignor
    that reproduces them, anything else as given (a built-in name, or a plug-in ``module.Class`` as Kafka
    writes class names: code, so data naming one needs the run's --allow-plugins)."""
    return KAFKA_ASSIGNOR_CLASSES.get(value.strip(), value.strip())


def _load(target: str, spec: str) -> type[Any]:
    module_part, sep, attr = target.rpartition(":")
    if not sep:
        module_part, _, attr = target.rpartition(".")
    if not module_part or not attr:
        raise AssignorNotFoundError(f"assignor {spec!r}: expected 'module:Class' or 'file.py:Class'")
    if module_part.endswith(".py"):
        module = _import_file(Path(module_part), spec)
    else:
        if not all(part.isidentifier() for part in module_part.split(".")):
            raise AssignorNotFoundError(f"assignor {spec!r}: {module_part!r} is neither a module name (dotted "
                                        "identifiers, e.g. my_package.assignors) nor a path ending in .py")
        try:
            module = importlib.import_module(module_part)
        except ImportError as exc:
            raise AssignorNotFoundError(f"assignor {spec!r}: cannot import module {module_part!r} ({exc})") from None
        except Exception as exc:
            raise AssignorNotFoundError(f"assignor {spec!r}: importing module {module_part!r} failed: "
                                        f"{exc!r}") from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise AssignorNotFoundError(f"assignor {spec!r}: module {module_part!r} has no attribute {attr!r}")
    if not inspect.isclass(obj) or not callable(getattr(obj, "assign", None)):
        raise AssignorNotFoundError(f"assignor {spec!r}: {attr!r} is not a class with an assign() method")
    return obj


def _import_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise AssignorNotFoundError(f"assignor {spec!r}: no such file {str(path)!r}")
    name = f"taskassign_user_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise AssignorNotFoundError(f"assignor {spec!r}: cannot load {str(path)!r}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise AssignorNotFoundError(f"assignor {spec!r}: importing {str(path)!r} failed: {exc!r}") from None
    return module


class PluginAssignor:
    """A plug-in assignor as taskassign runs it: an instance living in the plug-in's own process
    (``plugin_process``), called with data. Anything its code raises but the TaskAssignmentException KIP-924
    gives a meaning (from ``assign``: keep the previous assignment), and any way it ends without an answer
    (``sys.exit``, a timeout, memory, output on stdout), is a PluginAssignorError naming the assignor and the
    method. The attributes the leader reads (``name``, ``fallback_when_lags_unknown``) come back with the
    instance; any other is fetched from the plug-in's process."""

    def __init__(self, spec: str, host: PluginHost) -> None:
        self.spec = spec
        self._host = host
        self._iid, attributes = host.new_instance()
        self._own_name: str = attributes["name"]
        self.fallback_when_lags_unknown: str | None = attributes["fallback_when_lags_unknown"]
        weakref.finalize(self, host.drop, self._iid)

    @property
    def name(self) -> str:
        """The plug-in's own ``name`` when it sets one, else the name it was loaded by."""
        return self._own_name or self.spec

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        try:
            return self._host.call("attr", f"{attribute} (attribute)", self._iid, attribute)
        except PluginAssignorError as exc:
            if isinstance(exc.exception, AttributeError):
                raise AttributeError(attribute) from None
            raise

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._call("configure", "configure()", dict(configs))

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        result: TaskAssignment = self._host.call("assign", "assign()", self._iid, application_state)
        return result

    def on_assignment_computed(
        self, assignment: GroupAssignment, subscription: GroupSubscription, error: AssignmentError
    ) -> None:
        self._call("callback", "on_assignment_computed()", assignment, subscription, error)

    def _call(self, op: str, method: str, *args: Any) -> Any:
        try:
            return self._host.call(op, method, self._iid, *args)
        except TaskAssignmentException as exc:  # KIP-924 gives it a meaning in assign() only
            raise PluginAssignorError(self.spec, method, exc) from exc


def create_assignor(spec: str, configs: Mapping[str, Any] | None = None) -> TaskAssignor:
    """Instantiate the assignor named by ``spec`` and configure it (Kafka: a fresh instance per rebalance);
    a plug-in comes wrapped in ``PluginAssignor``. Shorthand for ``resolve(spec).create(configs)``."""
    return resolve(spec).create(configs)
