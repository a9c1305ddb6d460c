"""Test-suite configuration: hypothesis profiles.

    HYPOTHESIS_PROFILE=ci    (default) about 50 examples per property, fast enough for CI
    HYPOTHESIS_PROFILE=long  2000 examples per property, for a thorough run
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
