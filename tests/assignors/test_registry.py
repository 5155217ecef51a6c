from __future__ import annotations

from pathlib import Path

import pytest

from taskassign.assignors.identity import IdentityTaskAssignor
from taskassign.assignors.registry import (
    BUILTIN_ASSIGNORS,
    DEFAULT_ASSIGNOR,
    assignor_display_name,
    check_assignor,
    create_assignor,
    resolve_assignor_class,
    streams_group_assignor,
)
from taskassign.errors import AssignorNotFoundError
from tests.helpers import EXAMPLES_DIR


def test_every_builtin_resolves_and_assigns_something() -> None:
    for name in BUILTIN_ASSIGNORS:
        assignor = create_assignor(name, {})
        assert callable(assignor.assign)
    assert DEFAULT_ASSIGNOR in BUILTIN_ASSIGNORS


def test_short_names_are_forgiving() -> None:
    assert resolve_assignor_class("Identity") is IdentityTaskAssignor
    assert assignor_display_name(" IDENTITY ") == "identity"


def test_module_paths() -> None:
    assert resolve_assignor_class("taskassign.assignors.identity:IdentityTaskAssignor") is IdentityTaskAssignor
    assert resolve_assignor_class("taskassign.assignors.identity.IdentityTaskAssignor") is IdentityTaskAssignor


def test_file_path() -> None:
    cls = resolve_assignor_class(f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor")
    assert cls.__name__ == "StateWeightedStickyAssignor"


def test_configure_receives_configs() -> None:
    received = {}

    class Configurable(IdentityTaskAssignor):
        def configure(self, configs: dict[str, object]) -> None:
            received.update(configs)

    import sys
    import types

    module = types.ModuleType("taskassign_test_configurable")
    module.Configurable = Configurable  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    create_assignor("taskassign_test_configurable:Configurable", {"num.standby.replicas": 3})
    assert received == {"num.standby.replicas": 3}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nonsense", "built-in assignors: "),
        ("no.such.module:Thing", "cannot import module"),
        ("taskassign.assignors.identity:Missing", "has no attribute"),
        ("taskassign.errors:TaskassignError", "not a class with an assign"),
        ("does/not/exist.py:X", "no such file"),
        (":X", "expected"),
        ("../../x:Y", "neither a module name"),
        (".relative:Y", "neither a module name"),
        ("a..b:Y", "neither a module name"),
        ("some dir/x:Y", "neither a module name"),
    ],
)
def test_resolution_errors(spec: str, message: str) -> None:
    with pytest.raises(AssignorNotFoundError, match=message):
        resolve_assignor_class(spec)


def test_file_that_fails_to_import(tmp_path: Path) -> None:
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(AssignorNotFoundError, match="boom"):
        resolve_assignor_class(f"{bad}:X")


class NeedsArguments(IdentityTaskAssignor):
    def __init__(self, weight: int) -> None:
        self.weight = weight


def test_constructor_with_arguments_is_rejected() -> None:
    with pytest.raises(AssignorNotFoundError, match="without arguments"):
        create_assignor(f"{__name__}:NeedsArguments")


def test_module_that_fails_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "taskassign_test_broken_module.py").write_text("raise ValueError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AssignorNotFoundError, match="importing module 'taskassign_test_broken_module' failed"):
        resolve_assignor_class("taskassign_test_broken_module:X")


def test_streams_protocol_assignors_are_names_not_classes() -> None:
    assert streams_group_assignor("streams_sticky") == "sticky"
    assert streams_group_assignor("Streams-Balanced") == "balanced"
    assert streams_group_assignor("sticky") is None  # the classic KIP-924 StickyTaskAssignor
    check_assignor("streams_balanced")
    check_assignor("high_availability")
    with pytest.raises(AssignorNotFoundError, match="broker-side assignor of the streams protocol"):
        resolve_assignor_class("streams_sticky")
    with pytest.raises(AssignorNotFoundError, match=r"streams protocol \(KIP-1071\): streams_balanced, streams_sticky"):
        check_assignor("nonsense")
    assert assignor_display_name("streams-sticky") == "streams_sticky"
