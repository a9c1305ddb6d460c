"""The command line as a click command: the documentation's command reference is generated
from it (`docs/reference/cli.md`, mkdocs-click), so the reference and the app cannot differ."""

from __future__ import annotations

import typer

from fbsim.cli import app

command = typer.main.get_command(app)
