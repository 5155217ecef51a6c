"""The Java side under test: finding Kafka's jars and a JDK, building the bridge jar with `taskassign bridge build`,
compiling tests/bridge/java/BridgeHarness.java against it, and running it on a request file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HARNESS = Path(__file__).parent / "java" / "BridgeHarness.java"
STREAMS_HARNESS = Path(__file__).parent / "java" / "StreamsHarness.java"


def kafka_libs() -> tuple[Path | None, str]:
    """Kafka's libs/ (KAFKA_LIBS, else KAFKA_HOME/libs) with a kafka-streams jar, or None and why not."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        return None, "no JDK (javac and java) on PATH"
    candidates = [Path(os.environ["KAFKA_LIBS"])] if os.environ.get("KAFKA_LIBS") else []
    if os.environ.get("KAFKA_HOME"):
        candidates.append(Path(os.environ["KAFKA_HOME"]) / "libs")
    if not candidates:
        return None, "set KAFKA_HOME (a Kafka 3.8+ distribution) or KAFKA_LIBS (its libs/) to run the Java bridge tests"
    for libs in candidates:
        if any(libs.glob("kafka-streams-[0-9]*.jar")) and any(libs.glob("kafka-clients-[0-9]*.jar")):
            return libs, ""
    return None, f"no kafka-streams and kafka-clients jars in {', '.join(map(str, candidates))}"


def broker_libs() -> tuple[Path | None, str]:
    """A Kafka 4.4 broker's libs/ (with the group-coordinator API jar), or None and why not."""
    libs, why = kafka_libs()
    if libs is None:
        return None, why
    if not any(libs.glob("kafka-group-coordinator-api-[0-9]*.jar")):
        return None, (f"no kafka-group-coordinator-api jar in {libs} (the streams plug-in needs a Kafka 4.4 "
                      "broker's libs/)")
    return libs, ""


def build(libs: Path, work: Path, protocol: str = "classic") -> Path:
    """The bridge jar (built by the CLI) and the compiled harness; returns the classpath to run with."""
    jar = work / "taskassign-bridge.jar"
    subprocess.run([sys.executable, "-m", "taskassign", "bridge", "build", "--kafka-libs", str(libs), "-o", str(jar),
                    "--protocol", protocol], check=True, capture_output=True, text=True)
    classes = work / "harness"
    classes.mkdir(exist_ok=True)
    harness = HARNESS if protocol == "classic" else STREAMS_HARNESS
    subprocess.run(["javac", "-nowarn", "-cp", f"{libs}/*{os.pathsep}{jar}", "-d", str(classes), str(harness)],
                   check=True, capture_output=True, text=True)
    return work


def run(work: Path, libs: Path, request: dict[str, Any], url: str, timeout_ms: int,
        main: str = "BridgeHarness") -> dict[str, Any]:
    """Drive the bridge's assign() once: its assignment, Kafka's sticky one, the fallback lines, the time."""
    path = work / "request.json"
    path.write_text(json.dumps(request))
    classpath = os.pathsep.join([f"{libs}/*", str(work / "taskassign-bridge.jar"), str(work / "harness")])
    done = subprocess.run(["java", "-cp", classpath, main, str(path), url, str(timeout_ms)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
