"""The named experiments, one module each (`fbsim experiment --list`).

Each module defines NAME, SUMMARY, `spec(games) -> SweepSpec`, an optional X (the plotted
parameter) and `findings(tables) -> list[str]` (the key numbers for its summary.md).
"""
