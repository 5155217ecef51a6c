"""Java collection orders that leak into Kafka's assignment decisions, emulated exactly.

Kafka's assignors are deterministic, but some of their tie-breaks come from the iteration order of
``java.util.HashMap`` / ``HashSet`` and from the array layout of ``java.util.PriorityQueue``. Where
taskassign reproduces Kafka bit for bit, it takes those orders from here and nowhere else (the JDK 17
``java.util`` sources define them).

* ``JavaHashMap`` / ``hash_iteration_order``: iteration order of a HashMap/HashSet (JDK 17): bucket
  ``(h ^ (h >>> 16)) & (capacity - 1)`` ascending, insertion order within a bucket; the table starts at
  16 (or the pre-sized capacity) and doubles when size exceeds 0.75 x capacity. Bins that Java turns
  into trees (8+ entries in one bucket of a 64+ table) are not emulated: practically never reached
  by task or process ids.
* ``compute_if_absent_order``: the order of a HashMap filled by ``computeIfAbsent`` calls, which differs
  from ``put``'s: a new key goes to the *head* of its bucket's chain, and the table grows at the start of the
  call after the one that passed the threshold (every call, present key or not), not right after the put.
* ``HashSubsetOrder``: the same order for many HashSets filled from subsets of one fixed key sequence
  (e.g. "the clients that do not hold task t", built once per task): one sort per table size, then
  each subset is a filter.
* ``JavaPriorityQueue``: the binary heap with Java's sift rules, a comparator evaluated at every
  comparison (so stale, live-changing keys behave as in Java), ``remove(o)`` by linear scan and
  construction from a collection by heapify.
* ``UniqueJavaPriorityQueue``: the same heap over distinct, hashable elements with a fixed natural
  order; it tracks every element's array slot, so ``remove(o)`` and ``in`` are O(log n) / O(1) while the
  array layout stays exactly Java's (thread-level distribution removes thousands of tasks).
* ``KeyedJavaPriorityQueue``: a PriorityQueue whose comparator reads a key fixed when the element is
  offered (an element's key never changes while it is inside): parallel key and element arrays, Java's sift
  rules on the keys alone, so equal keys come out in Java's heap order and the elements are never compared
  (the streams-group sticky assignor polls processes by load and members by task count, ties everywhere).
* ``java_string_key``: the sort key of ``String.compareTo`` (UTF-16 code units, not code points).
* ``natural_queue_array``: the backing array of such a queue after a known sequence of removes and
  polls. A poll returns the minimum whatever the layout, so callers that only poll and remove can work
  on sorted sequences and ask for the layout only where Kafka iterates the array.
* ``java_heap_*``: the same heap on a plain list of *distinct* entries compared by their natural order,
  at C speed where that is exact: ``heapq.heappush`` is Java's offer on any array, and on a valid heap
  ``heapq.heappop`` leaves Java's array too (with distinct keys the two sift rules only differ on ties).
  Entries whose comparison key changed while inside (an invalid heap) go through Java's rules step by
  step, reading a ``live`` key.
"""

from __future__ import annotations

import heapq
import operator
import struct
from collections.abc import Callable, Collection, Container, Hashable, Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Any, Generic, TypeVar

from taskassign.ids import ProcessId, TaskId, java_string_hash, to_int32

__all__ = (
    "HashSubsetOrder",
    "JavaHashMap",
    "JavaPriorityQueue",
    "KeyedJavaPriorityQueue",
    "UniqueJavaPriorityQueue",
    "compute_if_absent_order",
    "grown_capacity",
    "hash_iteration_order",
    "hashmap_copy_capacity",
    "hashset_copy_capacity",
    "hashset_copy_order",
    "java_hash",
    "java_heap_is_valid",
    "java_heap_poll",
    "java_heap_push",
    "java_heap_remove_at",
    "java_string_key",
    "natural_queue_array",
    "priority_queue_poll_order",
)

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75
MAXIMUM_CAPACITY = 1 << 30


def java_hash(key: object) -> int:
    """``hashCode()`` of the keys Kafka's assignors put in hash collections."""
    if isinstance(key, TaskId | ProcessId):
        return key.java_hash()
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if -(2**31) <= key < 2**31:
            return key  # Integer.hashCode
        v = key & 0xFFFFFFFFFFFFFFFF  # Long.hashCode
        return to_int32(v ^ (v >> 32))
    raise TypeError(f"no Java hashCode emulation for {type(key).__name__}")


def _bucket(h: int, capacity: int) -> int:
    h &= 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def _table_size_for(cap: int) -> int:
    """HashMap.tableSizeFor: the smallest power of two >= cap (at least 1)."""
    n = 1
    while n < cap:
        n <<= 1
    return min(n, MAXIMUM_CAPACITY)


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def hashset_copy_capacity(n: int) -> int:
    """Table size of ``new HashSet<>(collection)`` with n elements on JDK 17:
    ``tableSizeFor(max((int)(n / .75f) + 1, 16))`` (float arithmetic)."""
    return _table_size_for(max(int(_float32(_float32(float(n)) / _float32(0.75))) + 1, DEFAULT_CAPACITY))


def hashmap_copy_capacity(n: int) -> int:
    """Table size of ``new HashMap<>(map)`` with n entries: ``tableSizeFor((int)(n / .75f + 1f))``."""
    if n == 0:
        return DEFAULT_CAPACITY
    return _table_size_for(int(_float32(_float32(_float32(float(n)) / _float32(0.75)) + 1.0)))


def grown_capacity(size: int, initial_capacity: int | None = None) -> int:
    """Table size of a HashMap/HashSet after ``size`` distinct puts (default start: 16, doubling
    whenever the size exceeds 0.75 x capacity)."""
    capacity = _table_size_for(initial_capacity) if initial_capacity else DEFAULT_CAPACITY
    while size > int(capacity * LOAD_FACTOR) and capacity < MAXIMUM_CAPACITY:
        capacity *= 2
    return capacity


class JavaHashMap(Generic[K]):
    """The key order of a Java HashMap (or HashSet) under puts and removes.

    Only keys are tracked; keep values in a dict beside it. ``initial_capacity`` is the table size the
    Java collection was created with (None = default ``new HashMap<>()``).
    """

    __slots__ = ("_capacity", "_hash", "_seq", "_size_threshold", "_slots")

    def __init__(self, initial_capacity: int | None = None, hash_of: Callable[[K], int] = java_hash) -> None:
        self._capacity = _table_size_for(initial_capacity) if initial_capacity else DEFAULT_CAPACITY
        self._size_threshold = int(self._capacity * LOAD_FACTOR)
        self._slots: dict[K, int] = {}
        self._seq = 0
        self._hash = hash_of

    def put(self, key: K) -> None:
        """Insert ``key`` (an existing key keeps its position, as a Java put of an existing key)."""
        if key in self._slots:
            return
        self._slots[key] = self._seq
        self._seq += 1
        if len(self._slots) > self._size_threshold and self._capacity < MAXIMUM_CAPACITY:
            self._capacity *= 2
            self._size_threshold = int(self._capacity * LOAD_FACTOR)

    def put_all(self, keys: Iterable[K]) -> None:
        for key in keys:
            self.put(key)

    def remove(self, key: K) -> None:
        """Remove ``key``; the table never shrinks, a later put appends it at its bucket's end."""
        self._slots.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def capacity(self) -> int:
        return self._capacity

    def keys(self) -> list[K]:
        """Keys in Java iteration order."""
        cap, h = self._capacity, self._hash
        return sorted(self._slots, key=lambda k: (_bucket(h(k), cap), self._slots[k]))

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


def hash_iteration_order(
    keys: Iterable[K], *, initial_capacity: int | None = None, hash_of: Callable[[K], int] = java_hash
) -> list[K]:
    """Iteration order of a HashMap/HashSet into which ``keys`` were put in this order."""
    items = list(dict.fromkeys(keys))  # a repeated put keeps the first position
    if len(items) < 2:
        return items
    mask = grown_capacity(len(items), initial_capacity) - 1
    buckets = []
    task_ids = hash_of is java_hash
    for key in items:
        if task_ids and isinstance(key, TaskId) and key[0] is None:
            h = (29791 + 961 * key[1] + 31 * key[2]) & 0xFFFFFFFF  # TaskId.java_hash, inlined
        else:
            h = hash_of(key) & 0xFFFFFFFF
        buckets.append((h ^ (h >> 16)) & mask)
    # a stable sort keeps insertion order within a bucket
    return [items[i] for i in sorted(range(len(items)), key=buckets.__getitem__)]


def compute_if_absent_order(
    calls: Iterable[K], *, initial_capacity: int | None = None, hash_of: Callable[[K], int] = java_hash
) -> list[K]:
    """Iteration order of ``new HashMap<>(initial_capacity)`` (None: the default) after
    ``map.computeIfAbsent(key, ...)`` for each key of ``calls`` in order (repeats included: each call may grow
    the table). JDK 17's ``HashMap.computeIfAbsent``: the table is allocated or doubled first when the size
    exceeds the threshold; an absent key is linked in *ahead* of its bucket's chain; a chain that already had
    7+ nodes makes ``treeifyBin`` double a table under 64 buckets (real tree bins, 64+ buckets, are not
    emulated). Doubling splits every chain into its low and high halves, keeping their order."""
    capacity = _table_size_for(initial_capacity) if initial_capacity is not None else DEFAULT_CAPACITY
    threshold = capacity  # the pre-sized capacity waits in the threshold until the first allocation
    allocated = False
    spread: dict[K, int] = {}  # each new key's spread hash, in first-call order
    chains: dict[int, int] = {}  # chain lengths while the table is under 64 buckets (treeifyBin grows it)
    for key in calls:
        if not allocated or len(spread) > threshold:
            if allocated:
                capacity *= 2
                if capacity < 64:
                    chains = {}
                    for h in spread.values():
                        chains[h & (capacity - 1)] = chains.get(h & (capacity - 1), 0) + 1
            allocated = True
            threshold = int(capacity * LOAD_FACTOR)
        if key in spread:
            continue
        h = hash_of(key) & 0xFFFFFFFF
        h ^= h >> 16
        spread[key] = h
        if capacity < 64:
            bucket = h & (capacity - 1)
            chains[bucket] = length = chains.get(bucket, 0) + 1
            if length > 7:  # treeifyBin on a small table: doubled instead
                capacity *= 2
                threshold = int(capacity * LOAD_FACTOR)
                chains = {}
                if capacity < 64:
                    for g in spread.values():
                        chains[g & (capacity - 1)] = chains.get(g & (capacity - 1), 0) + 1
    # a doubling keeps each chain's order, and every new key went to its chain's head: newest first per bucket
    mask = capacity - 1
    keys = list(spread)
    return [keys[i] for i in sorted(range(len(keys)), key=lambda i: (spread[keys[i]] & mask, -i))]


def hashset_copy_order(keys: Iterable[K], *, hash_of: Callable[[K], int] = java_hash) -> list[K]:
    """Iteration order of ``new HashSet<>(c)`` where ``c`` iterates as ``keys`` (JDK 17 pre-sizing)."""
    items = list(dict.fromkeys(keys))
    return hash_iteration_order(items, initial_capacity=hashset_copy_capacity(len(items)), hash_of=hash_of)


class HashSubsetOrder(Generic[K]):
    """Iteration orders of HashSets filled with subsets of one key sequence, inserted in its order.

    Such a set iterates its keys sorted by (bucket at its final table size, position in ``keys``);
    the order for each table size is computed once, so a subset's order is a filter of it. Typical
    use: Kafka builds ``new HashSet`` of "clients without task t" by walking its clients map.
    """

    __slots__ = ("_by_capacity", "_hash", "_keys", "_positions")

    def __init__(self, keys: Iterable[K], hash_of: Callable[[K], int] = java_hash) -> None:
        self._keys = list(keys)
        self._hash = hash_of
        self._by_capacity: dict[int, tuple[K, ...]] = {}
        self._positions: dict[int, dict[K, int]] = {}

    @property
    def hash_of(self) -> Callable[[K], int]:
        return self._hash

    def order(self, capacity: int) -> tuple[K, ...]:
        """All keys in the iteration order of a table of ``capacity`` buckets."""
        cached = self._by_capacity.get(capacity)
        if cached is None:
            h = self._hash
            keyed = sorted(range(len(self._keys)), key=lambda i: (_bucket(h(self._keys[i]), capacity), i))
            cached = self._by_capacity[capacity] = tuple(self._keys[i] for i in keyed)
        return cached

    def subset(self, members: Container[K], size: int, *, initial_capacity: int | None = None) -> list[K]:
        """Iteration order of a set holding the ``size`` keys for which ``key in members`` holds,
        filled in sequence order into ``new HashSet<>(initial_capacity)`` (default: 16)."""
        capacity = grown_capacity(size, initial_capacity)
        if isinstance(members, Collection) and len(members) * 8 < len(self._keys):
            # a few members (e.g. a task's previous standby clients): sort them by position instead of
            # filtering every key (10^6 steps for 10^3 tasks x 10^3 clients)
            positions = self._positions.get(capacity)
            if positions is None:
                positions = self._positions[capacity] = {k: i for i, k in enumerate(self.order(capacity))}
            if all(k in positions for k in members):
                return sorted(members, key=positions.__getitem__)
        return [k for k in self.order(capacity) if k in members]


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator evaluated lazily at every comparison.

    ``key`` maps an element to a comparable value at comparison time; pass a live function (reading
    mutable loads) to get Java's behaviour with keys that change while elements sit in the heap.
    """

    __slots__ = ("_key", "_q")

    def __init__(self, key: Callable[[T], Any], items: Iterable[T] = ()) -> None:
        self._key = key
        self._q: list[T] = list(items)
        for i in range((len(self._q) >> 1) - 1, -1, -1):  # PriorityQueue(Collection): heapify
            self._sift_down(i, self._q[i])

    def _cmp(self, a: T, b: T) -> int:
        ka, kb = self._key(a), self._key(b)
        return -1 if ka < kb else (1 if ka > kb else 0)

    def __len__(self) -> int:
        return len(self._q)

    def __bool__(self) -> bool:
        return bool(self._q)

    def __contains__(self, item: object) -> bool:
        return item in self._q

    def array(self) -> list[T]:
        """The backing array in its current order (what Java's iterator visits)."""
        return list(self._q)

    def peek(self) -> T | None:
        return self._q[0] if self._q else None

    def offer(self, item: T) -> None:
        self._q.append(item)
        self._sift_up(len(self._q) - 1, item)

    def poll(self) -> T | None:
        q = self._q
        if not q:
            return None
        result = q[0]
        last = q.pop()
        if q:
            self._sift_down(0, last)
        return result

    def remove(self, item: T) -> bool:
        """Remove the first element equal to ``item`` (linear scan), as Java's ``remove(Object)``."""
        for i, element in enumerate(self._q):
            if element == item:
                self._remove_at(i)
                return True
        return False

    def _remove_at(self, i: int) -> None:
        q = self._q
        last_index = len(q) - 1
        if i == last_index:
            q.pop()
            return
        moved = q.pop()
        self._sift_down(i, moved)
        if q[i] is moved:
            self._sift_up(i, moved)

    def _sift_up(self, k: int, x: T) -> None:
        q = self._q
        while k > 0:
            parent = (k - 1) >> 1
            e = q[parent]
            if self._cmp(x, e) >= 0:
                break
            q[k] = e
            k = parent
        q[k] = x

    def _sift_down(self, k: int, x: T) -> None:
        q = self._q
        n = len(q)
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = q[child]
            right = child + 1
            if right < n and self._cmp(c, q[right]) > 0:
                child = right
                c = q[child]
            if self._cmp(x, c) <= 0:
                break
            q[k] = c
            k = child
        if n:
            q[k] = x


class KeyedJavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` of elements compared by a key that is fixed while they are inside.

    ``offer(key, element)`` and ``poll() -> (key, element)`` run Java's ``siftUp`` / ``siftDown`` on the keys
    only (kept in an array parallel to the elements'), so elements with equal keys leave in the order Java's
    heap gives them and are never compared themselves. ``add_all`` offers one by one, as
    ``PriorityQueue.addAll`` does (not a heapify). The caller re-offers an element after changing its key.
    """

    __slots__ = ("_items", "_keys")

    def __init__(self) -> None:
        self._keys: list[Any] = []
        self._items: list[T] = []

    def __len__(self) -> int:
        return len(self._keys)

    def __bool__(self) -> bool:
        return bool(self._keys)

    def array(self) -> list[tuple[Any, T]]:
        """(key, element) in the backing array's order (what Java's iterator visits)."""
        return list(zip(self._keys, self._items, strict=True))

    def backing(self) -> tuple[list[Any], list[T]]:
        """The key and element arrays themselves, not copies (for a caller that reads Java's layout in a hot
        loop); the caller must not change them."""
        return self._keys, self._items

    @classmethod
    def from_array(cls, keys: list[Any], items: list[T]) -> KeyedJavaPriorityQueue[T]:
        """The queue whose backing array is exactly ``keys`` / ``items`` (a valid heap the caller built by
        Java's rules: ``array()`` of another queue, or a layout derived from one)."""
        queue: KeyedJavaPriorityQueue[T] = cls()
        queue._keys, queue._items = keys, items
        return queue

    def add_all(self, entries: Iterable[tuple[Any, T]]) -> None:
        for key, item in entries:
            self.offer(key, item)

    def offer(self, key: Any, item: T) -> None:
        keys, items = self._keys, self._items
        k = len(keys)
        keys.append(key)
        items.append(item)
        while k > 0:
            parent = (k - 1) >> 1
            pk = keys[parent]
            if key >= pk:
                break
            keys[k] = pk
            items[k] = items[parent]
            k = parent
        keys[k] = key
        items[k] = item

    def poll(self) -> tuple[Any, T]:
        """Remove and return the head as (key, element); IndexError when empty (Java returns null)."""
        key = self._keys[0]
        return key, self.poll_item()

    def poll_item(self) -> T:
        """Remove and return the head element (``poll`` without its key); IndexError when empty."""
        keys, items = self._keys, self._items
        head = items[0]
        key = keys.pop()
        item = items.pop()
        n = len(keys)
        if n:
            k = 0
            half = n >> 1
            while k < half:
                child = 2 * k + 1
                ck = keys[child]
                right = child + 1
                if right < n and ck > keys[right]:
                    child = right
                    ck = keys[right]
                if key <= ck:
                    break
                keys[k] = ck
                items[k] = items[child]
                k = child
            keys[k] = key
            items[k] = item
        return head


    def peek_item(self) -> T:
        """The head element (IndexError when empty)."""
        return self._items[0]

    def replace_head(self, key: Any) -> T:
        """``poll()`` then ``offer(key, head)`` in one call, leaving the same array as those two Java calls;
        returns the head. For the assignors' loop "take the least loaded, give it a task, put it back".

        The sifts are written out here as in ``poll_item`` and ``offer`` on purpose: calling shared sift
        functions (or those two methods) made the streams sticky assignor measurably slower at every shape of
        benchmarks/bench_streams_protocol.py (docs/performance.md), a path the broker runs on every group change."""
        keys, items = self._keys, self._items
        head = items[0]
        last_key = keys.pop()
        last = items.pop()
        n = len(keys)
        if n:  # poll: the last element sifts down from the root
            k = 0
            half = n >> 1
            while k < half:
                child = 2 * k + 1
                ck = keys[child]
                right = child + 1
                if right < n and ck > keys[right]:
                    child = right
                    ck = keys[right]
                if last_key <= ck:
                    break
                keys[k] = ck
                items[k] = items[child]
                k = child
            keys[k] = last_key
            items[k] = last
        keys.append(key)  # offer: the head, with its new key, sifts up from the end
        items.append(head)
        k = n
        while k > 0:
            parent = (k - 1) >> 1
            pk = keys[parent]
            if key >= pk:
                break
            keys[k] = pk
            items[k] = items[parent]
            k = parent
        keys[k] = key
        items[k] = head
        return head


def java_string_key(text: str) -> bytes:
    """Sort key of Java's ``String.compareTo``: UTF-16 code units compared as unsigned numbers. Big-endian
    UTF-16 bytes compare the same way; Python's own ``str`` order (code points) differs only for characters
    outside the Basic Multilingual Plane."""
    return text.encode("utf-16-be", "surrogatepass")


def priority_queue_poll_order(keys: list[int]) -> list[int]:
    """Positions of ``keys`` in the order a ``java.util.PriorityQueue`` returns them when every key is
    offered (in list order) before the first poll.

    Equal keys come out in heap order, not insertion order, which is what callers need this for.
    The same sift rules as ``JavaPriorityQueue``, specialised to integer keys (tens of thousands of
    movements in one rebalance).
    """
    qk: list[int] = []
    qi: list[int] = []
    for ident, k in enumerate(keys):
        i = len(qk)
        qk.append(k)
        qi.append(ident)
        while i:
            p = (i - 1) >> 1
            pk = qk[p]
            if k >= pk:
                break
            qk[i] = pk
            qi[i] = qi[p]
            i = p
        qk[i] = k
        qi[i] = ident
    order: list[int] = []
    append = order.append
    while qk:
        append(qi[0])
        k = qk.pop()
        ident = qi.pop()
        n = len(qk)
        if not n:
            break
        half = n >> 1
        i = 0
        while i < half:
            c = 2 * i + 1
            ck = qk[c]
            r = c + 1
            if r < n:
                rk = qk[r]
                if ck > rk:
                    c = r
                    ck = rk
            if k <= ck:
                break
            qk[i] = ck
            qi[i] = qi[c]
            i = c
        qk[i] = k
        qi[i] = ident
    return order


class UniqueJavaPriorityQueue(JavaPriorityQueue[K]):
    """``java.util.PriorityQueue`` over distinct elements in their natural order, with O(1) lookup.

    With distinct elements Java's ``remove(o)`` (first equal element in the array) is the element's
    only slot, so tracking slots changes no outcome; the array equals what Java holds at every step.
    """

    __slots__ = ("_pos",)

    def __init__(self, items: Iterable[K] = ()) -> None:
        array = list(items)
        self._pos: dict[Any, int] = {x: i for i, x in enumerate(array)}
        if len(self._pos) != len(array):
            raise ValueError("UniqueJavaPriorityQueue needs distinct elements")
        super().__init__(_natural, array)

    def __contains__(self, item: object) -> bool:
        return item in self._pos

    def poll(self) -> K | None:
        if self._q:
            del self._pos[self._q[0]]
        return super().poll()

    def remove(self, item: K) -> bool:
        i = self._pos.pop(item, None)
        if i is None:
            return False
        self._remove_at(i)
        return True

    def _sift_up(self, k: int, x: Any) -> None:
        q: list[Any] = self._q
        pos = self._pos
        while k > 0:
            parent = (k - 1) >> 1
            e = q[parent]
            if x >= e:
                break
            q[k] = e
            pos[e] = k
            k = parent
        q[k] = x
        pos[x] = k

    def _sift_down(self, k: int, x: Any) -> None:
        q: list[Any] = self._q
        pos = self._pos
        n = len(q)
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = q[child]
            right = child + 1
            if right < n and c > q[right]:
                child = right
                c = q[child]
            if x <= c:
                break
            q[k] = c
            pos[c] = k
            k = child
        if n:
            q[k] = x
            pos[x] = k


def _natural(x: Any) -> Any:
    return x


def natural_queue_array(
    sorted_items: Sequence[K],
    collection_order: Iterable[K],
    removed: Iterable[K] = (),
    polls: int = 0,
    removed_after: Iterable[K] = (),
) -> list[K]:
    """The backing array of ``new PriorityQueue<>(collection)`` over distinct, naturally ordered
    elements after ``remove(o)`` of each of ``removed``, ``polls`` polls, then ``remove(o)`` of each of
    ``removed_after``: the order Java's iterator visits the queue in.

    ``sorted_items`` holds the elements in natural order, ``collection_order`` in the collection's
    iteration order (what Java copies into the array before heapifying). The heap runs on the
    elements' ranks, so every comparison is an int comparison.
    """
    removed, removed_after = list(removed), list(removed_after)
    order = list(collection_order)
    if not (removed or removed_after or polls) and order == list(sorted_items):
        return order  # a sorted array is already a heap: heapify moves nothing
    rank = {item: i for i, item in enumerate(sorted_items)}
    if removed or removed_after:
        queue: UniqueJavaPriorityQueue[int] = UniqueJavaPriorityQueue([rank[item] for item in order])
        for item in removed:
            queue.remove(rank[item])
        for _ in range(polls):
            queue.poll()
        for item in removed_after:
            queue.remove(rank[item])
        return [sorted_items[i] for i in queue.array()]
    array = [rank[item] for item in order]
    for i in range((len(array) >> 1) - 1, -1, -1):
        _sift_down_ints(array, i, array[i])
    for _ in range(polls):
        last = array.pop()
        if array:
            _sift_down_ints(array, 0, last)
    return [sorted_items[i] for i in array]


def _sift_down_ints(q: list[int], k: int, x: int) -> None:
    """Java's siftDown on a list of ints (``JavaPriorityQueue._sift_down`` without the key calls)."""
    n = len(q)
    half = n >> 1
    while k < half:
        child = 2 * k + 1
        c = q[child]
        right = child + 1
        if right < n and c > q[right]:
            child = right
            c = q[child]
        if x <= c:
            break
        q[k] = c
        k = child
    q[k] = x


# -- Java's PriorityQueue on a list of distinct entries ----------------------------------------------

Live = Callable[[Any], Any]


def java_heap_push(q: list[Any], entry: Any, live: Live | None = None, touched: list[int] | None = None) -> None:
    """Java's ``offer``: append and sift up. With ``live`` every comparison reads ``live(entry)`` (keys that
    changed while inside), and the slots written are appended to ``touched``."""
    if live is None:
        heapq.heappush(q, entry)  # the same moves as Java's siftUp for distinct keys, on any array
        return
    q.append(entry)
    _sift_up_live(q, len(q) - 1, entry, live, touched)


def java_heap_poll(q: list[Any], valid: bool) -> Any:
    """Java's ``poll``. ``valid``: the list is a heap (every entry >= its parent), where heapq's pop leaves
    the same array as Java's; otherwise Java's siftDown runs step by step."""
    if valid:
        return heapq.heappop(q)
    result = q[0]
    last = q.pop()
    if q:
        _sift_down_live(q, 0, last, _identity, None)
    return result


def java_heap_remove_at(q: list[Any], i: int, live: Live | None = None, touched: list[int] | None = None) -> None:
    """Java's ``removeAt(i)``: the last entry moves into slot i, sifts down, and if it stayed, sifts up."""
    last_index = len(q) - 1
    if i == last_index:
        q.pop()
        return
    moved = q.pop()
    key = live or _identity
    _sift_down_live(q, i, moved, key, touched)
    if q[i] is moved:
        _sift_up_live(q, i, moved, key, touched)


def java_heap_is_valid(q: Sequence[Any], slots: Iterable[int] | None = None) -> bool:
    """Every entry >= its parent; with ``slots``, only the pairs that involve those slots are checked."""
    if slots is None:
        parents = chain.from_iterable(zip(q, q, strict=True))  # each entry twice: the parents of slots 1, 2, ...
        return all(map(operator.le, parents, islice(q, 1, None)))
    n = len(q)
    for i in slots:
        if i >= n:
            continue
        if i and q[i] < q[(i - 1) >> 1]:
            return False
        child = 2 * i + 1
        if (child < n and q[child] < q[i]) or (child + 1 < n and q[child + 1] < q[i]):
            return False
    return True


def _identity(x: Any) -> Any:
    return x


def _sift_up_live(q: list[Any], k: int, x: Any, live: Live, touched: list[int] | None) -> None:
    kx = live(x)
    while k > 0:
        parent = (k - 1) >> 1
        e = q[parent]
        if kx >= live(e):
            break
        q[k] = e
        if touched is not None:
            touched.append(k)
        k = parent
    q[k] = x
    if touched is not None:
        touched.append(k)


def _sift_down_live(q: list[Any], k: int, x: Any, live: Live, touched: list[int] | None) -> None:
    n = len(q)
    half = n >> 1
    kx = live(x)
    while k < half:
        child = 2 * k + 1
        c = q[child]
        kc = live(c)
        right = child + 1
        if right < n:
            kr = live(q[right])
            if kc > kr:
                child = right
                c = q[child]
                kc = kr
        if kx <= kc:
            break
        q[k] = c
        if touched is not None:
            touched.append(k)
        k = child
    q[k] = x
    if touched is not None:
        touched.append(k)


def subtopology_hash(topology_name: str | None, subtopology: int) -> int:
    """Java's ``Objects.hash(nodeGroupId, namedTopology)`` of Kafka's ``TopologyMetadata.Subtopology``."""
    h = 31 * (31 + subtopology)
    if topology_name is not None:
        h += java_string_hash(topology_name)
    return to_int32(h)


def leader_subtopology_walk(subtopologies: Sequence[tuple[str | None, int]]) -> tuple[tuple[str | None, int], ...]:
    """The order Kafka's group leader walks the subtopologies (given in the topology's node-group order): its
    topic groups are ``new HashMap<>()`` with ``putAll`` of the builder's LinkedHashMap
    (``TopologyMetadata.subtopologyTopicsInfoMapExcluding``), so a copy-sized table in hash order."""
    keys = list(subtopologies)
    return tuple(hash_iteration_order(keys, initial_capacity=hashmap_copy_capacity(len(keys)),
                                      hash_of=lambda k: subtopology_hash(k[0], k[1])))


def leader_task_order(tasks: Iterable[TaskId], walk: Sequence[tuple[str | None, int]]) -> list[TaskId]:
    """Iteration order of a HashMap/HashSet of tasks the leader fills walking its subtopologies in ``walk`` order,
    partitions ascending within one (``PartitionGrouper``'s task map, ``ChangelogTopics``' stateful tasks)."""
    rank = {key: i for i, key in enumerate(walk)}
    last = len(rank)
    inserted = sorted(tasks, key=lambda t: (rank.get((t[0], t[1]), last), t))
    return hash_iteration_order(inserted)
