"""``taskassign bridge build`` and ``bridge properties``: the Java side, compiled with the JDK's ``javac`` and
``jar`` against the user's own Kafka jars (no Kafka code ships with taskassign), and the properties that turn
it on.

The sources are package data (``java/``): ``common`` (a tiny JSON reader/writer and the bounded HTTP call),
``classic`` (the KIP-924 ``task.assignor.class``, Kafka 3.8+, compiled for Java 11) and ``streams`` (the
KIP-1357 broker-side assignor, Kafka 4.4's group-coordinator API, compiled for Java 17 as the broker runs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taskassign.bridge.token import shown_url
from taskassign.errors import TaskassignError, UserInputError

__all__ = (
    "CLASSIC_CLASS",
    "JAVA_ROOT",
    "STREAMS_ASSIGNOR_NAME",
    "STREAMS_CLASS",
    "BuildResult",
    "build_jar",
    "java_sources",
    "properties_text",
)

JAVA_ROOT = Path(__file__).parent / "java"
CLASSIC_CLASS = "dev.taskassign.bridge.TaskassignTaskAssignor"
STREAMS_CLASS = "dev.taskassign.bridge.TaskassignStreamsAssignor"
STREAMS_ASSIGNOR_NAME = "taskassign"
CLASSIC_TIMEOUT_MS = 500
STREAMS_TIMEOUT_MS = 200
PROTOCOLS = ("auto", "classic", "streams", "both")


class BridgeBuildError(TaskassignError):
    """javac or jar failed on sources that should compile: their output is the message."""


@dataclass(frozen=True, slots=True)
class BuildResult:
    jar: Path
    protocols: tuple[str, ...]
    skipped: tuple[str, ...]


def java_sources(part: str) -> list[Path]:
    return sorted((JAVA_ROOT / part).rglob("*.java"))


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise UserInputError(f"`{name}` not found: building the bridge needs a JDK (11+; 17+ for the streams "
                             "protocol plug-in) on PATH or in JAVA_HOME")
    return found


def _jar_named(libs: Path, prefix: str) -> Path | None:
    for path in sorted(libs.glob(f"{prefix}-*.jar")):
        rest = path.name.removeprefix(prefix + "-")
        if rest[:1].isdigit() and not any(s in rest for s in ("-test", "-sources", "-javadoc")):
            return path
    return None


def build_jar(kafka_libs: Path, output: Path, protocol: str = "auto") -> BuildResult:
    """Compile the bridge against ``kafka_libs`` (Kafka's ``libs/``) into ``output``.

    ``auto`` builds the classic assignor, and the streams plug-in too when the broker's group-coordinator jars
    are there; ``classic``/``streams``/``both`` insist. A missing JDK tool or Kafka jar is a UserInputError."""
    if protocol not in PROTOCOLS:
        raise UserInputError(f"--protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    if not kafka_libs.is_dir():
        raise UserInputError(f"--kafka-libs {kafka_libs}: not a directory (Kafka's libs/)")
    javac, jar = _tool("javac"), _tool("jar")
    streams_jar = _jar_named(kafka_libs, "kafka-streams")
    coordinator = _jar_named(kafka_libs, "kafka-group-coordinator-api") or _jar_named(kafka_libs,
                                                                                       "group-coordinator-api")
    wanted: list[str] = []
    skipped: list[str] = []
    if protocol in ("auto", "classic", "both"):
        if streams_jar is None:
            if protocol != "auto" or coordinator is None:
                raise UserInputError(f"--kafka-libs {kafka_libs}: no kafka-streams-*.jar (the classic assignor "
                                     "compiles against Kafka Streams 3.8 or later)")
            skipped.append("classic: no kafka-streams jar")
        else:
            wanted.append("classic")
    if protocol in ("auto", "streams", "both"):
        if coordinator is None:
            if protocol != "auto":
                raise UserInputError(f"--kafka-libs {kafka_libs}: no kafka-group-coordinator-api-*.jar (the "
                                     "streams-protocol plug-in compiles against a Kafka 4.4 broker's libs/)")
            skipped.append("streams: no group-coordinator API jar (a broker's libs/, Kafka 4.4)")
        else:
            wanted.append("streams")
    classpath = str(kafka_libs / "*")
    with tempfile.TemporaryDirectory(prefix="taskassign-bridge-") as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        # the shared classes once, for Java 11 (a classic application may run on 11); each side against them
        for part, release in (("common", "11"), *((p, "11" if p == "classic" else "17") for p in wanted)):
            sources = [str(p) for p in java_sources(part)]
            _run([javac, "--release", release, "-nowarn", "-encoding", "UTF-8", "-cp",
                  classpath + os.pathsep + str(classes), "-d", str(classes), *sources], f"javac ({part})")
        output.parent.mkdir(parents=True, exist_ok=True)
        tmp_jar = Path(tmp) / "bridge.jar"
        _run([jar, "--create", "--file", str(tmp_jar), "-C", str(classes), "."], "jar")
        shutil.move(str(tmp_jar), output)
    return BuildResult(output, tuple(wanted), tuple(skipped))


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    except OSError as exc:
        raise UserInputError(f"{what}: cannot run {command[0]} ({exc.strerror})") from None
    if done.returncode != 0:
        raise BridgeBuildError(f"{what} failed (exit {done.returncode}):\n{(done.stderr or done.stdout).strip()}")


def properties_text(url: str, *, protocol: str = "classic", token: str | None = None,
                    token_file: Path | None = None, timeout_ms: int | None = None) -> str:
    """The properties that turn the bridge on: an application's (classic) or a broker's (streams)."""
    if not url.startswith(("http://", "https://")):
        raise UserInputError(f"--url: expected http://HOST:PORT or https://..., got {shown_url(url)!r}")
    if token is not None and token_file is not None:
        raise UserInputError("give --token or --token-file, not both")
    lines: list[str] = []
    if protocol == "classic":
        lines += ["# taskassign bridge, classic protocol (Kafka Streams 3.8+, KIP-924): add to the application's",
                  "# properties and put the jar `taskassign bridge build` made on its classpath.",
                  f"task.assignor.class={CLASSIC_CLASS}"]
        default_timeout = CLASSIC_TIMEOUT_MS
    elif protocol == "streams":
        lines += ["# taskassign bridge, streams protocol (Kafka 4.4 broker, KIP-1357): add to every broker's",
                  "# server.properties, put the jar in the broker's libs/ and restart it. `sticky` stays first,",
                  "# the default for the groups that do not choose; a group chooses taskassign with",
                  f"#   kafka-configs --alter --entity-type groups --entity-name APP_ID "
                  f"--add-config streams.assignor.name={STREAMS_ASSIGNOR_NAME}",
                  f"group.streams.assignors=sticky,{STREAMS_CLASS}"]
        default_timeout = STREAMS_TIMEOUT_MS
    else:
        raise UserInputError(f"--protocol: expected classic or streams, got {protocol!r}")
    lines.append(f"taskassign.url={url.rstrip('/')}")
    lines.append(f"taskassign.timeout.ms={timeout_ms if timeout_ms is not None else default_timeout}")
    if token_file is not None:
        lines.append(f"taskassign.token.file={token_file}")
    elif token is not None:
        lines.append(f"taskassign.token={token}")
    return "\n".join(lines) + "\n"
