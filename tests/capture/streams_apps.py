"""Real Kafka Streams instances for live-Kafka tests: the lab's own topologies (a word count among them).

The lab's topologies are Java sources under `apps/`, compiled once per test run against `$KAFKA_HOME/libs`
(no compiled class or jar is ever committed). Every instance is a JVM subprocess with its own state directory
and a log file holding its stdout: its `Topology#describe()` and its `[NAME] STATE A -> B` lines, which is how
the lab knows when it is RUNNING. `StreamsLab` owns the instances of one test and stops every one of them when
the test ends, whatever happened.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.capture.kafka_cluster import RETRIABLE
from tests.capture.kafka_groups import GroupDescription, describe_group, wait_group_stable
from tests.capture.lab_env import ENABLE_HINT
from tests.capture.processes import LabTimeoutError, ManagedProcess, log_tail, wait_for

APPS_DIR = Path(__file__).resolve().parent / "apps"
LAB_MAIN_CLASS = "lab.LabApp"
WORDCOUNT = "wordcount"

# Every lab instance gets these unless the test's properties say otherwise; they make rebalances fast.
FAST_STREAMS_DEFAULTS: Mapping[str, str] = {
    # A SIGKILLed instance drops out of the group after 2 s instead of Kafka's default 45 s
    # (the lab's broker allows it: group.min.session.timeout.ms=1000).
    "consumer.session.timeout.ms": "2000",
    "consumer.heartbeat.interval.ms": "500",
    # A clean close (SIGTERM) leaves the group at once (LeaveGroup) instead of keeping the instance's place until its
    # session times out, Streams' default. Read by the lab app (KafkaStreams.close with leaveGroup), not by Streams:
    # the internal consumer config that did this before (internal.leave.group.on.close) is gone from Kafka 4.4.
    "lab.leave.group.on.close": "true",
}

# Small heap, one GC thread, C1 only: these JVMs live for seconds, and CI machines have few cores.
STREAMS_JVM_OPTS = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"

FAILED_STATES = frozenset({"ERROR", "PENDING_ERROR", "PENDING_SHUTDOWN", "NOT_RUNNING"})


@dataclass(frozen=True)
class TopologySpec:
    """The topics a topology reads and writes (before the optional prefix of the lab's own apps)."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    def topics(self, prefix: str = "") -> list[str]:
        return [prefix + topic for topic in (*self.inputs, *self.outputs)]


TOPOLOGIES: Mapping[str, TopologySpec] = {
    spec.name: spec
    for spec in (
        TopologySpec(WORDCOUNT, ("wc-input",), ("wc-output",)),
        TopologySpec("multi-store", ("ms-input",), ("ms-word-agg", "ms-length-counts")),
        TopologySpec("join", ("join-orders", "join-payments"), ("join-output",)),
        TopologySpec("stateless", ("sl-input",), ("sl-output",)),
        TopologySpec("source-table", ("st-input",), ("st-output",)),
        TopologySpec("chain", ("ch-input",), ("ch-output",)),
        TopologySpec("fk-join", ("fk-orders", "fk-customers"), ("fk-output",)),
    )
}


def compile_lab_apps(home: Path, out_dir: Path) -> Path:
    """Compile the Java sources under `apps/` into `out_dir` against the distribution's jars; returns `out_dir`."""
    javac = shutil.which("javac")
    if javac is None:
        raise FileNotFoundError(f"`javac` is not on PATH: the lab's Streams apps need a JDK. To enable: {ENABLE_HINT}")
    sources = sorted(str(path) for path in APPS_DIR.rglob("*.java"))
    out_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [javac, "-encoding", "UTF-8", "-d", str(out_dir), "-cp", f"{home}/libs/*", *sources],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"javac failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return out_dir


def parse_topology_description(output: str) -> str | None:
    """The `Topology#describe()` text in an instance's stdout, exactly as Kafka's toString() made it.

    The apps `println` it first thing, so it runs from the line `Topologies:` to the first line after it that
    is neither blank nor indented; that line must be there already (None otherwise: the text may be
    incomplete). Kafka's text ends with a blank line, and println adds one newline, which is dropped here.
    """
    lines = output.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == "Topologies:"), None)
    if start is None:
        return None
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.strip() and not line[0].isspace():
            block = "".join(lines[start:end])
            return block[:-1] if block.endswith("\n\n") else block
    return None


def state_transitions(output: str, name: str) -> list[tuple[str, str]]:
    """The `[NAME] STATE A -> B` transitions an instance printed, in order."""
    pattern = re.compile(rf"^\[{re.escape(name)}\] STATE (\w+) -> (\w+)\s*$", re.MULTILINE)
    return [(match[1], match[2]) for match in pattern.finditer(output)]


def _assignments(group: GroupDescription) -> set[tuple[str, bytes]]:
    return {(member.member_id, member.assignment) for member in group.members}


def properties_text(props: Mapping[str, object]) -> str:
    """A Java properties file (booleans as Java writes them; `=`, `:` and `\\` in values escaped)."""

    def text(value: object) -> str:
        raw = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return raw.replace("\\", "\\\\").replace("=", "\\=").replace(":", "\\:")

    return "".join(f"{key}={text(value)}\n" for key, value in props.items())


class StreamsInstance:
    """One running Kafka Streams instance (a JVM), its stdout in `log_path`, its state in `state_dir`."""

    def __init__(
        self,
        *,
        name: str,
        app_id: str,
        topology: str,
        props: Mapping[str, str],
        state_dir: Path,
        process: ManagedProcess,
    ) -> None:
        self.name = name
        self.app_id = app_id
        self.topology = topology
        self.props = dict(props)
        self.state_dir = state_dir
        self.process = process

    @property
    def log_path(self) -> Path:
        return self.process.log_path

    @property
    def threads(self) -> int:
        """num.stream.threads: how many group members (consumers) this instance brings."""
        return int(self.props.get("num.stream.threads", "1"))

    def alive(self) -> bool:
        return self.process.alive()

    def output(self) -> str:
        return self.process.output()

    def tail(self, lines: int = 60) -> str:
        return self.process.tail(lines)

    def transitions(self) -> list[tuple[str, str]]:
        return state_transitions(self.output(), self.name)

    def state(self) -> str:
        """The state of the last transition printed (CREATED before the first)."""
        transitions = self.transitions()
        return transitions[-1][1] if transitions else "CREATED"

    def wait_state(self, state: str, *, since: int = 0, timeout: float = 60.0) -> int:
        """Wait for a transition into `state` at position `since` or later; returns its position.

        `since=len(instance.transitions())` taken before an action waits for a transition caused by it. Fails
        at once, with the log's tail, if the instance exits or reaches an error state first.
        """

        def reached() -> tuple[int] | None:
            transitions = self.transitions()
            for index in range(since, len(transitions)):
                if transitions[index][1] == state:
                    return (index,)
            self._fail_if_dead(state, transitions[since:])
            return None

        return wait_for(reached, timeout=timeout, what=f"{self} to reach {state}", details=self.tail)[0]

    def wait_running(self, timeout: float = 60.0) -> None:
        """Wait until the instance's current state is RUNNING."""

        def running() -> bool:
            transitions = self.transitions()
            if transitions and transitions[-1][1] == "RUNNING":
                return True
            self._fail_if_dead("RUNNING", transitions)
            return False

        wait_for(running, timeout=timeout, what=f"{self} to be RUNNING", details=self.tail)

    def _fail_if_dead(self, wanted: str, transitions: list[tuple[str, str]]) -> None:
        failed = [new for _, new in transitions if new in FAILED_STATES and new != wanted]
        if not self.alive() or failed:
            why = f"exited with code {self.process.returncode()}" if not self.alive() else f"went {failed[-1]}"
            raise AssertionError(f"{self} {why} before reaching {wanted}\n{self.tail()}")

    def topology_description(self, timeout: float = 30.0) -> str:
        """The instance's `Topology#describe()` text (it prints it before starting)."""
        return wait_for(
            lambda: parse_topology_description(self.output()),
            timeout=timeout,
            what=f"the topology description of {self}",
            details=self.tail,
        )

    def stop(self, timeout: float = 30.0) -> int:
        """A clean shutdown (SIGTERM: Streams closes and, with the lab's defaults, leaves the group)."""
        return self.process.stop(timeout)

    def crash(self) -> int:
        """A crash (SIGKILL): the group notices through the session timeout only."""
        return self.process.kill()

    def __repr__(self) -> str:
        return f"StreamsInstance({self.app_id}/{self.name}, {self.topology}, pid {self.process.pid})"


class StreamsLab:
    """The Streams instances of one test, all against one broker; `close()` stops every one still running."""

    def __init__(self, *, bootstrap: str, home: Path, workdir: Path, classes: Callable[[], Path]) -> None:
        self.bootstrap = bootstrap
        self.home = home
        self.workdir = workdir
        self._classes = classes
        self.instances: list[StreamsInstance] = []

    def start(
        self,
        topology: str,
        app_id: str,
        name: str,
        *,
        props: Mapping[str, object] | None = None,
        topic_prefix: str = "",
        state_dir: Path | None = None,
    ) -> StreamsInstance:
        """Start one instance. `topology` is `wordcount` or one of the lab's other topologies.

        `props` add to and override FAST_STREAMS_DEFAULTS. An instance started again under the same app and
        name reuses its state directory (so it reports its previous tasks' offsets), unless `state_dir` says
        otherwise; each start writes a log of its own.
        """
        if topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; known: {sorted(TOPOLOGIES)}")
        if topic_prefix and topology == WORDCOUNT:
            raise ValueError("the word-count app has fixed topic names (wc-input, wc-output)")
        home_dir = self.workdir / app_id / name
        state_dir = state_dir or home_dir / "state"
        state_dir.mkdir(parents=True, exist_ok=True)
        run = sum(1 for instance in self.instances if instance.app_id == app_id and instance.name == name) + 1
        merged = {key: str(value) for key, value in {**FAST_STREAMS_DEFAULTS, **(props or {})}.items()}
        if topic_prefix:
            merged["lab.topic.prefix"] = topic_prefix
        props_path = home_dir / f"streams-{run}.properties"
        props_path.write_text(properties_text(merged))
        args, env = self._command(topology, app_id, name, state_dir, props_path)
        process = ManagedProcess(f"{app_id}/{name}", args, home_dir / f"stdout-{run}.log", env=env)
        instance = StreamsInstance(
            name=name, app_id=app_id, topology=topology, props=merged, state_dir=state_dir, process=process
        )
        self.instances.append(instance)
        return instance

    def _command(
        self, topology: str, app_id: str, name: str, state_dir: Path, props_path: Path
    ) -> tuple[list[str], dict[str, str]]:
        operands = [self.bootstrap, app_id, str(state_dir), name, str(props_path)]
        # RocksDB unpacks its 15 MB native library into java.io.tmpdir at every start, and a SIGKILLed JVM never
        # deletes it: keep those copies in the test's directory, which pytest prunes, rather than in /tmp.
        jvm_tmp = self.workdir / "jvm-tmp"
        jvm_tmp.mkdir(parents=True, exist_ok=True)
        jvm_opts = f"{STREAMS_JVM_OPTS} -Djava.io.tmpdir={jvm_tmp}"
        # The distribution's tools logging (WARN and above, to stderr), so that stdout keeps the app's own lines.
        config = self.home / "config"
        log_config = next(
            (config / name for name in ("tools-log4j2.yaml", "log4j2.properties") if (config / name).is_file()), None
        )
        jvm = [*jvm_opts.split(), "-Dkafka.root.loglevel=WARN"]
        if log_config is not None:
            jvm.append(f"-Dlog4j2.configurationFile={log_config}")
        classpath = f"{self._classes()}:{self.home}/libs/*"
        return ["java", *jvm, "-cp", classpath, LAB_MAIN_CLASS, topology, *operands], {}

    def live(self, app_id: str) -> list[StreamsInstance]:
        return [instance for instance in self.instances if instance.app_id == app_id and instance.alive()]

    def wait_stable(self, app_id: str, *, timeout: float = 60.0, settle: float = 0.5) -> GroupDescription:
        """Wait until every live instance of the app is RUNNING, its group is Stable with all their threads, and
        both stay so for `settle` seconds (same members, same assignment bytes, no new state transition).

        All three are needed: the group turns Stable before the instances have their tasks running; an instance
        is still RUNNING while the group prepares the next rebalance; and Streams often follows a rebalance
        with another at once (cooperative rebalancing revokes moved partitions first and hands them over in a
        second round), whose first round looks complete to a single look. That second round starts within a
        poll (`poll.ms`, 100 ms) of the first, hence half a second of settling.
        """
        live = self.live(app_id)
        if not live:
            raise AssertionError(f"no live instance of {app_id}")
        details = self._details(live)
        members = sum(instance.threads for instance in live)
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(deadline - time.monotonic(), 0.1)
            for instance in live:
                instance.wait_running(remaining)
            group = wait_group_stable(self.bootstrap, app_id, members, timeout=remaining, details=details)
            for instance in live:  # the instances finish a rebalance after the group does
                instance.wait_running(max(deadline - time.monotonic(), 0.1))
            marks = [len(instance.transitions()) for instance in live]
            time.sleep(settle)
            if self._unchanged(group, live, marks):
                return group
            if time.monotonic() >= deadline:
                raise LabTimeoutError(
                    f"timed out after {timeout:.1f}s waiting for group {app_id!r} to settle "
                    f"(it kept rebalancing)\n{details()}"
                )

    def _unchanged(self, group: GroupDescription, live: list[StreamsInstance], marks: list[int]) -> bool:
        """The group and the instances are as they were when `group` and `marks` were taken."""
        if [len(instance.transitions()) for instance in live] != marks:
            return False
        if any(instance.state() != "RUNNING" for instance in live):
            return False
        try:
            again = describe_group(self.bootstrap, group.group_id)
        except RETRIABLE:
            return False
        return again.state == "Stable" and _assignments(again) == _assignments(group)

    @staticmethod
    def _details(instances: Iterable[StreamsInstance]) -> Callable[[], str]:
        listed = list(instances)
        return lambda: "\n".join(log_tail(instance.log_path, 25) for instance in listed)

    def close(self) -> None:
        """Stop every instance still running (SIGTERM in parallel, so a test's teardown is one close long)."""
        live = [instance for instance in self.instances if instance.alive()]
        for instance in live:
            instance.process.terminate()
        for instance in live:
            instance.stop()
