"""The layout rules of docs/design.md ("The floors"), checked on the source: one package per concern, arrows only
downward, no import circle, no reaching into another package's underscored modules.

Every import of ``taskassign`` code in ``src/`` counts, including those inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "taskassign"

#: The floors, lowest first. A unit may import its own floor's other units only where that makes no
#: circle (checked below), and any lower floor; never a higher one.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("ids", "errors", "configs", "model", "validation"),  # the KIP-924 contract
    ("internals",),  # the working state Kafka's assignors share
    ("wire", "rack", "standby"),  # codecs, rack-aware optimisation, standby placement
    ("task_assignment_utils", "utils"),  # the public TaskAssignmentUtils, built on rack/ and standby/
    ("assignors",),  # the assignors
    ("formats", "analysis", "streams_protocol"),  # the files; judging assignments; KIP-1071 streams groups
    ("leader",),  # one rebalance on the group leader
    ("simulate", "fleet", "capture", "report", "pipeline", "bridge"),  # runs over time, fleets, clusters, reports
    ("api",),  # the calls the CLI and users make
    ("cli",),  # the command
    ("__init__", "__main__"),  # the package's face
)
RANK = {unit: floor for floor, units in enumerate(FLOORS) for unit in units}
MAX_LOOSE_MODULES = 8


def _modules() -> dict[str, Path]:
    """Dotted module name (``taskassign.leader.run``) -> file."""
    result = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        result[".".join(parts)] = path
    return result


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Every taskassign module ``path`` imports (``from a.b import c`` counts ``a.b.c`` when that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "taskassign":
                continue
            submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):  # names defined in the module itself
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "taskassign")
    return {name for name in found if name in MODULES}


IMPORTS = {name: _imports(path) for name, path in MODULES.items()}


def unit_of(module: str) -> str:
    """The layout unit of a module: its top-level package or loose module (``taskassign`` itself is
    ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_unit_has_a_floor() -> None:
    units = {unit_of(m) for m in MODULES}
    assert not units - RANK.keys(), f"place these in FLOORS (docs/design.md's floors): {sorted(units - RANK.keys())}"


def test_no_import_runs_upward() -> None:
    upward = sorted(
        f"{module} imports {target} ({unit_of(module)} is below {unit_of(target)})"
        for module, targets in IMPORTS.items()
        for target in targets
        if RANK[unit_of(module)] < RANK[unit_of(target)]
    )
    assert not upward, "\n".join(upward)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_circle_between_units() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in IMPORTS.items():
        for target in targets:
            if unit_of(module) != unit_of(target):
                graph[unit_of(module)].add(unit_of(target))
    circle = _cycle(graph)
    assert circle is None, " -> ".join(circle or ())


def test_no_circle_between_modules() -> None:
    """Not even inside a package (a package's ``__init__`` re-exporting its modules is not a circle: the
    edge from a module to its own package's ``__init__`` is left out)."""
    graph = {m: {t for t in ts if t != m and not m.startswith(t + ".")} for m, ts in IMPORTS.items()}
    circle = _cycle(graph)
    assert circle is None, " -> ".join(circle or ())


def test_no_package_reaches_into_another_packages_private_modules() -> None:
    reaching = sorted(
        f"{module} imports {target}"
        for module, targets in IMPORTS.items()
        for target in targets
        if any(part.startswith("_") and not part.startswith("__") for part in target.split("."))
        and unit_of(module) != unit_of(target)
    )
    assert not reaching, "\n".join(reaching)


def test_few_loose_modules_at_the_top() -> None:
    loose = sorted(p.name for p in SRC.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= MAX_LOOSE_MODULES, loose


def test_only_the_pipeline_imports_pyspark() -> None:
    spark = sorted(
        name for name, path in MODULES.items()
        if unit_of(name) != "pipeline" and "pyspark" in {
            n.split(".")[0] for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            for n in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                      [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        }
    )
    assert not spark, spark


@pytest.mark.parametrize("package", sorted({unit_of(m) for m in MODULES if (SRC / unit_of(m)).is_dir()}))
def test_every_package_says_what_it_holds(package: str) -> None:
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc) > len(package) + 20, f"{package}/__init__.py needs a docstring saying what it holds"
