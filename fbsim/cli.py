"""The `fbsim` command line: a thin layer over functions a notebook can call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from fbsim import __version__
from fbsim.errors import FbsimError, UsageError

app = typer.Typer(
    name="fbsim",
    help="Monte Carlo balance simulation for the board game Firebreak.\n\n"
         "Every command takes --rules FILE.toml (a partial file overrides the defaults) and "
         "--set path=value (e.g. --set masks=3 --set assets.refinery.price=5). "
         "`fbsim rules` prints every key.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

RulesOpt = Annotated[Path | None, typer.Option(
    "--rules", help="TOML file of rules overriding the defaults (partial files are fine).",
    dir_okay=False)]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Override one rule: path=value, e.g. masks=3 or "
                  "bots.fog-grabber.greed=0.5. Repeatable.", metavar="PATH=VALUE")]


def _rules(rules_file: Path | None, sets: list[str] | None, players: int | None = None):
    from fbsim.rules import load_rules

    items = list(sets or [])
    if players is not None:
        items.append(f"players={players}")
    return load_rules(rules_file, items)


def _players_range(text: str | None) -> list[int | None]:
    """`4`, `3..6` or `3,5`."""
    if text is None:
        return [None]
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            if lo > hi:
                raise ValueError
            return list(range(lo, hi + 1))
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--players: expected N, LO..HI or N,M,..., got '{text}'") from None


@app.command("rules", help="Print the effective rules as TOML, with a comment per key.\n\n"
             "Save the output, edit it, and pass it back with --rules.")
def rules_cmd(rules_file: RulesOpt = None, set_: SetOpt = None,
              hash_only: Annotated[bool, typer.Option(
                  "--hash", help="Print only the rules hash.")] = False):
    from fbsim.rules import rules_hash, rules_to_toml

    r = _rules(rules_file, set_)
    typer.echo(rules_hash(r) if hash_only else rules_to_toml(r), nl=hash_only)


@app.command("bots")
def bots_cmd(rules_file: RulesOpt = None, set_: SetOpt = None):
    """List the bots and their parameters (set them with --set bots.NAME.PARAM=VALUE)."""
    from fbsim.lineup import DEFAULT_BY_AGENDA
    from fbsim.policies import registry

    rules = _rules(rules_file, set_)
    defaults = {v: k for k, v in DEFAULT_BY_AGENDA.items()}
    for name, spec in registry().items():
        tag = f"  (default for {defaults[name]})" if name in defaults else ""
        typer.echo(f"{name}: {spec.summary}{tag}")
        for p in spec.params:
            value = rules.bots.get(name, {}).get(p.name, p.default)
            typer.echo(f"    {p.name} = {value:g}  [{p.lo:g}..{p.hi:g}, default {p.default:g}]"
                       f"  {p.help}")


@app.command("replay", help="Play one game in the reference engine and narrate it step by "
             "step.\n\nGame G of seed S is the same game in every fbsim command, so any "
             "simulated game can be replayed here. --json prints the game record instead.")
def replay_cmd(
    players: Annotated[str | None, typer.Option(
        help="Table size 3-6 (default: the rules' players), or a range like 3..6 to narrate "
             "one game per size.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the run (any integer >= 0).",
                                      min=0)] = 0,
    game: Annotated[int, typer.Option(help="Index of the game within the run.", min=0)] = 0,
    lineup: Annotated[str | None, typer.Option(
        help="Bots by Agenda, e.g. steward=steward,accelerationist=hoarder, or one bot for "
             "all. Default: steward, opportunist, fog-grabber.")] = None,
    seat: Annotated[list[str] | None, typer.Option(
        help="Override one seat's bot: SEAT=BOT (e.g. 2=hoarder). Repeatable.",
        metavar="SEAT=BOT")] = None,
    script: Annotated[Path | None, typer.Option(
        help="Replay a scripted game (TOML) instead of bots.", dir_okay=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the game record as JSON "
                                                         "instead of narrating.")] = False,
    events: Annotated[bool, typer.Option(
        "--events", help="With --json: include the full event log.")] = False,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.lineup import parse_lineup
    from fbsim.reference.engine import play_game
    from fbsim.reference.narrate import narrate

    out = []
    if script is not None:
        from fbsim.reference.script import load_script, play_script, prepare

        base = _rules(rules_file, set_)
        doc = load_script(script)
        rules = prepare(doc, base)[0]
        rec = play_script(doc, base, events=True)
        out.append((rules, rec, doc.get("title")))
    else:
        for n in _players_range(players):
            rules = _rules(rules_file, set_, n)
            lu = parse_lineup(lineup, seat or [], rules.players)
            rec = play_game(rules, lu, seed, game, events=True)
            out.append((rules, rec, None))
    if as_json:
        from fbsim.rules import rules_hash

        docs = [{"rules_hash": rules_hash(r), **rec.as_dict(events=events)}
                for r, rec, _ in out]
        typer.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=1))
        return
    for i, (rules, rec, title) in enumerate(out):
        if i:
            typer.echo("\n" + "=" * 78 + "\n")
        typer.echo(narrate(rec, rules, title), nl=False)


@app.command("bench", help="Measure games per second: the kernel on 1 thread and on all "
             "threads, and the reference engine.\n\nThe figures are measured in one run, so "
             "read them as ratios; the machine's other load moves the absolute numbers.")
def bench_cmd(
    players: Annotated[str, typer.Option(help="Table sizes to measure, e.g. 3..6 or 4.")
                       ] = "3..6",
    games: Annotated[int, typer.Option(help="Kernel games per measurement.", min=1)
                     ] = 200_000,
    ref_games: Annotated[int, typer.Option(help="Reference-engine games per measurement.",
                                           min=1)] = 300,
    compile_times: Annotated[bool, typer.Option(
        "--compile/--no-compile", help="Also time a cold compile and a warm start.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")
                       ] = False,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.bench import format_bench, run_bench

    base = _rules(rules_file, set_)
    sizes = [n for n in _players_range(players) if n is not None]
    for n in sizes:
        if not 3 <= n <= 6:
            raise UsageError(f"--players: table sizes are 3 to 6, got {n}")
    echo = None if as_json else (lambda m: typer.echo(m, err=True))
    res = run_bench(sizes, games, ref_games, base, compile_times=compile_times, echo=echo)
    typer.echo(json.dumps(res, indent=1) if as_json else format_bench(res))


def version_callback(value: bool):
    if value:
        typer.echo(f"fbsim {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[bool | None, typer.Option(
        "--version", callback=version_callback, is_eager=True,
        help="Print the version and exit.")] = None,
):
    pass


def main(argv: list[str] | None = None) -> int:
    """Entry point: fbsim errors become one line on stderr and an exit code."""
    try:
        app(args=argv, standalone_mode=False)
    except FbsimError as e:
        print(f"fbsim: error: {e}", file=sys.stderr)
        return e.exit_code
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        print("fbsim: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("fbsim: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # click usage errors
        import click

        if isinstance(e, click.ClickException):
            e.show()
            return e.exit_code
        raise
    return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
