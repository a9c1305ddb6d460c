"""Test-suite configuration: hypothesis profiles, and the builds the suite compiles.

    HYPOTHESIS_PROFILE=ci    (default) about 50 examples per property, fast enough for CI
    HYPOTHESIS_PROFILE=long  2000 examples per property, for a thorough run

The suite plays builds for any table's shape (FBSIM_SHAPES=none unless the environment says
otherwise): a build for one shape plays the games of the build for any, which
tests/test_shape.py checks at every standard shape with the shapes switched on, and compiling
a build per shape for every lineup the other tests play would double the suite's compile
time. Set FBSIM_SHAPES=standard to run every test on the shaped builds.

Likewise the suite's fast builds are specialised to the default lineup's bots only
(FBSIM_SPECIALISE=default): any other lineup plays the generic build, whose games are the
same, which tests/test_fast_build.py checks for specialised builds of other lineups (hoarder
and tunable seats at every table size, with FBSIM_SPECIALISE=lineups). Compiling a build
for each lineup's bots would add 6 builds (and 2 of the searcher).
"""

from __future__ import annotations

import os

os.environ.setdefault("FBSIM_SHAPES", "none")
os.environ.setdefault("FBSIM_SPECIALISE", "default")

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
