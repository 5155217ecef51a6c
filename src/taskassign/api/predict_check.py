"""``taskassign predict-check HISTORY``: how exact is a what-if? Each change a watched group went through
(``capture --watch``) is predicted from the capture before it with the matching what-if, and the prediction is
set against what Kafka did, task by task.

For two consecutive captures A and B: clients in A and not in B are ``--remove-client``, clients in B and not in
A are ``--add-clients`` (one batch per shape: threads, rack, client tags), configs that differ are ``--set``.
The what-if runs on A as it stands after A's rebalance (each client holds what Kafka assigned it, actives
running, standbys caught up), with the assignor A's application runs (classic: its ``task.assignor.class``;
streams groups: the broker's assignor). A task is right when its active is on the client Kafka chose, a
standby when Kafka put a standby of that task on that client. New clients are named by the pairing that agrees
most with Kafka (a what-if cannot know their process ids).

Every difference gets a cause, found by substitution, not guessed: the what-if's input is moved towards B's
input (Kafka's leader's own, for a classic group the subscriptions of B's generation) one kind of input at a
time, in a fixed order, re-running the assignor after each; a difference is explained by the first kind after
which the task stays where Kafka put it. Whatever remains once all of B's inputs are in is named as taskassign's
replay differing from Kafka (``taskassign rebalance B`` shows it). When no kind of input moved, the prediction
must be Kafka's assignment exactly (``exact_expected``).

Two captures between which no rebalance happened are not predicted: the same assignment under other member ids
is a static member (``group.instance.id``) restarted within ``session.timeout.ms``, whose new subscription the
coordinator paired with the old assignment (KIP-345); predicting from that pair would mix two moments.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from taskassign.api.predict_classic import check_classic_pair, read_classic
from taskassign.api.predict_streams import check_streams_pair, read_streams
from taskassign.api.prediction import ChangeCheck, HistoryCheck
from taskassign.errors import UserInputError

__all__ = ("check_history",)


def check_history(history: Path, *, progress: Callable[[str], None] = lambda _: None) -> HistoryCheck:
    """Every consecutive pair of captures in ``history`` (a ``capture --watch`` directory, or files given in
    order) predicted and checked."""
    files = _history_files(history)
    streams = _is_streams(files[0])
    if any(_is_streams(f) != streams for f in files):
        raise UserInputError(f"{history}: mixes streams-group files and classic group files; one group's history "
                             "holds one kind")
    checks: list[ChangeCheck] = []
    reader = read_streams if streams else read_classic
    check = check_streams_pair if streams else check_classic_pair
    previous = reader(files[0])
    for path in files[1:]:
        progress(f"{files[files.index(path) - 1].name} -> {path.name}")
        current = reader(path)
        checks.append(check(previous, current))  # type: ignore[arg-type]
        previous = current
    return HistoryCheck("streams" if streams else "classic", tuple(f.name for f in files), tuple(checks))


def _history_files(history: Path) -> list[Path]:
    if not history.exists():
        raise UserInputError(f"{history}: no such directory (give the history `capture --watch -o DIR` wrote)")
    if not history.is_dir():
        raise UserInputError(f"{history}: not a directory (give the history `capture --watch -o DIR` wrote)")
    files = sorted((p for p in history.iterdir() if p.suffix == ".json" and p.is_file()), key=_order)
    if len(files) < 2:
        raise UserInputError(f"{history}: {len(files)} capture(s); a prediction needs two or more (record them with "
                             "`taskassign capture --watch -o DIR`)")
    return files


def _order(path: Path) -> tuple[str, int, str]:
    """Watch files end in their generation counter or epoch: sorted by that number, then name."""
    stem = path.stem
    digits = stem.rsplit("-", 1)[-1]
    return (stem.rsplit("-", 2)[0], int(digits) if digits.isdigit() else -1, path.name)


def _is_streams(path: Path) -> bool:
    from taskassign.formats.json_io import load_json_file
    from taskassign.streams_protocol.format import is_streams_group_document

    return bool(is_streams_group_document(load_json_file(path)))


