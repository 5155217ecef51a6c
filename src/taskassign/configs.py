"""Kafka Streams assignment configs: names, defaults, validation (Kafka's ``AssignmentConfigs``).

``AssignmentConfigs.from_properties`` reads a mapping of Kafka config names, as a scenario file's
``configs`` object or a pipeline table holds them; every error names the offending key. Keys under
``taskassign.`` are this project's own extensions (documented in docs/configs.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from taskassign.errors import ConfigError

__all__ = (
    "ACCEPTABLE_RECOVERY_LAG",
    "CONFIG_KEYS",
    "DEFAULT_ACCEPTABLE_RECOVERY_LAG",
    "DEFAULT_KAFKA_LINE",
    "DEFAULT_MAX_WARMUP_REPLICAS",
    "DEFAULT_NUM_STANDBY_REPLICAS",
    "DEFAULT_PROBING_REBALANCE_INTERVAL_MS",
    "KAFKA_COMPAT",
    "KAFKA_LINES",
    "KAFKA_VERSION",
    "MAX_WARMUP_REPLICAS",
    "NUM_STANDBY_REPLICAS",
    "PROBING_REBALANCE_INTERVAL_MS",
    "RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST",
    "RACK_AWARE_ASSIGNMENT_STRATEGY",
    "RACK_AWARE_ASSIGNMENT_TAGS",
    "RACK_AWARE_ASSIGNMENT_TRAFFIC_COST",
    "RACK_AWARE_STRATEGIES",
    "RACK_SOLVER",
    "RACK_SOLVERS",
    "REBALANCE_PROTOCOL",
    "REBALANCE_PROTOCOL_COOPERATIVE",
    "REBALANCE_PROTOCOL_EAGER",
    "STRATEGY_BALANCE_SUBTOPOLOGY",
    "STRATEGY_MIN_TRAFFIC",
    "STRATEGY_NONE",
    "TASK_ASSIGNOR_CLASS",
    "UNBOUNDED_RECOVERY_LAG",
    "UPGRADE_FROM",
    "AssignmentConfigs",
    "ConfigKey",
    "kafka_line_at_least",
    "parse_config_value",
)

NUM_STANDBY_REPLICAS = "num.standby.replicas"
ACCEPTABLE_RECOVERY_LAG = "acceptable.recovery.lag"
MAX_WARMUP_REPLICAS = "max.warmup.replicas"
PROBING_REBALANCE_INTERVAL_MS = "probing.rebalance.interval.ms"
RACK_AWARE_ASSIGNMENT_STRATEGY = "rack.aware.assignment.strategy"
RACK_AWARE_ASSIGNMENT_TAGS = "rack.aware.assignment.tags"
RACK_AWARE_ASSIGNMENT_TRAFFIC_COST = "rack.aware.assignment.traffic_cost"
RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST = "rack.aware.assignment.non_overlap_cost"
#: Kafka's config naming a KIP-924 assignor class: not an assignment config (the assignor reads the others), so
#: ``AssignmentConfigs`` accepts it beside them and leaves it to whoever chooses the assignor.
TASK_ASSIGNOR_CLASS = "task.assignor.class"
KAFKA_COMPAT = "taskassign.kafka.compat"
#: The Kafka Streams release line whose assignors and leader are reproduced (docs/kafka-versions.md).
KAFKA_VERSION = "kafka.version"
#: The release lines taskassign reproduces, oldest first; ``trunk`` is Apache Kafka's trunk of 2026-08-22.
KAFKA_LINES = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4", "trunk")
#: The newest release line: the line used when neither ``--kafka-version`` nor ``kafka.version`` names one.
DEFAULT_KAFKA_LINE = "4.4"
RACK_SOLVER = "taskassign.rack.solver"
REBALANCE_PROTOCOL = "taskassign.rebalance.protocol"
REBALANCE_PROTOCOL_COOPERATIVE = "cooperative"
REBALANCE_PROTOCOL_EAGER = "eager"
STATE_AWARE_BALANCE_TOLERANCE = "taskassign.state_aware.balance_tolerance"
STATE_AWARE_BALANCE_TRIGGER = "taskassign.state_aware.balance_trigger"
STATE_AWARE_STATELESS_TASK_WEIGHT = "taskassign.state_aware.stateless_task_weight"
STATE_AWARE_MOVEMENT_COST = "taskassign.state_aware.movement_cost"
STATE_AWARE_TRAFFIC_COST = "taskassign.state_aware.traffic_cost"
STATE_AWARE_COUNT_TOLERANCE = "taskassign.state_aware.count_tolerance"
STATE_AWARE_SUBTOPOLOGY_SLACK = "taskassign.state_aware.subtopology_slack"

STRATEGY_NONE = "none"
STRATEGY_MIN_TRAFFIC = "min_traffic"
STRATEGY_BALANCE_SUBTOPOLOGY = "balance_subtopology"
RACK_AWARE_STRATEGIES = (STRATEGY_NONE, STRATEGY_MIN_TRAFFIC, STRATEGY_BALANCE_SUBTOPOLOGY)
#: ``taskassign.rack.solver``: auto = Kafka's own solver under kafka_compat, else the fast one.
RACK_SOLVERS = ("auto", "kafka", "min_cost_flow")



def kafka_line_at_least(line: str, first: str) -> bool:
    """True when the release line ``line`` has what Kafka's line ``first`` brought (``trunk`` has everything)."""
    return KAFKA_LINES.index(line) >= KAFKA_LINES.index(first)


#: Kafka's ``upgrade.from``: accepted beside the assignment configs, checked against the release line.
UPGRADE_FROM = "upgrade.from"
_EAGER_UPGRADE_FROM = ("0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3")
_COOPERATIVE_UPGRADE_FROM = ("2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6",
                             "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3")
#: The values each line's ``StreamsConfig`` accepts for ``upgrade.from`` (its ``UpgradeFromValues``): every line
#: lists the releases before it; 4.2 removed 2.3 and below (KAFKA-19703).
UPGRADE_FROM_VALUES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    line: (_EAGER_UPGRADE_FROM if line in ("3.9", "4.0", "4.1") else ())
    + tuple(v for v in _COOPERATIVE_UPGRADE_FROM
            if line == "trunk" or tuple(map(int, v.split("."))) < tuple(map(int, line.split("."))))
    for line in KAFKA_LINES
})


def upgrade_from_problem(value: str, line: str) -> str | None:
    """What Kafka's line ``line`` does with ``upgrade.from = value`` when it refuses it, else None."""
    allowed = UPGRADE_FROM_VALUES[line]
    if value not in allowed:
        return (f"Kafka {line} refuses it: ConfigException: Invalid value {value} for configuration upgrade.from: "
                f"String must be one of: null, {', '.join(allowed)}"
                + (" (KAFKA-19703 removed 2.3 and below)" if value in _EAGER_UPGRADE_FROM else ""))
    if value in _EAGER_UPGRADE_FROM and kafka_line_at_least(line, "4.0"):
        return (f"Kafka {line} refuses it when the application starts (StreamsPartitionAssignor.configure, "
                "AssignorConfiguration.validateUpgradeFrom; KAFKA-18839): ConfigException: The eager rebalancing "
                "protocol is no longer supported in 4.0 which means live upgrades from 2.3 or below are not "
                "possible. Please see the Streams upgrade guide for the bridge releases and recommended upgrade "
                f"path. Got upgrade.from='{value}'")
    return None


INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
#: The widest value of taskassign's own number configs (weights, costs, tolerances): finite, and small enough that
#: sums over a million tasks stay exact integers when a solver scales them.
MAX_NUMBER = 1e9
#: ``acceptable.recovery.lag = Long.MAX_VALUE`` means "every client is caught up on every task".
UNBOUNDED_RECOVERY_LAG = LONG_MAX
MAX_RACK_AWARE_TAGS = 5

Kind = Literal["int", "long", "bool", "string", "list", "nullable_int", "number"]


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One known config: its type, default, and an extra range check returning an error or None."""

    name: str
    kind: Kind
    default: Any
    doc: str
    check: Callable[[Any], str | None] | None = None


def _at_least(low: int) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be >= {low}, got {v}"


def _non_negative_number(v: Any) -> str | None:
    return None if v >= 0 else f"must be >= 0, got {v}"


def _non_negative_or_null(v: Any) -> str | None:
    return None if v is None or v >= 0 else f"must be >= 0 or null, got {v}"


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}; got {v!r}"


def _tags_check(v: Any) -> str | None:
    if len(v) > MAX_RACK_AWARE_TAGS:
        return f"at most {MAX_RACK_AWARE_TAGS} tags are allowed, got {len(v)}"
    if len(set(v)) != len(v):
        return "tag keys must be unique"
    if any(not t for t in v):
        return "tag keys must be non-empty"
    return None


_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(NUM_STANDBY_REPLICAS, "int", 0, "standby replicas per stateful task", _at_least(0)),
    ConfigKey(
        ACCEPTABLE_RECOVERY_LAG, "long", 10_000,
        "max changelog lag for a client to count as caught up (Long.MAX_VALUE: always)", _at_least(0),
    ),
    ConfigKey(MAX_WARMUP_REPLICAS, "int", 2, "warm-up replicas allowed per rebalance", _at_least(1)),
    ConfigKey(
        PROBING_REBALANCE_INTERVAL_MS, "long", 600_000,
        "delay of the probing rebalance while warm-ups restore", _at_least(60_000),
    ),
    ConfigKey(
        RACK_AWARE_ASSIGNMENT_STRATEGY, "string", STRATEGY_NONE,
        "rack-aware optimisation (KIP-925)", _one_of(RACK_AWARE_STRATEGIES),
    ),
    ConfigKey(RACK_AWARE_ASSIGNMENT_TAGS, "list", (), "client tag keys for standby spread (KIP-708)",
              _tags_check),
    ConfigKey(RACK_AWARE_ASSIGNMENT_TRAFFIC_COST, "nullable_int", None,
              "cost per cross-rack partition (null: the assignor's default)", _non_negative_or_null),
    ConfigKey(RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST, "nullable_int", None,
              "cost per moved task (null: the assignor's default)", _non_negative_or_null),
    ConfigKey(KAFKA_COMPAT, "bool", False,
              "reproduce Kafka's known bugs bit for bit (docs/kafka-differences.md)"),
    ConfigKey(KAFKA_VERSION, "string", DEFAULT_KAFKA_LINE,
              "the Kafka Streams release line reproduced (docs/kafka-versions.md): "
              + ", ".join(KAFKA_LINES), _one_of(KAFKA_LINES)),
    ConfigKey(RACK_SOLVER, "string", "auto",
              "min-cost-flow solver of the rack-aware optimisation: kafka (exact parity) or min_cost_flow "
              "(fast); auto = kafka under taskassign.kafka.compat", _one_of(RACK_SOLVERS)),
    ConfigKey(REBALANCE_PROTOCOL, "string", REBALANCE_PROTOCOL_COOPERATIVE,
              "cooperative: a partition still owned elsewhere is withheld until a follow-up rebalance; "
              "eager (upgrade.from <= 2.3): members give up everything first, nothing is withheld",
              _one_of((REBALANCE_PROTOCOL_COOPERATIVE, REBALANCE_PROTOCOL_EAGER))),
    ConfigKey(STATE_AWARE_BALANCE_TOLERANCE, "number", 0.05,
              "state_aware: when tasks move for balance, how close (fraction) to its share of the weighted load per "
              "thread a client is brought", _non_negative_number),
    ConfigKey(STATE_AWARE_BALANCE_TRIGGER, "number", 0.08,
              "state_aware: how far (fraction) a client's weighted load per thread may stray from its share before "
              "tasks move for balance (at least balance_tolerance)", _non_negative_number),
    ConfigKey(STATE_AWARE_STATELESS_TASK_WEIGHT, "number", 0.1,
              "state_aware: weight of a stateless task, as a fraction of the mean stateful task's state",
              _non_negative_number),
    ConfigKey(STATE_AWARE_MOVEMENT_COST, "number", 1.0,
              "state_aware: cost of restoring the mean stateful task's state once (min-cost flow)",
              _non_negative_number),
    ConfigKey(STATE_AWARE_TRAFFIC_COST, "number", 1.0,
              "state_aware: cost of one partition read across racks (min-cost flow); 0 ignores racks",
              _non_negative_number),
    ConfigKey(STATE_AWARE_COUNT_TOLERANCE, "number", 0.5,
              "state_aware: how far (fraction) a client's task count per thread may exceed its even share",
              _non_negative_number),
    ConfigKey(STATE_AWARE_SUBTOPOLOGY_SLACK, "int", 1,
              "state_aware: tasks of one subtopology a client may hold beyond its even share", _at_least(0)),
)

#: Every config taskassign understands, by name. Extensions add their rows here.
CONFIG_KEYS: Mapping[str, ConfigKey] = MappingProxyType({k.name: k for k in _KEYS})

DEFAULT_NUM_STANDBY_REPLICAS: int = CONFIG_KEYS[NUM_STANDBY_REPLICAS].default
DEFAULT_ACCEPTABLE_RECOVERY_LAG: int = CONFIG_KEYS[ACCEPTABLE_RECOVERY_LAG].default
DEFAULT_MAX_WARMUP_REPLICAS: int = CONFIG_KEYS[MAX_WARMUP_REPLICAS].default
DEFAULT_PROBING_REBALANCE_INTERVAL_MS: int = CONFIG_KEYS[PROBING_REBALANCE_INTERVAL_MS].default


def _coerce(key: ConfigKey, value: Any, coerce_strings: bool) -> Any:
    """Check the JSON type of ``value`` for ``key`` (optionally parsing strings, as Kafka's ConfigDef)."""
    kind = key.kind
    if coerce_strings and isinstance(value, str):
        value = _parse_string(key, value)
    if kind in ("int", "long", "nullable_int"):
        if value is None and kind == "nullable_int":
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key.name, f"expected an integer{' or null' if kind == 'nullable_int' else ''}, "
                                        f"got {_describe(value)}")
        limit = LONG_MAX if kind == "long" else INT_MAX
        if not -limit - 1 <= value <= limit:
            raise ConfigError(key.name, f"{value} does not fit a Java {'long' if kind == 'long' else 'int'}")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(key.name, f"expected a number, got {_describe(value)}")
        if not -MAX_NUMBER <= value <= MAX_NUMBER:  # NaN fails both; inf and 1e308 would overflow the solvers
            raise ConfigError(key.name, f"expected a finite number between {-MAX_NUMBER:g} and {MAX_NUMBER:g}, "
                                        f"got {value}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(key.name, f"expected true or false, got {_describe(value)}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise ConfigError(key.name, f"expected a string, got {_describe(value)}")
        return value
    if kind == "list":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(key.name, f"expected a list of strings, got {_describe(value)}")
        return tuple(value)
    raise AssertionError(kind)  # pragma: no cover


def _parse_string(key: ConfigKey, text: str) -> Any:
    stripped = text.strip()
    if key.kind in ("int", "long", "nullable_int"):
        if key.kind == "nullable_int" and stripped.lower() in ("", "null"):
            return None
        try:
            return int(stripped)
        except ValueError:
            raise ConfigError(key.name, f"expected an integer, got {text!r}") from None
    if key.kind == "number":
        try:
            return float(stripped)
        except ValueError:
            raise ConfigError(key.name, f"expected a number, got {text!r}") from None
    if key.kind == "bool":
        if stripped.lower() in ("true", "false"):
            return stripped.lower() == "true"
        raise ConfigError(key.name, f"expected true or false, got {text!r}")
    if key.kind == "list":
        return tuple(p.strip() for p in stripped.split(",") if p.strip())
    return text


def parse_config_value(name: str, value: Any) -> Any:
    """One config's value as Kafka reads it (strings as a properties file holds them: "1", "true", "a,b"),
    type- and range-checked; ConfigError names the key. ``task.assignor.class`` is a non-empty string."""
    if name == TASK_ASSIGNOR_CLASS:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(name, f"expected a class name or assignor name, got {_describe(value)}")
        return value.strip()
    key = CONFIG_KEYS.get(name)
    if key is None:
        raise ConfigError(name, f"unknown config; known configs are: {', '.join(sorted(CONFIG_KEYS))}")
    checked = _coerce(key, value, coerce_strings=True)
    problem = key.check(checked) if key.check else None
    if problem:
        raise ConfigError(name, problem)
    return list(checked) if isinstance(checked, tuple) else checked


def _describe(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"


@dataclass(frozen=True, slots=True)
class AssignmentConfigs:
    """The eight assignment configs of Kafka's ``AssignmentConfigs`` plus taskassign extensions.

    Construct with keywords (validated) or from a properties mapping with ``from_properties``.
    """

    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: tuple[str, ...] = ()
    rack_aware_traffic_cost: int | None = None
    rack_aware_non_overlap_cost: int | None = None
    rack_aware_assignment_strategy: str = STRATEGY_NONE
    extensions: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        for name, value in self._kafka_items():
            key = CONFIG_KEYS[name]
            checked = _coerce(key, value, coerce_strings=False)
            problem = key.check(checked) if key.check else None
            if problem:
                raise ConfigError(name, problem)
        tags: Any = self.rack_aware_assignment_tags
        if not isinstance(tags, tuple):
            object.__setattr__(self, "rack_aware_assignment_tags", tuple(tags))
        # Only non-default extension values are kept, so equal configs compare equal however built.
        explicit = {
            name: value
            for name, value in sorted(self.extensions.items())
            if name not in CONFIG_KEYS or value != CONFIG_KEYS[name].default
        }
        object.__setattr__(self, "extensions", MappingProxyType(explicit))

    @property
    def latest_now_ms(self) -> int:
        """The latest leader clock (``now_ms``) these configs allow: the probing rebalance deadline,
        ``now_ms + probing.rebalance.interval.ms``, is a Java long (epoch ms, at most Long.MAX_VALUE)."""
        return LONG_MAX - self.probing_rebalance_interval_ms

    def now_ms_problem(self, now_ms: int) -> str | None:
        """Why ``now_ms`` is out of range for these configs, or None: the same words everywhere a clock is read."""
        if 0 <= now_ms <= self.latest_now_ms:
            return None
        return (f"must be between 0 and {self.latest_now_ms}, got {now_ms}: now_ms + probing.rebalance.interval.ms "
                f"({self.probing_rebalance_interval_ms}) is the probing rebalance deadline, a Java long (at most "
                f"{LONG_MAX})")

    def _kafka_items(self) -> tuple[tuple[str, Any], ...]:
        return (
            (ACCEPTABLE_RECOVERY_LAG, self.acceptable_recovery_lag),
            (MAX_WARMUP_REPLICAS, self.max_warmup_replicas),
            (NUM_STANDBY_REPLICAS, self.num_standby_replicas),
            (PROBING_REBALANCE_INTERVAL_MS, self.probing_rebalance_interval_ms),
            (RACK_AWARE_ASSIGNMENT_TAGS, self.rack_aware_assignment_tags),
            (RACK_AWARE_ASSIGNMENT_TRAFFIC_COST, self.rack_aware_traffic_cost),
            (RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST, self.rack_aware_non_overlap_cost),
            (RACK_AWARE_ASSIGNMENT_STRATEGY, self.rack_aware_assignment_strategy),
        )

    @classmethod
    def from_properties(cls, props: Mapping[str, Any], *, coerce_strings: bool = False) -> AssignmentConfigs:
        """Kafka's ``AssignmentConfigs.of(StreamsConfig)``: unknown keys and bad values raise ConfigError.

        ``coerce_strings`` accepts string values ("10000", "a,b", "true") as Kafka's ConfigDef does,
        for sources such as CSV tables that carry every value as text.
        """
        values: dict[str, Any] = {}
        upgrade_from: str | None = None
        for name in sorted(props):
            if name == TASK_ASSIGNOR_CLASS:
                parse_config_value(name, props[name])  # checked here, chosen by the caller
                continue
            if name == UPGRADE_FROM:
                upgrade_from = props[name]
                if upgrade_from is not None and not isinstance(upgrade_from, str):
                    raise ConfigError(name, f"expected a release such as '3.9' or null, got {_describe(upgrade_from)}")
                continue
            key = CONFIG_KEYS.get(name)
            if key is None:
                known = ", ".join(sorted(CONFIG_KEYS))
                raise ConfigError(name, f"unknown config; known configs are: {known}")
            value = _coerce(key, props[name], coerce_strings)
            problem = key.check(value) if key.check else None
            if problem:
                raise ConfigError(name, problem)
            values[name] = value
        extensions = {
            name: values.get(name, key.default)
            for name, key in sorted(CONFIG_KEYS.items())
            if name.startswith("taskassign.") or name == KAFKA_VERSION
        }
        line = extensions[KAFKA_VERSION]
        if upgrade_from is not None:
            problem = upgrade_from_problem(upgrade_from, line)
            if problem:
                raise ConfigError(UPGRADE_FROM, problem)
            extensions[UPGRADE_FROM] = upgrade_from
            if upgrade_from in _EAGER_UPGRADE_FROM and REBALANCE_PROTOCOL not in values:
                extensions[REBALANCE_PROTOCOL] = REBALANCE_PROTOCOL_EAGER  # 3.9: upgrade.from <= 2.3 means EAGER
        return cls(
            acceptable_recovery_lag=values.get(ACCEPTABLE_RECOVERY_LAG, DEFAULT_ACCEPTABLE_RECOVERY_LAG),
            max_warmup_replicas=values.get(MAX_WARMUP_REPLICAS, DEFAULT_MAX_WARMUP_REPLICAS),
            num_standby_replicas=values.get(NUM_STANDBY_REPLICAS, DEFAULT_NUM_STANDBY_REPLICAS),
            probing_rebalance_interval_ms=values.get(
                PROBING_REBALANCE_INTERVAL_MS, DEFAULT_PROBING_REBALANCE_INTERVAL_MS
            ),
            rack_aware_assignment_tags=values.get(RACK_AWARE_ASSIGNMENT_TAGS, ()),
            rack_aware_traffic_cost=values.get(RACK_AWARE_ASSIGNMENT_TRAFFIC_COST),
            rack_aware_non_overlap_cost=values.get(RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST),
            rack_aware_assignment_strategy=values.get(RACK_AWARE_ASSIGNMENT_STRATEGY, STRATEGY_NONE),
            extensions=MappingProxyType(extensions),
        )

    def to_properties(self) -> dict[str, Any]:
        """The configs as a Kafka-named mapping (extensions included), the inverse of from_properties."""
        props: dict[str, Any] = {}
        for name, value in self._kafka_items():
            props[name] = list(value) if isinstance(value, tuple) else value
        for name, value in self.extensions.items():
            key = CONFIG_KEYS.get(name)
            if key is None or value != key.default:
                props[name] = list(value) if isinstance(value, tuple) else value
        return props

    def extension(self, name: str) -> Any:
        """The value of a ``taskassign.`` extension key (its default when unset)."""
        if name in self.extensions:
            return self.extensions[name]
        key = CONFIG_KEYS.get(name)
        if key is None:
            raise ConfigError(name, "unknown extension config")
        return key.default

    @property
    def kafka_compat(self) -> bool:
        """True when Kafka's known bugs must be reproduced bit for bit (``taskassign.kafka.compat``)."""
        return bool(self.extension(KAFKA_COMPAT))

    @property
    def kafka_version(self) -> str:
        """The Kafka release line reproduced (``kafka.version``; default DEFAULT_KAFKA_LINE)."""
        return str(self.extension(KAFKA_VERSION))
