from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests import progress

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    progress.register(config)
