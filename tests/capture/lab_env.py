"""Where the live-Kafka lab finds Kafka and Java, and why it cannot run when it cannot.

Kept free of kafka-python imports: the test collection asks it before anything else, and a machine without
the client must still collect (and skip) the `kafka` tests instead of failing the whole directory.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

ENABLE_HINT = (
    "install Java 17+ (a JDK: `java` and `javac` on PATH, e.g. `apt-get install openjdk-17-jdk-headless`), "
    "set KAFKA_HOME=/path/to/kafka (a plain Kafka distribution, 4.x: libs/ with the broker, Kafka Streams and "
    "their dependencies, and config/server.properties), and install the project's dependencies "
    "(`pip install -e .`: kafka-python 2.x)"
)


def kafka_home() -> Path | None:
    """The Kafka distribution the lab runs: `$KAFKA_HOME`, or None when it is not set (the live tests are opt-in:
    there is no default, so the default test suite never starts a broker)."""
    configured = os.environ.get("KAFKA_HOME")
    return Path(configured).expanduser().resolve() if configured else None


def require_kafka_home() -> Path:
    """`$KAFKA_HOME`, for code that runs only once `lab_unavailable_reason()` said the lab can run."""
    home = kafka_home()
    if home is None:
        raise RuntimeError("KAFKA_HOME is not set. To enable the live-Kafka tests: " + ENABLE_HINT)
    return home


def lab_unavailable_reason(home: Path | None = None) -> str | None:
    """Why live-Kafka tests cannot run here (None when they can); the reason ends with how to enable them."""
    home = home or kafka_home()
    missing = []
    if shutil.which("java") is None:
        missing.append("`java` is not on PATH")
    if home is None:
        missing.append("KAFKA_HOME is not set")
    else:
        libs = home / "libs"
        if not any(libs.glob("kafka_2.13-*.jar")):
            missing.append(f"{libs} has no Kafka broker jar (kafka_2.13-*.jar)")
        if not any(libs.glob("kafka-streams-*.jar")):
            missing.append(f"{libs} has no Kafka Streams jar")
        if not (home / "config" / "server.properties").is_file():
            missing.append(f"{home}/config/server.properties does not exist")
    if importlib.util.find_spec("kafka") is None:
        missing.append("the Python client kafka-python is not installed")
    if not missing:
        return None
    return "live-Kafka test skipped: " + "; ".join(missing) + ". To enable: " + ENABLE_HINT
