"""The documentation: the site builds in strict mode (a broken link or anchor fails it), the
generated command reference holds every option of the app, the README's two commands are the
ones CI runs, and every command of the README's tour and of Getting started runs at a small
game count, so that neither can go stale."""

from __future__ import annotations

import html
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
TOURS = (ROOT / "README.md", ROOT / "docs" / "getting-started.md")
README_MAX_CHARS = 8000
FIRST_MINUTE_CHARS = 4000  # about a minute of reading
GAMES = "2000"  # games per point or table size of every documented command run here
# the smallest budget of an equilibrium search (one iteration, no audit)
EQUILIBRIUM = {"--iterations": "1", "--meta-games": "100", "--meta-steps": "1",
               "--generations": "1", "--population": "2", "--screen-games": "100",
               "--search-games": "100", "--select-games": "100", "--starts": "1",
               "--audit-starts": "1", "--confirm-games": "200", "--audit-games": "200",
               "--audits": "0", "--cell-games": "100", "--searcher-games": "0"}
QUIET = {"sweep", "simulate", "report", "equilibrium", "exploit", "experiment", "tune",
         "ladder"}


def mkdocs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # (Material's notice about MkDocs 2)
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    r = mkdocs("build", "--strict", "--site-dir", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_the_site_builds_in_strict_mode(site):
    for page in ("index.html", "getting-started/index.html", "findings/index.html",
                 "reference/cli/index.html", "reference/api/index.html"):
        assert (site / page).is_file(), page


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    """The site's own validation settings turn a missing page or anchor into a failure."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n## Here\n")
    for link in ("index.md#nowhere", "missing.md"):
        (docs / "page.md").write_text(f"# Page\n\n[a link]({link})\n")
        (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({
            "site_name": "t", "docs_dir": "docs", "validation": config["validation"]}))
        r = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
        assert r.returncode != 0, (link, r.stdout + r.stderr)
        assert "page.md" in r.stdout + r.stderr


def test_the_command_reference_holds_every_command_and_option_of_the_app(site):
    from fbsim.docs_cli import command

    page = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference/cli/index.html").read_text()))
    for name, sub in command.commands.items():
        assert f"fbsim {name} [OPTIONS]" in page, name
        for param in sub.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in page, (name, opt)


def test_the_api_reference_documents_what_the_notebook_imports(site):
    notebook = (ROOT / "notebooks" / "explore_results.ipynb").read_text()
    page = (site / "reference/api/index.html").read_text()
    imported = re.findall(r"from (fbsim[\w.]*) import ([\w, ]+)", notebook)
    assert imported
    for module, names in imported:
        for name in names.split(","):
            assert f'id="{module}.{name.strip()}"' in page, f"{module}.{name.strip()}"


def test_the_readme_is_a_landing_page_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text) <= README_MAX_CHARS, len(text)
    first_screen = text[:2500]
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/fbsim sweep" \
        in first_screen
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci.startswith("python3 -m venv .venv") and "pytest" in ci
    assert "apt-get install -y chromium chromium-driver && " + ci in first_screen
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+://", target):
            assert (ROOT / target).exists(), target


def tour_commands(path: Path) -> list[list[str]]:
    """The `fbsim` commands of a Markdown file's fenced code blocks, as argument lists
    (`.venv/bin/fbsim` read as `fbsim`; `&&` separates commands; comments dropped)."""
    commands = []
    for block in re.findall(r"^```(?:sh|bash|shell|console)?\n(.*?)^```", path.read_text(),
                            flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                argv = shlex.split(part, comments=True)
                if argv and argv[0] in ("fbsim", ".venv/bin/fbsim"):
                    commands.append(["fbsim", *argv[1:]])
    return commands


def small(argv: list[str], tmp: Path) -> list[str]:
    """`argv` at a small game count (and budget), quiet."""
    cmd, args = argv[1], list(argv[2:])

    def put(flag: str, value: str) -> None:
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args.extend([flag, value])

    for flag in ("--out", "--results"):
        if flag in args:
            assert not args[args.index(flag) + 1].startswith("results"), \
                f"a documented command writes into results/: {shlex.join(argv)}"
    if cmd in ("sweep", "simulate", "report", "experiment"):
        put("--games", GAMES)
    elif cmd == "equilibrium":
        draw = args[args.index("--draw") + 1] if "--draw" in args else "seat"
        for flag, value in EQUILIBRIUM.items():
            if (flag == "--cell-games") == (draw == "agenda") or flag == "--iterations":
                put(flag, value)
    elif cmd == "exploit":  # (each oracle's own budget: the other's flags are refused)
        search = "--oracle" in args and args[args.index("--oracle") + 1] == "search"
        for flag, value in ((("--seat-games", "20"), ("--rollouts", "2")) if search else
                            (("--budget", "4000"), ("--generations", "1"),
                             ("--population", "2"), ("--confirm-games", GAMES))):
            put(flag, value)
    elif cmd == "ladder":
        for flag, value in (("--games", "200"), ("--seat-games", "20"), ("--rollouts", "2")):
            put(flag, value)
    elif cmd not in ("rules", "bots", "replay", "plot"):
        pytest.fail(f"no small form of a documented command: {shlex.join(argv)}")
    if cmd == "experiment":
        put("--results", str(tmp / "results-out"))
    if cmd in QUIET and "-q" not in args:
        args.append("-q")
    return ["fbsim", cmd, *args]


def expected_outputs(argv: list[str]) -> list[str]:
    """Files a command writes, relative to the folder it runs in."""
    cmd, args = argv[1], argv[2:]

    def value(flag: str, default: str) -> str:
        return args[args.index(flag) + 1] if flag in args else default

    if cmd == "sweep":
        out = value("--out", "out/sweep")
        return [f"{out}/{t}.parquet" for t in ("win_rates", "outcomes", "seats")]
    if cmd == "report":
        page = value("--out", "report.html")
        return [page, page.removesuffix(".html") + ".parquet"]
    if cmd == "plot":
        return [f"{value('--out', args[0] + '/plots')}/win_rates.png"]
    if cmd == "ladder":
        out = value("--out", "out/ladder")
        return [f"{out}/ladder.parquet", f"{out}/ladder.json", f"{out}/ladder.md"]
    if cmd == "equilibrium":
        out = value("--out", "out/equilibrium")
        sizes = value("--players", "3..6")
        first = sizes.split("..")[0].split(",")[0]
        return [f"{out}/p{first}.toml", f"{out}/summary.json"]
    return []


def documented_commands() -> list[list[str]]:
    seen, out = set(), []
    for path in TOURS:
        for argv in tour_commands(path):
            if tuple(argv) not in seen:
                seen.add(tuple(argv))
                out.append(argv)
    return out


def test_the_tours_hold_the_commands_a_designer_runs_first():
    commands = {argv[1] for argv in documented_commands()}
    assert {"sweep", "report", "equilibrium", "replay", "rules"} <= commands, commands
    # a newcomer reaches the report and the equilibrium within a minute of reading the README
    readme = (ROOT / "README.md").read_text()
    for command in ("fbsim report", "fbsim equilibrium"):
        assert readme.index(command) < FIRST_MINUTE_CHARS, command


@pytest.mark.slow
def test_every_command_of_the_tours_runs_at_a_small_game_count(tmp_path):
    """In a scratch folder where `results/` and `examples/` are the repository's (read, never
    written), in the order the pages give them (a plot follows its sweep)."""
    for name in ("results", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    fbsim = [sys.executable, "-c", "from fbsim.cli import entry; entry()"]
    for argv in documented_commands():
        args = small(argv, tmp_path)
        stdout = None
        if ">" in args:
            i = args.index(">")
            stdout, args = tmp_path / args[i + 1], args[:i]
        r = subprocess.run(fbsim + args[1:], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, (shlex.join(args), r.stdout[-2000:], r.stderr[-2000:])
        assert r.stdout.strip() or r.stderr.strip(), shlex.join(args)
        if stdout is not None:
            stdout.write_text(r.stdout)
        for path in expected_outputs(args):
            assert (tmp_path / path).is_file(), (shlex.join(args), path)
