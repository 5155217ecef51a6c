"""TaskPairs (epochs of bitmasks) against Kafka's literal set of pairs, including rewrites of a client's
tasks by a rack optimisation between placements."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.assignors._task_pairs import TaskPairs


class LiteralPairs:
    """Kafka's TaskPairs: a set of (smaller, larger) pairs with the ``maxPairs`` shortcut."""

    def __init__(self, num_tasks: int, num_clients: int) -> None:
        self.max_pairs = num_tasks * (num_tasks - 1) // 2
        self.pairs: set[tuple[int, int]] = set()
        self.held: list[set[int]] = [set() for _ in range(num_clients)]

    def add(self, task: int, client: int) -> None:
        for other in self.held[client]:
            self.pairs.add((min(task, other), max(task, other)))
        self.held[client].add(task)

    def restart(self, client: int, tasks: set[int]) -> None:
        self.held[client] = set(tasks)

    def has_new_pair(self, task: int, client: int) -> bool:
        if len(self.pairs) == self.max_pairs:
            return False
        return any((min(task, x), max(task, x)) not in self.pairs for x in self.held[client])


@st.composite
def operations(draw: st.DrawFn) -> tuple[int, int, list[tuple[str, int, object]]]:
    num_tasks, num_clients = draw(st.integers(1, 10)), draw(st.integers(1, 4))
    ops: list[tuple[str, int, object]] = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["add", "add", "add", "query", "query", "restart"]))
        client = draw(st.integers(0, num_clients - 1))
        if kind == "restart":
            ops.append((kind, client, set(draw(st.lists(st.integers(0, num_tasks - 1), max_size=num_tasks)))))
        else:
            ops.append((kind, client, draw(st.integers(0, num_tasks - 1))))
    return num_tasks, num_clients, ops


@settings(max_examples=500)
@given(operations())
def test_epochs_answer_like_the_literal_pair_set(case: tuple[int, int, list[tuple[str, int, object]]]) -> None:
    num_tasks, num_clients, ops = case
    literal, compact = LiteralPairs(num_tasks, num_clients), TaskPairs(num_tasks, num_clients)
    for kind, client, arg in ops:
        if kind == "restart":
            assert isinstance(arg, set)
            literal.restart(client, arg)
            compact.restart(client, sorted(arg))
            continue
        assert isinstance(arg, int)
        if arg in literal.held[client]:
            continue  # Kafka never places or asks about a task the client already holds
        if kind == "add":
            literal.add(arg, client)
            compact.add(arg, client)
        else:
            assert compact.has_new_pair(client, compact.partners(arg)) == literal.has_new_pair(arg, client)


def test_a_rewritten_client_pairs_new_tasks_with_its_new_base() -> None:
    pairs = TaskPairs(4, 2)
    for task in (0, 1, 2):
        pairs.add(task, 0)  # client 0 holds {0, 1, 2}: a clique of pairs
    pairs.add(3, 1)
    assert pairs.has_new_pair(0, pairs.partners(3))  # 3 met none of 0, 1, 2
    pairs.restart(1, [0, 1])  # an optimiser rewrote client 1 to {0, 1}
    assert not pairs.has_new_pair(1, pairs.partners(2))  # 2 met 0 and 1 on client 0
    pairs.add(3, 1)  # 3 now pairs with the new base 0, 1
    assert pairs.has_new_pair(0, pairs.partners(3))  # ... but not with 2
    pairs.add(2, 1)
    assert not pairs.has_new_pair(0, pairs.partners(3))  # 2 was placed next to 3: every pair is known
