"""Real Spark services on 127.0.0.1 from the installed pyspark: a standalone master and worker, and a
Spark Connect server. Each is a child process of the test, stopped (by its own pid) when done."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": HOST, "PYSPARK_PYTHON": sys.executable,
                "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"})
    return env


def _wait_for(port: int, process: subprocess.Popen[bytes], log: Path, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}): {log.read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not listen on {HOST}:{port} within {timeout}s: {log.read_text()[-3000:]}")


@contextmanager
def _process(args: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(args, env=_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def standalone_cluster(workdir: Path, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """A standalone master and one worker; yields the master URL."""
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port = free_port()
    with ExitStack() as stack:
        master = stack.enter_context(_process(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port),
             "--webui-port", str(free_port())], workdir / "master.log"))
        _wait_for(port, master, workdir / "master.log", "spark master")
        url = f"spark://{HOST}:{port}"
        worker_port = free_port()
        worker = stack.enter_context(_process(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--port", str(worker_port),
             "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
             "--work-dir", str(workdir / "work"), url], workdir / "worker.log"))
        _wait_for(worker_port, worker, workdir / "worker.log", "spark worker")
        _wait_for_registration(workdir / "master.log", master)
        yield url


def _wait_for_registration(log: Path, master: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "Registering worker" in log.read_text(errors="replace"):
            return
        if master.poll() is not None:
            raise RuntimeError(f"spark master exited: {log.read_text()[-3000:]}")
        time.sleep(0.5)
    raise RuntimeError(f"no worker registered with the master: {log.read_text()[-3000:]}")


@contextmanager
def connect_server(workdir: Path) -> Iterator[str]:
    """A Spark Connect server (local[2] behind it); yields its ``sc://`` URL."""
    port = free_port()
    args = [str(SPARK_HOME / "bin" / "spark-submit"), "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[2]",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", f"spark.connect.grpc.binding.address={HOST}",
            "--conf", "spark.ui.enabled=false", "--conf", f"spark.executorEnv.PYSPARK_PYTHON={sys.executable}"]
    with _process(args, workdir / "connect.log") as server:
        _wait_for(port, server, workdir / "connect.log", "spark connect server")
        yield f"sc://{HOST}:{port}"
