"""Fuzz the wire decoders: random and mutated inputs must decode or raise DecodeError, nothing else.

Every input goes through the decoder of its kind; a decoded message is also rendered as JSON (which
decodes nested userData) and re-encoded. Any exception other than DecodeError is a crash and is
recorded with its input. Inputs: half random bytes, half valid messages of random versions with
1-4 mutations (bit flips, truncation, inserted bytes, boundary bytes, overwritten length fields).

``--capture-attempts`` runs ``taskassign capture`` against a loopback broker replaying recorded frames
(tests/capture/data/recordings) whose responses carry 1-3 mutations: each must end in a capture or exit 2 with
one error line, never a traceback (tests/fuzz_surfaces.py).

    PYTHONPATH=src:. python -m benchmarks.fuzz_wire --inputs 200000 --capture-attempts 200 --seed 1
"""

from __future__ import annotations

import argparse
import platform
import random
import time
import traceback
from collections import Counter
from typing import Any

from benchmarks._results import load_average, report
from taskassign.errors import DecodeError
from taskassign.formats.wire_documents import MESSAGE_KINDS, message_to_json
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import Assignment, AssignmentInfo, HostInfo, Subscription, SubscriptionInfo

ALPHABET = "abcXYZ-_.09:\0é中𝄞"


def _text(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, n)))


def _task(rng: random.Random, named: bool) -> TaskId:
    """A task id; one message's ids are all named or all unnamed (Kafka cannot order a mix)."""
    return TaskId(rng.choice([0, 1, 2, 2**31 - 1]), rng.randint(0, 40), (_text(rng) or "t") if named else None)


def _named(rng: random.Random, version: int) -> bool:
    return version >= 10 and rng.random() < 0.3


def _parts(rng: random.Random) -> tuple[tuple[str, int], ...]:
    return tuple((_text(rng), rng.randint(-2, 50)) for _ in range(rng.randint(0, 4)))


def valid_message(kind: str, rng: random.Random) -> bytes:
    pid = ProcessId.of_ints(rng.getrandbits(64) - 2**63, rng.getrandbits(64) - 2**63)
    if kind == "subscription_info":
        v = rng.randint(1, 13)
        if v > 11:
            return SubscriptionInfo(v, None, v).encode()
        named = _named(rng, v)
        sums = {_task(rng, named): rng.choice([-2, -3, 0, 5, 2**62]) for _ in range(rng.randint(0, 6))}
        return SubscriptionInfo.of(v, pid, sums, user_endpoint=rng.choice([None, "host:1", _text(rng) or None]),
                                   unique_field=rng.randint(-128, 127), error_code=rng.randint(0, 4),
                                   client_tags={_text(rng): _text(rng) for _ in range(rng.randint(0, 3))}).encode()
    if kind == "assignment_info":
        v = rng.randint(1, 11)
        named = _named(rng, v)
        host_map = tuple((HostInfo(_text(rng), rng.randint(0, 65535)), _parts(rng)) for _ in range(rng.randint(0, 3)))
        return AssignmentInfo(
            v, rng.randint(-1, 11) if v >= 3 else -1,
            tuple(_task(rng, named) for _ in range(rng.randint(0, 5))),
            tuple((_task(rng, named), _parts(rng)) for _ in range(rng.randint(0, 3))),
            host_map if v >= 2 else (), host_map if v >= 6 else (),
            rng.randint(0, 4) if v >= 4 else 0, rng.choice([0, 2**63 - 1, 1_700_000_000_000]) if v >= 7 else 2**63 - 1,
        ).encode()
    inner = valid_message("subscription_info" if kind == "subscription" else "assignment_info", rng)
    groups = tuple((_text(rng), tuple(rng.randint(0, 9) for _ in range(rng.randint(0, 3))))
                   for _ in range(rng.randint(0, 3)))
    if kind == "subscription":
        v = rng.randint(0, 4)
        return Subscription(v, tuple(_text(rng) for _ in range(rng.randint(0, 3))), inner,
                            groups if v >= 1 else (), rng.randint(-1, 9) if v >= 2 else -1,
                            rng.choice([None, "rack", ""]) if v >= 3 else None).encode()
    return Assignment(rng.randint(0, 4), groups, inner).encode()


def mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        at = rng.randrange(len(buf)) if buf else 0
        if op == 0 and buf:
            buf[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            del buf[at:]
        elif op == 2:
            buf[at:at] = rng.randbytes(rng.randint(1, 8))
        elif op == 3 and buf:
            buf[at] = rng.choice([0x00, 0x7F, 0x80, 0xC0, 0xED, 0xFF])
        elif buf:  # overwrite an aligned int32 with a length-like value
            at -= at % 4
            buf[at:at + 4] = rng.choice([-1, -2, 0, 1, 2**31 - 1, 65535, len(buf)]).to_bytes(4, "big", signed=True)
    return bytes(buf)


def run(inputs: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    kinds = sorted(MESSAGE_KINDS)
    outcome: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    crashes: list[dict[str, str]] = []
    start = time.perf_counter()
    for i in range(inputs):
        kind = kinds[i % len(kinds)]
        per_kind[kind] += 1
        if rng.random() < 0.5:
            data, origin = rng.randbytes(rng.randint(0, 120)), "random"
        else:
            data, origin = mutate(valid_message(kind, rng), rng), "mutated"
        outcome[origin] += 1
        try:
            message, _ = MESSAGE_KINDS[kind](data)
            message_to_json(message)
            message.encode()
            outcome["decoded"] += 1
        except DecodeError:
            outcome["decode_error"] += 1
        except Exception as exc:  # a crash is exactly what we are looking for
            crashes.append({"kind": kind, "input_hex": data.hex(), "error": repr(exc),
                            "traceback": traceback.format_exc(limit=3)})
    seconds = time.perf_counter() - start
    return {
        "benchmark": "fuzz_wire",
        "command": f"PYTHONPATH=src python -m benchmarks.fuzz_wire --inputs {inputs} --seed {seed}",
        "seed": seed,
        "inputs_tried": inputs,
        "random_inputs": outcome["random"],
        "mutated_inputs": outcome["mutated"],
        "per_kind": dict(sorted(per_kind.items())),
        "decoded": outcome["decoded"],
        "decode_errors": outcome["decode_error"],
        "crashes": len(crashes),
        "crash_examples": crashes[:10],
        "seconds": round(seconds, 1),
        "load_average_at_end": load_average(),
        "python": platform.python_version(),
    }


def run_capture(attempts: int, seed: int) -> dict[str, Any]:
    """``taskassign capture`` against a fake broker replaying recorded frames with malformed responses
    (tests/fuzz_surfaces.capture_attempt): a capture or exit 2 with one error line, never a traceback."""
    import tempfile
    from pathlib import Path

    from tests.fuzz_surfaces import capture_attempt

    outcome: Counter[str] = Counter()
    findings: list[dict[str, str]] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        for i in range(attempts):
            result = capture_attempt(random.Random(f"{seed}:capture:{i}"), Path(workdir))
            outcome[result.kind] += 1
            if result.kind == "finding":
                findings.append({"seed": f"{seed}:capture:{i}", "error": result.error, "detail": result.detail[-800:]})
    return {"attempts": attempts, "captured": outcome["accepted"], "refused": outcome["refused"],
            "findings": len(findings), "finding_examples": findings[:5],
            "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=200_000)
    parser.add_argument("--capture-attempts", type=int, default=200,
                        help="captures against a fake broker answering malformed frames")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only, do not update results/fuzz_wire.json")
    args = parser.parse_args()
    result = run(args.inputs, args.seed)
    result["capture_against_a_fake_broker"] = run_capture(args.capture_attempts, args.seed)
    result["command"] += f" --capture-attempts {args.capture_attempts}"
    report("fuzz_wire", result, write=not args.no_write)
    if result["crashes"] or result["capture_against_a_fake_broker"]["findings"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
