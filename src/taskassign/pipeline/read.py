"""Reading a fleet snapshot directory: find each table's files, read them in their format, type them.

Each table is ``<name>.parquet``, ``<name>.csv`` or ``<name>.jsonl``/``<name>.json`` (a file or a
directory of part files), or a directory ``<name>/`` of such part files. Whatever the format, a table
comes back with its ``TableSpec``'s typed columns plus two bookkeeping columns:

* ``_source_row``: for a row that could not be read, its raw text (a CSV line's fields or a JSON line);
  null otherwise: the errors table shows a readable row as JSON of its typed columns (``source_row``), so
  no table carries a JSON copy of every row;
* ``_malformed``: why the row could not be read (a CSV line with the wrong number of fields, a JSON line
  that does not parse or has an unknown key, a cell that is not of its column's type), else null.

A missing required table, a missing required column or an unknown column is a UserInputError naming
the table and the column: those are mistakes in the snapshot as a whole, not in one row.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from taskassign.errors import UserInputError
from taskassign.fleet.checks import MALFORMED, SOURCE_ROW
from taskassign.fleet.tables import INPUT_TABLES, TableSpec
from taskassign.pipeline.raw_text import LATIN_1, bytes_as_text, escaped, lone_surrogate_escape, not_utf8
from taskassign.pipeline.schemas import spark_type, table_schema

__all__ = (
    "MALFORMED",
    "PIECE_READ_FAILED",
    "SOURCE_ROW",
    "SnapshotTable",
    "check_parquet_files",
    "locate_snapshot",
    "locate_table",
    "parquet_files",
    "parquet_rows",
    "read_snapshot",
    "read_table",
    "source_row",
    "unreadable_file",
)

_CORRUPT = "_corrupt_record"
_BAD_BYTES, _LONE, _TEXT_PROBLEM, _SHOWN = "_bad_bytes", "_lone_surrogate", "_text_problem", "_shown"
_SUFFIXES: Mapping[str, tuple[str, ...]] = {
    "parquet": (".parquet",),
    "csv": (".csv",),
    "json": (".jsonl", ".json"),
}


@dataclass(frozen=True)
class SnapshotTable:
    """One input table: where it came from and its typed rows (None path: an absent optional table).
    ``columns``: the ``TableSpec``'s columns the file has (the others are null)."""

    name: str
    path: str | None
    format: str | None
    df: DataFrame
    columns: tuple[str, ...] = ()


def _format_of_directory(directory: Path) -> str | None:
    found = set()
    for child in directory.iterdir():
        if child.name.startswith(("_", ".")):
            continue
        _check_readable_kind(child)
        for fmt, suffixes in _SUFFIXES.items():
            if child.name.endswith(suffixes):
                found.add(fmt)
    if len(found) > 1:
        raise UserInputError(f"{directory}: mixes {' and '.join(sorted(found))} files; use one format per table")
    return found.pop() if found else None


def locate_table(directory: Path, name: str) -> tuple[Path, str] | None:
    """The path and format of table ``name`` in ``directory``; None if absent; an error if ambiguous."""
    candidates: list[tuple[Path, str]] = []
    for fmt, suffixes in _SUFFIXES.items():
        for suffix in suffixes:
            path = directory / f"{name}{suffix}"
            if path.exists():
                _check_readable_kind(path)
                candidates.append((path, fmt))
    plain = directory / name
    if plain.is_dir():
        found = _format_of_directory(plain)
        if found is None:
            raise UserInputError(f"{plain}: no .parquet, .csv or .jsonl files in the directory of table {name!r}")
        candidates.append((plain, found))
    if len(candidates) > 1:
        listed = ", ".join(str(path) for path, _ in candidates)
        raise UserInputError(f"table {name!r} is given more than once ({listed}); keep one")
    return candidates[0] if candidates else None


def locate_snapshot(directory: str | Path) -> dict[str, tuple[Path, str] | None]:
    """Every input table's path and format in the snapshot ``directory`` (None: an absent optional
    table); an error for a missing required table or an ambiguous one."""
    root = Path(directory)
    if not root.is_dir():
        raise UserInputError(f"{root}: not a directory (expected a fleet snapshot: docs/pipeline.md)")
    located: dict[str, tuple[Path, str] | None] = {}
    for name, spec in INPUT_TABLES.items():
        found = locate_table(root, name)
        if found is None and not spec.optional:
            raise UserInputError(f"{root}: table {name!r} is missing (expected {name}.parquet, {name}.csv, "
                                 f"{name}.jsonl or a directory {name}/)")
        located[name] = found
    return located


def read_snapshot(spark: Any, directory: str | Path) -> dict[str, SnapshotTable]:
    """Every input table of the snapshot in ``directory`` (absent optional tables are empty)."""
    tables = {}
    for name, found in locate_snapshot(directory).items():
        spec = INPUT_TABLES[name]
        if found is None:
            tables[name] = SnapshotTable(name, None, None, _empty(spark, spec))
            continue
        path, fmt = found
        df, columns = read_table(spark, spec, path, fmt)
        tables[name] = SnapshotTable(name, str(path), fmt, df, columns)
    return tables


def _empty(spark: Any, spec: TableSpec) -> DataFrame:
    schema = StructType([*table_schema(spec).fields, StructField(SOURCE_ROW, StringType()),
                         StructField(MALFORMED, StringType())])
    empty: DataFrame = spark.createDataFrame([], schema)
    return empty


def _check_readable_kind(path: Path) -> None:
    """A table is a regular file or a directory of them: a FIFO, socket or device would block Spark's read
    or never end, so it is refused (naming it) before Spark is asked to read anything."""
    if not (path.is_file() or path.is_dir()):
        raise UserInputError(f"{path}: not a regular file or directory (a pipe, socket or device is not read)")


def check_parquet_files(spec: TableSpec, path: Path) -> dict[Path, int]:
    """Every Parquet file of table ``spec`` at ``path``, read up to its footer: rows per file. A file that
    is not Parquet (empty, truncated, something else) is a UserInputError naming the table and the file,
    here on the driver, before Spark's job would fail on it with a JVM stack trace."""
    rows: dict[Path, int] = {}
    for file in parquet_files(path):
        try:
            rows[file] = int(pq.read_metadata(file).num_rows)
        except (OSError, ValueError, pa.ArrowException) as exc:
            size = file.stat().st_size
            what = "is empty (0 bytes)" if size == 0 else f"is not a readable Parquet file ({size} bytes: {exc})"
            raise UserInputError(f"table {spec.name!r}: {file} {what}") from None
    return rows


def read_table(spark: Any, spec: TableSpec, path: Path, fmt: str) -> tuple[DataFrame, tuple[str, ...]]:
    """Read one table file (or directory) in ``fmt`` and type it by ``spec``; also the columns it has."""
    if fmt == "parquet":
        check_parquet_files(spec, path)
        footer = _parquet_schema(path)
        raw = (spark.read.schema(footer) if footer is not None else spark.read).parquet(str(path))
        _check_columns(spec, raw.columns, path)
        source = F.to_json(F.struct(*[F.col(c) for c in raw.columns]), {"ignoreNullFields": "false"})
        return _typed(spec, raw, source, F.lit(None).cast("string")), tuple(raw.columns)
    if fmt == "csv":
        return _read_csv(spark, spec, path)
    return _read_json_lines(spark, spec, path)


def _read_csv(spark: Any, spec: TableSpec, path: Path) -> tuple[DataFrame, tuple[str, ...]]:
    """CSV read as ISO-8859-1, so that every cell keeps its bytes (pipeline.raw_text): a cell that is not
    valid UTF-8, or a JSON cell with a lone surrogate escape, makes its row malformed (shown escaped)."""
    reader = spark.read.option("header", True).option("escape", '"').option("encoding", LATIN_1)
    header = reader.csv(str(path)).columns
    _check_columns(spec, header, path)
    schema = StructType([*(StructField(c, StringType()) for c in header), StructField(_CORRUPT, StringType())])
    latin1 = (reader.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", _CORRUPT).schema(schema)
              .csv(str(path)))
    # Each cell's bytes under a name of its own: a name the next projection reuses for the cleaned value
    # would be taken for it inside escaped()'s lambda.
    cells = latin1.select(*[bytes_as_text(F.col(c)).alias(f"_raw_{i}") for i, c in enumerate(header)],
                          F.col(_CORRUPT))
    text = {c: F.col(f"_raw_{i}") for i, c in enumerate(header)}
    bad = {c: not_utf8(text[c]) for c in header}
    complex_ = {c.name for c in spec.columns if c.is_complex}
    lone = {c: lone_surrogate_escape(text[c]) for c in header if c in complex_}
    any_bad = functools.reduce(lambda a, b: a | b, bad.values(), F.lit(False))
    text_problem: Column = F.lit(None).cast("string")
    for c in reversed(header):
        text_problem = F.when(bad[c], F.lit(f"column {c}: the cell is not valid UTF-8 (source_row shows its bytes "
                                            "escaped)")).otherwise(text_problem)
        if c in lone:
            text_problem = F.when(~bad[c] & lone[c], F.lit(f"column {c}: a \\uD800-\\uDFFF escape without its pair "
                                                           "is not Unicode text")).otherwise(text_problem)
    raw = cells.select(
        *[F.when(bad[c], F.lit(None).cast("string")).otherwise(text[c]).alias(c) for c in header],
        F.col(_CORRUPT), text_problem.alias(_TEXT_PROBLEM),
        F.when(any_bad, F.to_json(F.struct(*[escaped(text[c]).alias(c) for c in header]),
                                  {"ignoreNullFields": "false"})).alias(_SHOWN),
    )
    source = F.coalesce(F.col(_SHOWN), F.to_json(F.struct(*[F.col(c) for c in header]), {"ignoreNullFields": "false"}))
    problem = F.coalesce(F.col(_TEXT_PROBLEM), F.when(
        F.col(_CORRUPT).isNotNull(), F.lit(f"the CSV line does not have the {len(header)} fields of the header")))
    return _typed(spec, raw, source, problem), tuple(header)


def _read_json_lines(spark: Any, spec: TableSpec, path: Path) -> tuple[DataFrame, tuple[str, ...]]:
    """JSON lines: each line's raw bytes are checked before Spark's JSON parser sees them (it would turn
    invalid UTF-8 into U+FFFD and a lone surrogate escape into '?'); such a line is malformed, shown escaped."""
    lines = spark.read.text(str(path)).where(F.trim("value") != "")
    value = F.col("value")
    keys = F.json_object_keys("value")
    known = F.array(*[F.lit(c) for c in spec.column_names])
    string_schema = StructType([StructField(c, StringType()) for c in spec.column_names])
    raw = lines.select(F.col("value").alias(_CORRUPT), not_utf8(value).alias(_BAD_BYTES),
                       lone_surrogate_escape(value).alias(_LONE), keys.alias("_keys"),
                       F.from_json("value", string_schema).alias("_row")
                       ).select(_CORRUPT, _BAD_BYTES, _LONE, "_keys", "_row.*")
    unknown = F.array_except("_keys", known)
    problem = (F.when(F.col(_BAD_BYTES), F.lit("the line is not valid UTF-8 (source_row shows its bytes escaped)"))
               .when(F.col(_LONE), F.lit("the line has a \\uD800-\\uDFFF escape without its pair: not Unicode text"))
               .when(F.col("_keys").isNull(), F.lit("the line is not a JSON object"))
               .when(F.size(unknown) > 0, F.concat(F.lit("unknown key(s) "), F.array_join(unknown, ", "),
                                                   F.lit(f"; table {spec.name} has {', '.join(spec.column_names)}"))))
    source = F.when(F.col(_BAD_BYTES), escaped(F.col(_CORRUPT))).otherwise(F.col(_CORRUPT))
    return _typed(spec, raw, source, problem), spec.column_names


#: How Spark reports a file it could not read (its error condition FAILED_READ_FILE, with the file's URI).
_FAILED_READ = re.compile(r"\[FAILED_READ_FILE[.A-Z_]*\] Encountered error while reading file (\S+?)\.?\s")
#: How the Parquet path's scatter tasks (pipeline.scatter) report a file they cannot read.
PIECE_READ_FAILED = "[TASKASSIGN_READ_FILE]"
_FAILED_PIECE = re.compile(re.escape(PIECE_READ_FAILED) + r" (\S+) ")


def unreadable_file(
    error: BaseException, sources: Mapping[str, tuple[str | None, str | None]]
) -> UserInputError | None:
    """The input error for a Spark job that failed reading a file of one of the snapshot's tables
    (``name -> (path, format)``; a Parquet file whose footer reads but whose data does not, say): naming the
    table and the file. None for any other failure, which stays what it is."""
    found = _FAILED_READ.search(str(error)) or _FAILED_PIECE.search(str(error))
    if found is None:
        return None
    uri = urllib.parse.urlparse(found.group(1))
    file = Path(urllib.parse.unquote(uri.path)) if uri.scheme in ("", "file") else None
    for name, (path, fmt) in sources.items():
        root = Path(path).absolute() if path is not None else None
        if root is not None and file is not None and (file == root or root in file.parents):
            return UserInputError(f"table {name!r}: {file} cannot be read: it is damaged or not a {fmt} file")
    return UserInputError(f"a snapshot file cannot be read: {found.group(1)}")


def parquet_files(path: Path) -> list[Path]:
    """The files of a Parquet table as Spark reads them: the file itself, or every file under the
    directory except hidden ones (a name in the path starting with ``_`` or ``.``), sorted."""
    if path.is_file():
        return [path]
    return [f for f in sorted(path.rglob("*"))
            if f.is_file() and not any(part.startswith(("_", ".")) for part in f.relative_to(path).parts)]


def parquet_rows(path: str | Path) -> int:
    """Rows of a Parquet table (a file or a directory of part files), from its files' footers."""
    return sum(int(pq.read_metadata(f).num_rows) for f in parquet_files(Path(path)))


def _parquet_schema(path: Path) -> StructType | None:
    """The Spark schema of a Parquet table from its first file's footer, read here: given to Spark, it
    spares the schema-inference job Spark otherwise runs per table. None if pyarrow's reading of the
    footer has no Spark equivalent (Spark then infers it)."""
    files = parquet_files(path)
    if not files:
        return None
    try:
        schema: StructType = from_arrow_schema(pq.read_schema(files[0]))
    except (TypeError, ValueError, OSError, PySparkException):
        return None
    return schema


def _check_columns(spec: TableSpec, columns: list[str], path: Path) -> None:
    present = set(columns)
    unknown = [c for c in columns if c not in spec.column_names]
    if unknown:
        raise UserInputError(f"{path}: unknown column(s) {', '.join(unknown)} in table {spec.name!r}; its columns "
                             f"are {', '.join(spec.column_names)}")
    missing = [c.name for c in spec.columns if c.required and c.name not in present]
    if missing:
        raise UserInputError(f"{path}: table {spec.name!r} lacks required column(s) {', '.join(missing)}")


def _typed(spec: TableSpec, raw: DataFrame, source: Column, problem: Column) -> DataFrame:
    """The ``TableSpec``'s columns cast from ``raw`` (absent optional columns null), with _source_row and _malformed."""
    raw_types = {f.name: f.dataType for f in raw.schema.fields}
    typed: list[Column] = []
    checks: list[tuple[Column, Column]] = []
    for column in spec.columns:
        target = spark_type(column.type)
        if column.name not in raw_types:
            typed.append(F.lit(None).cast(target).alias(column.name))
            continue
        value = F.col(column.name)
        if raw_types[column.name] == target:
            typed.append(value.alias(column.name))
            continue
        if isinstance(raw_types[column.name], StringType) and column.is_complex:
            converted = F.from_json(value, target.simpleString())
        elif isinstance(raw_types[column.name], StringType) and column.type == "binary":
            converted = F.try_to_binary(value, F.lit("base64"))
        else:
            converted = value.try_cast(target)
        typed.append(converted.alias(column.name))
        shown = value.cast("string")
        checks.append((value.isNotNull() & converted.isNull(),
                       F.concat(F.lit(f"column {column.name}: "), F.substring(shown, 1, 80),
                                F.lit(f" is not a {column.type}"))))
    reason = problem
    for failed, message in checks:
        reason = F.coalesce(reason, F.when(failed, message))
    return raw.select(*typed, F.when(reason.isNotNull(), source).alias(SOURCE_ROW), reason.alias(MALFORMED))


def source_row(spec: TableSpec) -> Column:
    """A row as the errors table shows it: its raw text if it could not be read, else its columns as JSON."""
    columns = F.struct(*[F.col(c) for c in spec.column_names])
    return F.coalesce(F.col(SOURCE_ROW), F.to_json(columns, {"ignoreNullFields": "false"}))
