"""Every exception taskassign raises, in one place.

The tree::

    TaskassignError                      root of everything below
    ├── UserInputError (ValueError)      the user's input is wrong; the CLI prints it, exit code 2
    │   ├── ScenarioError                a taskassign file (scenario, assignment, group, streams group, ...) is
    │   │                                malformed (names the JSON path)
    │   ├── ConfigError                  a config key is unknown or its value has the wrong type/range
    │   ├── TaskIdFormatError            a task id string does not parse (Kafka's TaskIdFormatException)
    │   ├── ProcessIdFormatError         a process id is not a UUID
    │   ├── AssignorNotFoundError        an assignor name or ``module:Class`` path does not resolve
    │   │   └── PluginNotAllowedError    a plug-in assignor named by data, in a run that did not allow plug-ins
    │   ├── RackAwareOptimizationError   a rack-aware optimisation's input is inconsistent (a task held by
    │   │                                two clients or none, missing rack information)
    │   ├── TopologyError                a topology cannot be turned into tasks (``code``: how Kafka's leader fails)
    │   ├── TopologyTextError            a ``Topology#describe()`` text does not parse (names the line)
    │   ├── InputFileError               an input file cannot be read: missing, not a regular file, too large
    │   ├── OutputFileError              an output path cannot be written: a directory where a file goes, a file
    │   │                                where a directory goes, no permission
    │   ├── PropertiesError              a Java ``.properties`` file cannot be read (names the file and line)
    │   ├── ClientConfigError            Kafka client properties that taskassign cannot connect with (names
    │   │                                every offending key, never a secret)
    │   ├── JaasError                    a ``sasl.jaas.config`` Kafka's parser refuses (``kafka_message``: Java's
    │   │                                words, which may quote a secret; the message never does)
    │   ├── CaptureError                 reading a live cluster failed in a way the user must fix
    │   │   ├── ClusterUnreachableError  no broker answered within the capture's timeout
    │   │   ├── CaptureAuthorizationError  an ACL is missing (names the operation and resource)
    │   │   └── GroupNotCapturableError  the group is unknown, empty, not Kafka Streams, or rebalancing
    │   └── WireFormatError              bytes or a message are not valid Kafka wire data
    │       ├── DecodeError              bytes do not decode (names the field and byte offset)
    │       └── EncodeError              a message value cannot be encoded (names the field)
    ├── TaskAssignmentException          an assignor gives up; the leader keeps the previous assignment
    ├── PluginAssignorError              a plug-in assignor's code raised (anything but TaskAssignmentException);
    │                                    names the assignor, the method and the exception
    ├── StreamsAssignorError             a broker-side assignor of the streams protocol (KIP-1071) threw, as Kafka's
    │   │                                does; ``java_type`` is the simple name of the exception Kafka throws
    │   ├── TaskAssignorException        Kafka's TaskAssignorException (no member to place a task on)
    │   └── JavaNumberFormatException    sticky's ``Integer.parseInt`` of ``num.standby.replicas`` failed
    ├── InvalidAssignmentError           the assignor's output failed validation (Kafka's StreamsException)
    ├── LagsNotRequestedError            ``lag_for`` on a state built with ``compute_task_lags=False``
    ├── TaskNotStatefulError (LookupError)  ``lag_for`` of a task that has no changelog (so no lag)
    └── GraphError (ValueError)          an invalid min-cost-flow graph (Kafka's ``Graph`` exceptions)

``AssignmentError`` is not an exception but KIP-924's enum of validation outcomes; it lives here, at
the bottom of the package, because both the contract (``model``) and the exceptions use it.

The dual inheritance keeps ``except ValueError`` working for callers that do not know taskassign.
"""

from __future__ import annotations

import enum

__all__ = (
    "AssignmentError",
    "AssignorNotFoundError",
    "CaptureAuthorizationError",
    "CaptureError",
    "ClientConfigError",
    "ClusterUnreachableError",
    "ConfigError",
    "DecodeError",
    "EncodeError",
    "GraphError",
    "GroupNotCapturableError",
    "InputFileError",
    "InvalidAssignmentError",
    "JaasError",
    "JavaNumberFormatException",
    "LagsNotRequestedError",
    "OutputFileError",
    "PluginAssignorError",
    "PluginNotAllowedError",
    "ProcessIdFormatError",
    "PropertiesError",
    "RackAwareOptimizationError",
    "ScenarioError",
    "StreamsAssignorError",
    "TaskAssignmentException",
    "TaskAssignorException",
    "TaskIdFormatError",
    "TaskNotStatefulError",
    "TaskassignError",
    "TopologyError",
    "TopologyTextError",
    "UserInputError",
    "WireFormatError",
)


class AssignmentError(enum.Enum):
    """KIP-924's validation outcome for an assignor's TaskAssignment.

    ``ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS`` comes from KIP-924's first revision;
    Kafka's validator never returns it (its map cannot hold both). taskassign returns it, after
    Kafka's own checks, when two entries for one client place a task as active and as standby.
    """

    NONE = 0
    ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES = 1
    ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS = 2
    INVALID_STANDBY_TASK = 3
    MISSING_PROCESS_ID = 4
    UNKNOWN_PROCESS_ID = 5
    UNKNOWN_TASK_ID = 6


class TaskassignError(Exception):
    """Root of every error raised by taskassign."""


class UserInputError(TaskassignError, ValueError):
    """The input is wrong, not the program: shown to the user without a traceback."""


class ScenarioError(UserInputError):
    """A scenario or assignment file is malformed; ``path`` is the JSON path of the offending value."""

    def __init__(self, path: str, message: str, *, source: str | None = None) -> None:
        self.path = path
        self.message = message
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{path}: {message}")


class ConfigError(UserInputError):
    """A config key is unknown or its value is invalid (Kafka's ConfigException)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"config {key!r}: {message}")


class TaskIdFormatError(UserInputError):
    """A task id string is not ``<subtopology>_<partition>`` (optionally ``<topology>__``-prefixed)."""


class ProcessIdFormatError(UserInputError):
    """A process id is not a UUID."""


class AssignorNotFoundError(UserInputError):
    """An assignor name or ``module:Class`` path could not be resolved; the message lists the valid names."""


class PluginNotAllowedError(AssignorNotFoundError):
    """A plug-in assignor (``module:Class``, ``module.Class``, ``file.py:Class``) named by data (a snapshot's
    ``applications.assignor``, a group file's ``capture.assignor``) in a run that did not allow plug-ins:
    loading one runs its code, so data may name built-in assignors only unless the run opts in. Raised
    before anything is imported."""


class RackAwareOptimizationError(UserInputError):
    """The input of a rack-aware optimisation is inconsistent: a task held by two clients or by none,
    a client or partition without rack information (Kafka's IllegalArgumentException/IllegalStateException)."""


class TopologyError(UserInputError):
    """The topology cannot be turned into tasks; ``code`` says how Kafka's leader would fail.

    ``assignment_error``: Kafka raises a TaskAssignmentException here, so its leader answers every member
    with error code 3 (ASSIGNMENT_ERROR); otherwise (co-partitioning) the exception is fatal to the leader.
    """

    def __init__(self, code: str, message: str, *, assignment_error: bool = False) -> None:
        self.code = code
        self.assignment_error = assignment_error
        super().__init__(message)


class TopologyTextError(UserInputError):
    """A text is not a ``Topology#describe()`` output: ``line`` (1-based, in the text given) and what
    was expected there."""

    def __init__(self, line: int, message: str, *, source: str | None = None) -> None:
        self.line = line
        self.message = message
        self.source = source
        super().__init__(f"{source or 'topology'}:{line}: {message}")


class CaptureError(UserInputError):
    """Reading a live cluster failed in a way the user must fix (an input error: exit code 2)."""


class ClusterUnreachableError(CaptureError):
    """No broker answered within the capture's ``--timeout``: wrong address, cluster down, or a security
    setting (``--command-config``) the brokers refuse."""


class CaptureAuthorizationError(CaptureError):
    """The broker refused a read for lack of an ACL; the message names the operation and the resource."""


class GroupNotCapturableError(CaptureError):
    """The group cannot be captured: unknown, empty, not a Kafka Streams group, or in the middle of a
    rebalance (its members' assignments are not there yet)."""


class InputFileError(UserInputError):
    """An input file that is not read: missing, unreadable, a directory, not a regular file (a FIFO or a
    device would block or never end), or larger than the input cap. ``source`` names the file, ``reason``
    says why (without the file, so that callers with their own error type can reuse it)."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class OutputFileError(UserInputError):
    """An output path that cannot be written: a directory given where a file goes (``-o DIR``), a file where
    a directory goes (``--out FILE``, or a file among the parent directories), no permission. ``target``
    names the path, ``reason`` says why."""

    def __init__(self, target: str, reason: str) -> None:
        self.target = target
        self.reason = reason
        super().__init__(f"{target}: {reason}")


class JaasError(UserInputError):
    """A JAAS text Kafka's parser refuses: its message holds no token that may be a secret; ``kafka_message``
    keeps Kafka's exact words (which quote the offending token) for comparing with Kafka."""

    def __init__(self, message: str, kafka_message: str | None = None) -> None:
        super().__init__(message)
        self.kafka_message = kafka_message or message


class PropertiesError(UserInputError):
    """A Java ``.properties`` file cannot be read, or does not load as ``java.util.Properties.load`` would
    load it: ``source`` (the file), ``line`` (1-based; None for the file as a whole) and what is wrong."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        super().__init__(f"{source}:{line}: {message}" if line is not None else f"{source}: {message}")


class ClientConfigError(UserInputError):
    """Kafka client properties (``--command-config``) that taskassign cannot connect with. ``problems``
    holds (key, reason) pairs, every one of them, so that one run shows the user everything to fix. The
    reasons name keys and files, never a password or a key's contents."""

    def __init__(self, source: str, problems: tuple[tuple[str, str], ...]) -> None:
        self.source = source
        self.problems = problems
        lines = "".join(f"\n  {key}: {reason}" for key, reason in problems)
        super().__init__(f"{source}: cannot connect with these client properties:{lines}")


class WireFormatError(UserInputError):
    """Bytes or a message value are not valid Kafka wire data (consumer protocol, Streams userData)."""


class DecodeError(WireFormatError):
    """Bytes that do not decode: ``field`` is the path of the field being read (``task_offset_sums[2].
    offset_sum``), ``offset`` the byte offset where it starts or where the problem was found."""

    def __init__(self, message: str, field: str, offset: int, reason: str, *, version: int | None = None,
                 where: str | None = None) -> None:
        self.message_type = message
        self.field = field
        self.offset = offset
        self.reason = reason
        self.version = version
        self.where = where
        prefix = f"{where}: " if where else ""
        label = f"{message} v{version}" if version is not None and field != "version" else message
        super().__init__(f"{prefix}cannot decode {label}: field {field!r} at byte {offset}: {reason}")

    def located(self, where: str) -> DecodeError:
        """The same error, prefixed with where the bytes came from (a file, a JSON path)."""
        return DecodeError(self.message_type, self.field, self.offset, self.reason, version=self.version,
                           where=where)


class EncodeError(WireFormatError):
    """A message value that cannot be written in the requested version; ``field`` names the value."""

    def __init__(self, message: str, field: str, reason: str, *, version: int | None = None) -> None:
        self.message_type = message
        self.field = field
        self.reason = reason
        self.version = version
        label = f"{message} v{version}" if version is not None else message
        super().__init__(f"cannot encode {label}: field {field!r}: {reason}")


class TaskAssignmentException(TaskassignError):
    """Raised by an assignor that cannot produce an assignment.

    KIP-924 documents that the leader then keeps the previous assignment and schedules an immediate
    follow-up rebalance; taskassign's leader does exactly that (Kafka's own code instead sends an
    ASSIGNMENT_ERROR to every member, see docs/kafka-differences.md).
    """


class PluginAssignorError(TaskassignError):
    """A plug-in assignor (``module:Class``, ``file.py:Class``) raised while taskassign called into it: its
    constructor, ``configure``, ``assign`` or ``on_assignment_computed``. ``assignor`` is the name as given,
    ``method`` the call, ``exception`` what it raised (also the ``__cause__``, whose traceback ``--debug``
    shows). A ``TaskAssignmentException`` from ``assign`` is not this: KIP-924 makes it "keep the previous
    assignment"."""

    def __init__(self, assignor: str, method: str, exception: BaseException) -> None:
        self.assignor = assignor
        self.method = method
        self.exception = exception
        super().__init__(f"plug-in assignor {assignor} failed in {method}: {self.detail}")

    @property
    def detail(self) -> str:
        """The exception as ``Type: message`` (just the type when the message is empty)."""
        text = str(self.exception)
        return f"{type(self.exception).__name__}: {text}" if text else type(self.exception).__name__


class StreamsAssignorError(TaskassignError):
    """A broker-side streams-group assignor threw where Kafka's throws (the group's heartbeat fails there and
    the target assignment stays as it was). ``java_type`` is the simple class name of Kafka's exception, which
    the streams-group output document reports with the message."""

    java_type = "RuntimeException"

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"{self.java_type}: {message}")


class TaskAssignorException(StreamsAssignorError):
    """Kafka's ``TaskAssignorException``: e.g. tasks to assign and no member to assign them to."""

    java_type = "TaskAssignorException"


class JavaNumberFormatException(StreamsAssignorError):
    """Java's ``NumberFormatException`` from the sticky assignor's ``Integer.parseInt`` of
    ``num.standby.replicas`` (a non-empty configs map without the key gives ``Cannot parse null string``)."""

    java_type = "NumberFormatException"


class InvalidAssignmentError(TaskassignError):
    """The assignor's output failed ``validate_task_assignment``; the rebalance fails, as in Kafka."""

    def __init__(self, error: AssignmentError, assignor: str, detail: str = "") -> None:
        self.error = error
        self.assignor = assignor
        suffix = f": {detail}" if detail else ""
        super().__init__(f"task assignment with {assignor} returned an error: {error.name}{suffix}")


class LagsNotRequestedError(TaskassignError):
    """``lag_for`` was called on a client state obtained with ``kafka_streams_states(False)``."""


class TaskNotStatefulError(TaskassignError, LookupError):
    """A lag was asked for a task without a changelog: only such tasks have lags (Kafka's IllegalStateException)."""


class GraphError(TaskassignError, ValueError):
    """An invalid flow graph (Kafka's IllegalArgumentException / IllegalStateException from ``Graph``)."""
