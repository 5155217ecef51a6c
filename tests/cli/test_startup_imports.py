"""``taskassign --help``, ``--version`` and every command's ``-h`` import only what the answer needs: the CLI's
own modules and typer/rich, never the engine, numpy, OR-Tools, Spark, pandas, pyarrow, kafka-python or matplotlib
(they took 5-8x the time of typer's own start; benchmarks/bench_cli_startup.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys

import typer.main

from taskassign.cli import app

#: Third-party packages only a command's run may import.
HEAVY_PACKAGES = ("numpy", "ortools", "pyarrow", "pandas", "pyspark", "kafka", "matplotlib", "scipy", "networkx")
#: The taskassign modules a help or version answer may import: the package's face, the CLI, the errors it catches.
LIGHT_TASKASSIGN = ("taskassign", "taskassign.cli", "taskassign.errors")


def _help_calls() -> list[list[str]]:
    """The root's help and version, and ``-h`` of every command and subcommand."""
    calls = [[], ["--help"], ["-h"], ["--version"]]
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        calls.append([name, "-h"])
        calls.extend([name, sub, "-h"] for sub in getattr(command, "commands", {}))
    return calls


_PROBE = """
import json, sys
before = set(sys.modules)  # the first call is charged with what importing the CLI imports
for argv in json.loads(sys.argv[1]):
    from taskassign.cli import main
    sys.argv = ["taskassign", *argv]
    code = 0
    try:
        main()
    except SystemExit as exit:
        code = exit.code
    new = sorted(set(sys.modules) - before)
    print("@@probe " + json.dumps({"argv": argv, "exit": code, "imported": new}), flush=True)
    before.update(new)
"""


def _heavy(module: str) -> bool:
    root = module.split(".")[0]
    if root == "taskassign":
        return not any(module == light or module.startswith(light + ".") for light in LIGHT_TASKASSIGN[1:]) \
            and module != "taskassign"
    return root in HEAVY_PACKAGES


def test_help_and_version_import_neither_the_engine_nor_its_dependencies() -> None:
    calls = _help_calls()
    assert ["assign", "-h"] in calls and ["fleet", "generate", "-h"] in calls
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(calls)], capture_output=True, text=True,
                          check=True)
    reports = [json.loads(line.removeprefix("@@probe ")) for line in done.stdout.splitlines()
               if line.startswith("@@probe ")]
    assert [r["argv"] for r in reports] == calls
    assert [r["exit"] for r in reports] == [2] + [0] * (len(calls) - 1)  # no arguments: the help, as a usage error
    heavy = {" ".join(r["argv"]) or "(no arguments)": [m for m in r["imported"] if _heavy(m)] for r in reports}
    assert not {call: modules for call, modules in heavy.items() if modules}, heavy
