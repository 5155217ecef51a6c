"""A long-running Java program that answers questions for the tests: the reference implementation, run.

Where taskassign ports a piece of Java (``Properties.load``, Kafka's JAAS parser), the tests compare the
port with the real thing on many inputs. Starting a JVM per input would cost a third of a second each, so
the program is compiled once (``javac`` into a temporary directory), started once, and asked one question
per line on its stdin; it answers one JSON line on its stdout. Tests using it are skipped where there is
no JDK.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ANSWER_TIMEOUT_S = 30.0


def require_jdk() -> None:
    """Skip the calling test unless ``javac`` and ``java`` are on PATH."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (`javac` and `java` on PATH) to compare with Java's own implementation")


class JavaOracle:
    """One Java program (``source``, a class of the default package with a ``main``) compiled into
    ``workdir`` and running; ``ask`` sends it one line and returns its JSON answer."""

    def __init__(self, source: Path, workdir: Path, classpath: tuple[str, ...] = ()) -> None:
        require_jdk()
        classes = workdir / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        path = ":".join((str(classes), *classpath))
        compiled = subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", path, str(source)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if compiled.returncode != 0:
            raise AssertionError(f"javac failed on {source}:\n{compiled.stderr}")
        # stderr goes to a file: a pipe nobody reads would fill up with a library's logging and block Java.
        self.stderr_path = workdir / "stderr.log"
        with self.stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", path, source.stem],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                encoding="utf-8",
            )

    def ask(self, line: str) -> dict[str, Any]:
        """The program's answer to one line (which must not contain a line break)."""
        assert "\n" not in line and "\r" not in line, line
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            stderr = self.stderr_path.read_text(errors="replace")
            raise AssertionError(f"the Java oracle died (exit code {self.process.poll()}):\n{stderr}")
        result: dict[str, Any] = json.loads(answer)
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(ANSWER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
