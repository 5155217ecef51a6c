from __future__ import annotations

from pathlib import Path

import pytest

from taskassign.assignors.identity import IdentityTaskAssignor
from taskassign.assignors.registry import (
    BUILTIN_ASSIGNORS,
    DEFAULT_ASSIGNOR,
    ResolvedAssignor,
    builtin_name,
    create_assignor,
    resolve,
)
from taskassign.errors import AssignorNotFoundError, PluginNotAllowedError
from tests.helpers import EXAMPLES_DIR


def test_every_builtin_resolves_and_assigns_something() -> None:
    for name in BUILTIN_ASSIGNORS:
        assignor = create_assignor(name, {})
        assert callable(assignor.assign)
    assert DEFAULT_ASSIGNOR in BUILTIN_ASSIGNORS


def test_short_names_are_forgiving() -> None:
    assert resolve("Identity").assignor_class is IdentityTaskAssignor
    assert resolve(" IDENTITY ").name == "identity"


def test_module_paths() -> None:
    for spec in ("taskassign.assignors.identity:IdentityTaskAssignor",
                 "taskassign.assignors.identity.IdentityTaskAssignor"):
        resolved = resolve(spec)
        assert resolved.is_plugin and resolved.class_name == "IdentityTaskAssignor"  # loaded in its own process


def test_file_path() -> None:
    resolved = resolve(f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor")
    assert resolved.class_name == "StateWeightedStickyAssignor"


def test_configure_receives_configs() -> None:
    class Configurable(IdentityTaskAssignor):
        def configure(self, configs: dict[str, object]) -> None:
            self.received = dict(configs)

    import sys
    import types

    module = types.ModuleType("taskassign_test_configurable")
    module.Configurable = Configurable  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    created = create_assignor("taskassign_test_configurable:Configurable", {"num.standby.replicas": 3})
    assert created.received == {"num.standby.replicas": 3}  # type: ignore[attr-defined]  # read from its process


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
        resolve(spec)


def test_file_that_fails_to_import(tmp_path: Path) -> None:
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(AssignorNotFoundError, match="boom"):
        resolve(f"{bad}:X")


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
        resolve("taskassign_test_broken_module:X")


def test_streams_protocol_assignors_are_names_not_classes() -> None:
    assert resolve("streams_sticky").kafka_name == "sticky"
    assert resolve("Streams-Balanced").kafka_name == "balanced"
    assert resolve("sticky").kafka_name is None  # the classic KIP-924 StickyTaskAssignor
    assert resolve("streams_balanced").is_streams and not resolve("high_availability").is_streams
    with pytest.raises(AssignorNotFoundError, match="broker-side assignor of the streams protocol"):
        resolve("streams_sticky").classic_class()
    with pytest.raises(AssignorNotFoundError, match="broker-side assignor of the streams protocol"):
        create_assignor("streams_sticky")
    with pytest.raises(AssignorNotFoundError, match=r"streams protocol \(KIP-1071\): streams_balanced, streams_sticky"):
        resolve("nonsense")
    assert resolve("streams-sticky").name == "streams_sticky"


def test_resolve_builds_one_object_per_kind() -> None:
    builtin = resolve("high-availability")
    assert isinstance(builtin, ResolvedAssignor)
    assert (builtin.spec, builtin.name, builtin.protocol, builtin.builtin, builtin.kafka_name) == (
        "high-availability", "high_availability", "classic", True, None)
    assert builtin.assignor_class is not None and builtin.assignor_class.__name__ == "HighAvailabilityTaskAssignor"
    assert resolve(builtin) is builtin  # an already resolved assignor is not resolved again
    module = resolve(" taskassign.assignors.identity:IdentityTaskAssignor ")
    assert module.is_plugin and module.name == "taskassign.assignors.identity:IdentityTaskAssignor"
    assert module.assignor_class is None and module.class_name == "IdentityTaskAssignor"  # it lives in its process
    file_spec = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"
    from_file = resolve(file_spec)
    assert from_file.is_plugin and from_file.protocol == "classic" and from_file.name == file_spec
    streams = resolve("Streams-Sticky")
    assert (streams.name, streams.protocol, streams.builtin, streams.assignor_class, streams.kafka_name) == (
        "streams_sticky", "streams", True, None, "sticky")
    assert builtin_name("Streams-Sticky") == "streams_sticky" and builtin_name("a.b:C") is None


def test_resolve_unknown_name_error_text() -> None:
    with pytest.raises(AssignorNotFoundError) as info:
        resolve("nonsense")
    assert str(info.value) == (
        "unknown assignor 'nonsense'; built-in assignors: fallback_prior, high_availability, identity, legacy_sticky, "
        "state_aware, sticky, sticky_preserve; streams protocol (KIP-1071): streams_balanced, streams_sticky; or give "
        "'module:Class' or 'path/to/file.py:Class'")


def test_resolve_refuses_a_plugin_from_data_before_importing_it(tmp_path: Path) -> None:
    sentinel = tmp_path / "imported"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(f"open({str(sentinel)!r}, 'w').close()\nclass A:\n    def assign(self, state): ...\n")
    with pytest.raises(PluginNotAllowedError, match=r"from the snapshot is a plug-in .*--allow-plugins"):
        resolve(f"{plugin}:A", allow_plugins=False, source="the snapshot")
    assert not sentinel.exists()
    assert resolve("streams_balanced", allow_plugins=False).is_streams  # built-ins need no opt-in
    assert resolve(f"{plugin}:A", allow_plugins=True).is_plugin and sentinel.exists()


def test_a_plugin_file_is_imported_once_and_instantiated_per_rebalance(tmp_path: Path) -> None:
    plugin = tmp_path / "counting.py"
    plugin.write_text("from taskassign.assignors.identity import IdentityTaskAssignor\n"
                      "import sys\n"
                      "sys.IMPORTS = getattr(sys, 'IMPORTS', 0) + 1\n"
                      "class A(IdentityTaskAssignor):\n"
                      "    def __init__(self):\n"
                      "        self.imports, self.module = sys.IMPORTS, type(self).__module__\n")
    resolved = resolve(f"{plugin}:A")
    first, second = resolved.create({}), resolved.create({})
    assert first is not second and first._iid != second._iid  # type: ignore[attr-defined]
    assert (first.imports, second.imports) == (1, 1)  # type: ignore[attr-defined]
    assert first.module == "taskassign_user_counting"  # type: ignore[attr-defined]
