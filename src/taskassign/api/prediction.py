"""What predict-check measures and how it names causes (``api.predict_check`` runs it on a history): the result
types, the causes in the order the substitution applies them, the task-by-task comparison and its attribution."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ("ChangeCheck", "HistoryCheck", "Miss", "Placement", "attribute", "best_pairing", "compare_placements")

#: Up to this many new clients in one change, every pairing of predicted and actual new clients is tried.
MAX_PAIRING = 6

# Causes, in the order the substitution applies them (each names what a what-if cannot know).
CAUSE_NEW_IDS = "new clients' process ids (a what-if invents them; ties between empty clients break by id)"
CAUSE_TASKS = "the application's tasks changed (topics or partitions)"
CAUSE_MEMBER_IDS = "member ids changed (members rejoined: their threads are other consumers)"
CAUSE_SUBSCRIPTION = "a member's subscription changed (threads, rack, client tags or endpoint)"
CAUSE_PREVIOUS = ("previous tasks differ from the capture before (an intermediate rebalance, or a member that "
                  "lost or kept state)")
CAUSE_RECONCILING = ("members were still reconciling the earlier target (a streams group from 4.4: the broker's "
                     "assignor starts from the tasks members hold)")
CAUSE_LAGS = "lags moved on (offsets reported at the rebalance differ from the capture before)"
CAUSE_UNSEEN = "the broker computed several times between the captures (epochs the watch did not see)"
CAUSE_REPLAY = "taskassign's replay of Kafka's own inputs differs (see `taskassign rebalance` on the later file)"

Placement = dict[str, tuple[str | None, frozenset[str]]]  # task -> (active client, standby clients)


@dataclass(frozen=True, slots=True)
class Miss:
    """A task placed elsewhere than Kafka placed it: ``kind`` active or standby, the clients on each side."""

    task: str
    kind: str
    predicted: tuple[str, ...]
    kafka: tuple[str, ...]
    cause: str


@dataclass(frozen=True, slots=True)
class ChangeCheck:
    """One change (capture ``before`` to capture ``after``) predicted and checked; ``skipped`` says why a pair
    was not predicted."""

    before: str
    after: str
    change: str
    what_if: tuple[str, ...] = ()
    assignor: str = ""
    tasks: int = 0
    actives_right: int = 0
    standbys: int = 0
    standbys_right: int = 0
    misses: tuple[Miss, ...] = ()
    inputs_moved: tuple[str, ...] = ()
    skipped: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def exact_expected(self) -> bool:
        """No input moved but the membership: the prediction must be Kafka's assignment exactly."""
        return self.skipped is None and not self.inputs_moved

    @property
    def exact(self) -> bool:
        return self.skipped is None and not self.misses

    def causes(self) -> list[tuple[str, int]]:
        return sorted(Counter(m.cause for m in self.misses).items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True, slots=True)
class HistoryCheck:
    protocol: str
    files: tuple[str, ...]
    checks: tuple[ChangeCheck, ...]

    @property
    def predicted(self) -> tuple[ChangeCheck, ...]:
        return tuple(c for c in self.checks if c.skipped is None)


def compare_placements(predicted: Placement, kafka: Placement,
                       rename: Mapping[str, str] | None = None) -> tuple[int, int, int, list[tuple[str, str]]]:
    """(actives right, standby placements Kafka made, of them predicted, the wrong (task, kind) pairs), the
    predicted clients renamed by ``rename`` first."""
    names = rename or {}
    actives = standbys = standbys_right = 0
    wrong: list[tuple[str, str]] = []
    for task, (k_active, k_standbys) in sorted(kafka.items()):
        p_active, p_standbys = predicted.get(task, (None, frozenset()))
        p_active = names.get(p_active, p_active) if p_active is not None else None
        p_set = frozenset(names.get(c, c) for c in p_standbys)
        if p_active == k_active:
            actives += 1
        else:
            wrong.append((task, "active"))
        standbys += len(k_standbys)
        standbys_right += len(k_standbys & p_set)
        if p_set != k_standbys:
            wrong.append((task, "standby"))
    return actives, standbys, standbys_right, wrong


def best_pairing(predicted: Placement, kafka: Placement, invented: Sequence[Sequence[str]],
                 actual: Sequence[Sequence[str]]) -> dict[str, str]:
    """Invented client names -> actual ones, batch by batch: the pairing that agrees most with Kafka (every
    pairing up to MAX_PAIRING clients a batch, else in sorted order)."""
    rename: dict[str, str] = {}
    for made, real in zip(invented, actual, strict=True):
        real_sorted = sorted(real)
        if len(made) > MAX_PAIRING:
            rename.update(zip(made, real_sorted, strict=True))
            continue
        best: tuple[int, dict[str, str]] | None = None
        for perm in itertools.permutations(real_sorted):
            trial = {**rename, **dict(zip(made, perm, strict=True))}
            a, _, s, _ = compare_placements(predicted, kafka, trial)
            if best is None or a + s > best[0]:
                best = (a + s, trial)
        assert best is not None
        rename = best[1]
    return rename


def attribute(first: Placement, kafka: Placement, steps: Sequence[tuple[str, Placement]],
              rename: Mapping[str, str]) -> tuple[int, int, int, tuple[Miss, ...]]:
    """The first prediction's score and its misses, each explained by the first step after which the task stays
    where Kafka put it (the steps' placements use actual names), else by CAUSE_REPLAY."""
    actives, standbys, standbys_right, wrong = compare_placements(first, kafka, rename)
    outcomes = [(cause, _wrong_set(placement, kafka)) for cause, placement in steps]
    misses = []
    for task, kind in wrong:
        cause = CAUSE_REPLAY
        for i, (label, _) in enumerate(outcomes):
            if all((task, kind) not in later for _, later in outcomes[i:]):
                cause = label
                break
        p_active, p_standbys = first.get(task, (None, frozenset()))
        k_active, k_standbys = kafka[task]
        shown_p: tuple[str, ...]
        shown_k: tuple[str, ...]
        if kind == "active":
            shown_p = (rename.get(p_active, p_active),) if p_active is not None else ()
            shown_k = (k_active,) if k_active is not None else ()
        else:
            shown_p = tuple(sorted(rename.get(c, c) for c in p_standbys))
            shown_k = tuple(sorted(k_standbys))
        misses.append(Miss(task, kind, shown_p, shown_k, cause))
    return actives, standbys, standbys_right, tuple(misses)


def _wrong_set(placement: Placement, kafka: Placement) -> set[tuple[str, str]]:
    return set(compare_placements(placement, kafka)[3])


def what_if_flags(removed: Sequence[str], added: Mapping[tuple[int, str | None, tuple[tuple[str, str], ...]], int],
                  sets: Mapping[str, str]) -> tuple[str, ...]:
    """The what-if as the flags of ``taskassign assign`` (process ids shortened to 8 hex digits)."""
    flags = [f"--remove-client {pid[:8]}" for pid in sorted(removed)]
    for (threads, rack, tags), count in sorted(added.items(), key=repr):
        shape = [f"threads={threads}", *([f"rack={rack}"] if rack is not None else []),
                 *(f"tag.{k}={v}" for k, v in tags)]
        flags.append(f"--add-clients {count}:{','.join(shape)}")
    flags.extend(f"--set {k}={v}" for k, v in sorted(sets.items()))
    return tuple(flags)


def describe_change(removed: Sequence[str], added: Sequence[str], sets: Mapping[str, str]) -> str:
    parts = []
    if added:
        parts.append(f"{len(added)} client(s) joined ({', '.join(p[:8] for p in sorted(added))})")
    if removed:
        parts.append(f"{len(removed)} client(s) left ({', '.join(p[:8] for p in sorted(removed))})")
    if sets:
        parts.append("configs changed (" + ", ".join(f"{k}={v}" for k, v in sorted(sets.items())) + ")")
    return "; ".join(parts) or "same clients (a probing or follow-up rebalance)"
