"""Where the live-Kafka lab finds Kafka and Java, and why it cannot run when it cannot.

Kept free of kafka-python imports: the test collection asks it before anything else, and a machine without
the client must still collect (and skip) the `kafka` tests instead of failing the whole directory.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_KAFKA_HOME = PROJECT_ROOT.parent / "shared" / "kafka"

ENABLE_HINT = (
    "install Java 17+ (a JDK: `java` and `javac` on PATH, e.g. `apt-get install openjdk-17-jdk-headless`), "
    "set KAFKA_HOME to a Kafka distribution that has bin/start-broker.sh and libs/ "
    f"(default: {DEFAULT_KAFKA_HOME}), and install the project's dependencies (`pip install -e .`: kafka-python 2.x)"
)


def kafka_home() -> Path:
    """The Kafka distribution the lab runs: `$KAFKA_HOME`, else the project's shared one."""
    configured = os.environ.get("KAFKA_HOME")
    return Path(configured).expanduser().resolve() if configured else DEFAULT_KAFKA_HOME


def lab_unavailable_reason(home: Path | None = None) -> str | None:
    """Why live-Kafka tests cannot run here (None when they can); the reason ends with how to enable them."""
    home = home or kafka_home()
    missing = []
    if shutil.which("java") is None:
        missing.append("`java` is not on PATH")
    if not (home / "bin" / "start-broker.sh").is_file():
        missing.append(f"{home}/bin/start-broker.sh does not exist")
    if not any((home / "libs").glob("kafka-streams-*.jar")):
        missing.append(f"{home}/libs has no Kafka Streams jar")
    if importlib.util.find_spec("kafka") is None:
        missing.append("the Python client kafka-python is not installed")
    if not missing:
        return None
    return "live-Kafka test skipped: " + "; ".join(missing) + ". To enable: " + ENABLE_HINT
