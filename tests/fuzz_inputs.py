"""Mutated inputs for every reader taskassign has, and the harness that sorts what each one did.

A reader must either accept an input (and then what comes after it works: an accepted scenario is
assigned and its assignment file reads back, an accepted snapshot bucket reconciles row for row) or refuse
it with a UserInputError that says where (exit code 2 on the command line). Anything else is a *finding*.

Inputs start from valid documents (the shipped examples, and documents taskassign itself wrote) and get
1-4 mutations: JSON-level ones (a value replaced by a hostile one, a key or element deleted, duplicated
or added, values swapped) or text-level ones (bytes flipped, inserted, truncated). Everything is drawn
from one ``random.Random``, so a seed reproduces an input: tests/test_robustness.py drives it with
Hypothesis (which shrinks a failing input), benchmarks/fuzz_inputs.py with plain seeds at volume.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

LONG_MAX = 2**63 - 1
#: Values that break careless readers: wrong types, extremes, odd strings, odd shapes.
HOSTILE: tuple[Any, ...] = (
    None, True, False, 0, -1, -2, -3, 1, 2**31 - 1, 2**31, LONG_MAX, LONG_MAX + 1, -(2**63) - 1, 10**30,
    0.5, -0.0, 1e308, "", " ", "x", "0_0", "-1_0", "0_-1", "99999999999_0", "a" * 300, "\u0000", "\t\n",
    "ö中😀", "\u202e", "00000000-0000-0000-0000-000000000001", "zzzzzzzz-0000-0000-0000-000000000001",
    "host:99999", "../../x:Y", "os:system", "/dev/zero", [], {}, [None], [1, 1], ["x", "x"], {"": ""},
    {"k": None}, [[[[[[[[[[[]]]]]]]]]]],
)


@dataclass(frozen=True)
class Outcome:
    """What a reader did with one input: ``accepted``, ``refused`` (a UserInputError: ``error`` is its
    type and message) or ``finding`` (anything else: ``error`` and a short traceback)."""

    reader: str
    kind: str
    error: str = ""
    detail: str = ""
    input: str = ""


# -- mutations ------------------------------------------------------------------------------------------------

def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``doc`` (dict keys and list indices), the root included."""
    found = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _nodes(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += _nodes(value, (*path, i))
    return found


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def mutate_json(doc: Any, rng: random.Random) -> Any:
    """``doc`` with 1-4 JSON-level mutations."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
        paths = _nodes(doc)
        path = rng.choice(paths)
        op = rng.randrange(6)
        if not path:
            if op == 0:
                doc = copy.deepcopy(rng.choice(HOSTILE))  # never the shared palette itself: later ops edit it
            continue
        parent, last = _get(doc, path[:-1]), path[-1]
        if op <= 1:
            parent[last] = copy.deepcopy(rng.choice(HOSTILE))
        elif op == 2:
            del parent[last]
        elif op == 3 and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif op == 3 and isinstance(parent, dict):
            parent[rng.choice(["extra", "x", last + "_", "format"])] = copy.deepcopy(rng.choice(HOSTILE))
        elif op == 4:
            other = rng.choice(paths)
            if other and not _is_prefix(path, other) and not _is_prefix(other, path):
                parent[last] = copy.deepcopy(_get(doc, other))
        else:
            value = parent[last]
            if isinstance(value, int) and not isinstance(value, bool):
                parent[last] = rng.choice([value - 1, value + 1, -value, value * 2**32, LONG_MAX - value])
            elif isinstance(value, str):
                parent[last] = rng.choice([value + value, value[:-1], value.upper(), value + "\u0301", " " + value])
    return doc


def _is_prefix(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return b[:len(a)] == a


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(buf)) if buf else 0
        op = rng.randrange(4)
        if op == 0 and buf:
            buf[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            del buf[at:]
        elif op == 2:
            buf[at:at] = rng.choice([rng.randbytes(rng.randint(1, 6)), b"\xff", b"\\ud800", b"[" * 50, b"\x00"])
        elif buf:
            buf[at] = rng.choice(b'{}[]",:\\0-9e')
    return bytes(buf)


def mutated_text(doc: Any, rng: random.Random) -> bytes:
    """A mutated document's bytes: mostly JSON-level mutations, sometimes byte-level ones."""
    if rng.random() < 0.8:
        return json.dumps(mutate_json(doc, rng), ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    return mutate_bytes(json.dumps(doc).encode(), rng)


# -- the documents mutations start from -----------------------------------------------------------------------

@cache
def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def scenarios() -> list[Any]:
    return [_json(p) for p in sorted((EXAMPLES / "scenarios").glob("*.json"))]


@cache
def _written() -> dict[str, Any]:
    """Documents taskassign writes from the example scenario: an assignment file (with metrics), a
    simulation.json, wire messages as `decode` prints them."""
    from taskassign.analysis.metrics import compute_metrics
    from taskassign.formats.events import parse_events
    from taskassign.formats.scenario import parse_scenario
    from taskassign.formats.wire_documents import WIRE_FORMAT, message_to_json
    from taskassign.ids import ProcessId, TaskId
    from taskassign.leader.assign import assign_scenario, result_to_document
    from taskassign.simulate import simulate
    from taskassign.wire import AssignmentInfo, HostInfo, SubscriptionInfo

    scenario = parse_scenario(scenarios()[-1])
    result = assign_scenario(scenario, "high_availability")
    assignment = result_to_document(result)
    assignment["metrics"] = compute_metrics(scenario.state, result.group).to_dict()
    events = parse_events(_json(EXAMPLES / "events" / "scale-out.events.json"))
    simulation = simulate(scenario, events, "high_availability").to_document()
    pid = ProcessId.of_ints(1, 2)
    wire = [
        {"format": WIRE_FORMAT, **message_to_json(SubscriptionInfo.of(v, pid, {TaskId(0, 1): 5, TaskId(1, 0): -2},
                                                                     user_endpoint="h:1"))}
        for v in (3, 7, 10, 11)
    ] + [
        {"format": WIRE_FORMAT, **message_to_json(AssignmentInfo(
            v, v, (TaskId(0, 0), TaskId(0, 1)), ((TaskId(1, 0), (("t", 0),)),),
            ((HostInfo("h", 1), (("t", 0), ("u", 1))),) if v >= 2 else (), (), 0, 2**63 - 1))}
        for v in (2, 5, 7, 10, 11)
    ]
    return {"assignment": assignment, "simulation": simulation, "wire": wire}


# -- the readers ----------------------------------------------------------------------------------------------

def _text(data: bytes) -> Any:
    from taskassign.formats.json_io import load_json_text

    return load_json_text(_utf8(data), "fuzz")


ASSIGNORS = ("high_availability", "sticky", "legacy_sticky", "fallback_prior", "state_aware", "identity")


def make_scenario(rng: random.Random) -> bytes:
    return mutated_text(rng.choice(scenarios()), rng)


def read_scenario(data: bytes, rng: random.Random) -> None:
    from taskassign.analysis.metrics import compute_metrics
    from taskassign.formats.assignment import parse_assignment
    from taskassign.formats.scenario import parse_scenario, scenario_to_dict
    from taskassign.leader.assign import assign_scenario, result_to_document

    scenario = parse_scenario(_text(data))
    result = assign_scenario(scenario, rng.choice(ASSIGNORS))
    document = result_to_document(result)
    document["metrics"] = compute_metrics(scenario.state, result.group).to_dict()
    parse_assignment(_text(json.dumps(document).encode()))  # what assign writes, validate reads
    parse_scenario(_text(json.dumps(scenario_to_dict(scenario)).encode()))


def make_group(rng: random.Random) -> bytes:
    return mutated_text(_json(EXAMPLES / "groups" / "orders-app.group.json"), rng)


def read_group(data: bytes, rng: random.Random) -> None:
    from taskassign.api.rebalance import group_result_to_document, rebalance_group_file
    from taskassign.formats.group import parse_group
    from taskassign.formats.json_io import to_json_text
    from taskassign.formats.scenario import parse_scenario, scenario_to_dict
    from taskassign.leader.group import group_scenario

    spec = parse_group(_text(data))
    run = rebalance_group_file(spec, rng.choice(ASSIGNORS))
    to_json_text(group_result_to_document(run.result, run.comparison))
    parse_scenario(_text(json.dumps(scenario_to_dict(group_scenario(spec))).encode()))


def make_events(rng: random.Random) -> bytes:
    return mutated_text(_json(rng.choice(sorted((EXAMPLES / "events").glob("*.json")))), rng)


def read_events(data: bytes, rng: random.Random) -> None:
    from taskassign.formats.events import Join, Perturb, parse_events
    from taskassign.formats.scenario import parse_scenario
    from taskassign.report.data import parse_simulation
    from taskassign.simulate import simulate

    events = parse_events(_text(data))
    if any(isinstance(e, Join | Perturb) and (e.count > 20 or e.threads > 16) for e in events.events):
        return  # read; running it is bounded, but too slow for thousands of inputs
    # Bounded runs (max_rebalances, max_duration_ms, the sample cap), made smaller for volume.
    events = dataclasses.replace(events, max_rebalances=min(events.max_rebalances, 30),
                                 sample_interval_ms=max(events.sample_interval_ms, 1_000))
    result = simulate(parse_scenario(scenarios()[-1]), events, "high_availability")
    parse_simulation(_text(json.dumps(result.to_document()).encode()))


def make_assignment(rng: random.Random) -> bytes:
    return mutated_text(_written()["assignment"], rng)


def read_assignment(data: bytes, rng: random.Random) -> None:
    from taskassign.formats.assignment import parse_assignment
    from taskassign.formats.scenario import parse_scenario
    from taskassign.validation import check_completeness, validate_task_assignment

    document = parse_assignment(_text(data))
    state = parse_scenario(scenarios()[-1]).state
    validate_task_assignment(state, document.assignment)
    check_completeness(state, document.assignment)


def make_simulation(rng: random.Random) -> bytes:
    return mutated_text(_written()["simulation"], rng)


def read_simulation(data: bytes, rng: random.Random) -> None:
    from taskassign.report.data import parse_simulation

    parse_simulation(_text(data))


def make_wire_document(rng: random.Random) -> bytes:
    return mutated_text(rng.choice(_written()["wire"]), rng)


def read_wire_document(data: bytes, rng: random.Random) -> None:
    from taskassign.formats.json_io import to_json_text
    from taskassign.formats.wire_documents import decode_message, message_from_json, message_to_json

    message = message_from_json(_text(data))
    kind = "subscription_info" if type(message).__name__ == "SubscriptionInfo" else "assignment_info"
    decoded, _ = decode_message(kind, message.encode())
    to_json_text(message_to_json(decoded))


def make_properties(rng: random.Random) -> bytes:
    base = "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n# c\nkey\\u0041=va\\\n  lue\n!x:y\n"
    return mutate_bytes(base.encode("latin-1"), rng)


def read_properties(data: bytes, rng: random.Random) -> None:
    from taskassign.formats.properties import parse_properties

    parse_properties(data.decode("iso-8859-1"), "fuzz")


def make_topology(rng: random.Random) -> bytes:
    return mutate_bytes(rng.choice(sorted((ROOT / "tests" / "capture" / "data" / "topologies").glob("*.txt")))
                        .read_bytes(), rng)


def read_topology(data: bytes, rng: random.Random) -> None:
    from taskassign.capture.topology_text import parse_topology_description

    parse_topology_description(_utf8(data), source="fuzz")


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:  # what read_input_text refuses, as it refuses it
        from taskassign.errors import InputFileError

        raise InputFileError("fuzz", f"not UTF-8 text (byte offset {exc.start})") from None


#: Every reader: how its inputs are made, and what reading one (and using what it accepts) is.
READERS: Mapping[str, tuple[Callable[[random.Random], bytes], Callable[[bytes, random.Random], None]]] = {
    "scenario": (make_scenario, read_scenario),
    "group": (make_group, read_group),
    "events": (make_events, read_events),
    "assignment": (make_assignment, read_assignment),
    "simulation": (make_simulation, read_simulation),
    "wire_document": (make_wire_document, read_wire_document),
    "properties": (make_properties, read_properties),
    "topology_text": (make_topology, read_topology),
}


def attempt(reader: str, rng: random.Random) -> Outcome:
    """One input through ``reader``: accepted, refused, or a finding (with the input, to reproduce it)."""
    make, read = READERS[reader]
    data = make(rng)
    shown = data.decode("utf-8", "backslashreplace")[:2000]
    try:
        read(data, rng)
    except UserInputError as exc:
        return Outcome(reader, "refused", type(exc).__name__, str(exc)[:300])
    except Exception as exc:  # exactly what the fuzz looks for
        return Outcome(reader, "finding", repr(exc)[:300], traceback.format_exc(limit=8)[-2000:], shown)
    return Outcome(reader, "accepted")


# -- the pipeline's row checks ----------------------------------------------------------------------------------

INT32, INT64 = (-(2**31), 2**31 - 1), (-(2**63), LONG_MAX)
_BY_TYPE: Mapping[str, tuple[Any, ...]] = {
    "string": (None, "", " ", "x", "0_0", "x1", "orders", "clicks", "orders-app", "other-app", "active", "standby",
               "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-0000000000ff", "a:1", "a" * 300,
               "ö中😀", b"\xff\xfe-a", b"r\xc3"),
    "int": (None, -1, 0, 1, 2, 7, INT32[0], INT32[1]),
    "long": (None, -3, -2, -1, 0, 1, 70, 10**12, INT64[0], INT64[1], LONG_MAX - 600_000),
    "array<string>": (None, [], [None], [""], ["orders"], ["orders", "orders"], ["clicks", "orders"], ["r1"],
                      [b"\xff"], ["x"] * 50),
    "map<string,string>": (None, {}, {"": ""}, {"num.standby.replicas": "x"}, {"num.standby.replicas": "3"},
                           {"probing.rebalance.interval.ms": str(LONG_MAX)}, {"zone": "z" * 31}, {"k" * 21: "v"},
                           {f"k{i}": "v" for i in range(6)}, {"rack.aware.assignment.tags": "zone"}),
    "binary": (None, b"", b"\x00\x00\x00", b"\x00\x00\x00\x0b" + bytes(40)),
    "array<array<string>>": (None, [], [[]], [["orders"]], [["orders", "nope"]], [None]),
}


def snapshot_rows(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """Two small applications' rows with 1-6 mutations: values replaced by hostile ones of the column's type
    (invalid UTF-8 as bytes in string columns), rows duplicated, deleted, moved to the other application."""
    from taskassign.fleet.tables import INPUT_TABLES
    from tests.fleet.snapshots import APP, base_rows

    rows = base_rows()
    for name, table in list(rows.items()):
        rows[name] = table + [{**r, "app_id": "other-app"} for r in table if r.get("app_id") == APP]
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(sorted(INPUT_TABLES))
        table = rows.setdefault(name, [])
        op = rng.randrange(5)
        if not table or op == 4:
            table.append({c.name: rng.choice(_BY_TYPE[c.type]) for c in INPUT_TABLES[name].columns})
            continue
        i = rng.randrange(len(table))
        if op <= 1:
            column = rng.choice(INPUT_TABLES[name].columns)
            table[i] = {**table[i], column.name: copy.deepcopy(rng.choice(_BY_TYPE[column.type]))}
        elif op == 2:
            table.append(copy.deepcopy(table[i]))
        else:
            del table[i]
    return rows


def snapshot_tables(rows: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Rows as the bucket receives them from Spark: Arrow tables, strings with their bytes as given."""
    import pyarrow as pa

    from taskassign.fleet.bucket import bucket_table
    from taskassign.fleet.tables import INPUT_TABLES

    tables = {}
    for name, spec in INPUT_TABLES.items():
        table_rows = [dict(r) for r in rows.get(name, [])]
        raw: dict[str, list[Any]] = {}
        for column in spec.columns:
            if column.type in ("string", "array<string>") and any(_has_bytes(r.get(column.name)) for r in table_rows):
                raw[column.name] = [r.get(column.name) for r in table_rows]
                for r in table_rows:
                    r[column.name] = None
        table = bucket_table(spec, table_rows)
        for column_name, values in raw.items():
            index = table.schema.get_field_index(column_name)
            if table.schema.field(index).type == pa.string():
                column = pa.array([_as_bytes(v) for v in values], pa.binary()).view(pa.string())
            else:
                column = pa.array([None if v is None else [_as_bytes(x) for x in v] for v in values],
                                  pa.list_(pa.binary())).view(pa.list_(pa.string()))
            table = table.set_column(index, column_name, column)
        tables[name] = table
    return tables


def _has_bytes(value: Any) -> bool:
    return isinstance(value, bytes) or (isinstance(value, list) and any(isinstance(v, bytes) for v in value))


def _as_bytes(value: Any) -> bytes | None:
    return value if value is None or isinstance(value, bytes) else str(value).encode()


def read_snapshot_bucket(rng: random.Random) -> Outcome:
    """A mutated bucket through the row checks, derivations and the engine: it must not raise, its rows must
    reconcile (in = used + rejected, per table), and its output rows must fit the output tables' types."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from taskassign.fleet import reasons as R
    from taskassign.fleet.bucket import process_bucket
    from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
    from taskassign.pipeline.schemas import KIND_APP, KIND_CLIENT, KIND_CONSUMER, KIND_SCHEMAS

    rows = snapshot_rows(rng)
    shown = json.dumps(rows, default=lambda b: b.decode("utf-8", "backslashreplace"))[:3000]
    try:
        tables = snapshot_tables(rows)
    except (pa.ArrowException, OverflowError, TypeError):
        return Outcome("snapshot_bucket", "refused", "unrepresentable", "the rows do not fit the table's types")
    try:
        result = process_bucket(tables, allow_plugins=False)
        for name, table in tables.items():
            used = sum((r["source_rows"] or {}).get(name, 0) for r in result.results
                       if r["status"] != R.STATUS_REJECTED)
            rejected = sum(1 for e in result.errors if e["table"] == name and e["effect"] == R.EFFECT_REJECTED)
            if table.num_rows != used + rejected:
                return Outcome("snapshot_bucket", "finding", f"{name}: {table.num_rows} rows in, {used} used, "
                                                             f"{rejected} rejected", "", shown)
        schemas = {kind: to_arrow_schema(KIND_SCHEMAS[kind]) for kind in (KIND_APP, KIND_CLIENT, KIND_CONSUMER)}
        pa.Table.from_pylist([app_row(a) for a in result.results], schema=schemas[KIND_APP])
        pa.Table.from_pylist([c for a in result.results for c in client_rows(a)], schema=schemas[KIND_CLIENT])
        pa.Table.from_pylist([c for a in result.results for c in consumer_rows(a)], schema=schemas[KIND_CONSUMER])
        json.dumps(result.errors)
    except Exception as exc:
        return Outcome("snapshot_bucket", "finding", repr(exc)[:300], traceback.format_exc(limit=8)[-2000:], shown)
    rejected_apps = sum(1 for r in result.results if r["status"] == R.STATUS_REJECTED)
    return Outcome("snapshot_bucket", "refused" if rejected_apps == len(result.results) else "accepted")


# -- the command line -------------------------------------------------------------------------------------------

def _optimize_scenario(rng: random.Random) -> bytes:
    """A scenario with a current assignment to optimise (a golden case of Kafka's own), mutated."""
    return mutated_text(_json(ROOT / "tests" / "golden" / "rack_optimize_active" / "optact-spec-e8.scenario.json"), rng)


#: Each command with how its input file is made (``{input}`` in the arguments) and its other arguments.
COMMANDS: Mapping[str, tuple[Callable[[random.Random], bytes], tuple[str, ...]]] = {
    "assign": (make_scenario, ("assign", "{input}", "--json", "--metrics", "-o", "{out}/a.json")),
    "validate": (make_assignment, ("validate", str(EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"),
                                   "{input}")),
    "optimize": (_optimize_scenario, ("optimize", "{input}", "--active")),
    "simulate": (make_events, ("simulate", str(EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"),
                               "--events", "{input}", "--out", "{out}/sim")),
    "rebalance": (make_group, ("rebalance", "{input}", "--json")),
    "encode": (make_wire_document, ("encode", "{input}")),
    "decode": (lambda rng: mutate_bytes(bytes.fromhex("000b0000000b00000000000000000000000000010000000100"), rng),
               ("decode", "subscription-info", "@{input}")),
}


def cli_attempt(command: str, rng: random.Random, workdir: Path) -> Outcome:
    """One mutated input file through the ``taskassign`` command: exit 0 or 1 (a result), or exit 2 with one
    ``error:`` line and no traceback; anything else (an exception escaping, another exit code) is a finding."""
    from typer.testing import CliRunner

    from taskassign.cli import app

    make, args = COMMANDS[command]
    data = make(rng)
    if command == "simulate":
        data = _bounded_events(data)
    path = workdir / "input"
    path.write_bytes(data)
    argv = [a.replace("{input}", str(path)).replace("{out}", str(workdir)) for a in args]
    result = CliRunner().invoke(app, argv)
    shown = data.decode("utf-8", "backslashreplace")[:2000]
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    if escaped or result.exit_code not in (0, 1, 2) or "Traceback" in result.output:
        detail = "".join(traceback.format_exception(result.exception)) if escaped and result.exception else ""
        return Outcome(command, "finding", f"exit {result.exit_code}: {result.exception!r}"[:300],
                       (detail or result.output)[-2000:], shown)
    if result.exit_code == 2:
        if "error:" not in result.output:
            return Outcome(command, "finding", "exit 2 without an error line", result.output[-2000:], shown)
        return Outcome(command, "refused", "exit 2", " ".join(result.output.split())[:300])
    if result.exit_code == 1 and "failed:" in result.output:
        return Outcome(command, "finding", "exit 1 (failed)", result.output[-2000:], shown)
    return Outcome(command, "accepted")


def _bounded_events(data: bytes) -> bytes:
    """Keep a mutated events script cheap to run (its settings are bounded anyway, but thousands of runs
    add up): few rebalances, few clients."""
    try:
        doc = json.loads(data)
    except ValueError:
        return data
    if isinstance(doc, dict):
        doc["max_rebalances"] = 20
        doc["sample_interval_ms"] = 600_000
        for event in doc.get("events", []) if isinstance(doc.get("events"), list) else []:
            if isinstance(event, dict) and isinstance(event.get("count"), int) and event["count"] > 20:
                event["count"] = 20
            if isinstance(event, dict) and isinstance(event.get("threads"), int) and event["threads"] > 16:
                event["threads"] = 16
    return json.dumps(doc).encode("utf-8", "surrogatepass")
