"""Test-suite configuration: hypothesis profiles, and the builds the suite compiles.

    HYPOTHESIS_PROFILE=ci    (default) about 50 examples per property, fast enough for CI
    HYPOTHESIS_PROFILE=long  2000 examples per property, for a thorough run

The suite plays builds for any table's shape (FBSIM_SHAPES=none unless the environment says
otherwise): a build for one shape plays the games of the build for any, which
tests/test_shape.py checks at every standard shape with the shapes switched on, and compiling
a build per shape for every lineup the other tests play would double the suite's compile
time. Set FBSIM_SHAPES=standard to run every test on the shaped builds.
"""

from __future__ import annotations

import os

os.environ.setdefault("FBSIM_SHAPES", "none")

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
