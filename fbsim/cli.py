"""The `fbsim` command line: a thin layer over functions a notebook can call."""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from fbsim.errors import FbsimError, Interrupted, UsageError, cut, did_you_mean
from fbsim.experiments.run.options import (
    check_writable,
    command_line,
    folder_ok,
    games_count,
    parent_exists,
    sizes_for,
    table_sizes,
)
from fbsim.limits import MAX_GAMES, MAX_SEED
from fbsim.version import __version__

app = typer.Typer(
    name="fbsim",
    help="Monte Carlo balance simulation for the board game Firebreak.\n\n"
         "Every command but plot, experiment and tune takes --rules FILE.toml (a partial file "
         "overrides the defaults) and --set path=value (e.g. --set masks=3 --set "
         "assets.refinery.price=5). "
         "`fbsim rules` prints every key.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: typer's rich help shows `<bool>` beside every flag (even --help)
    rich_markup_mode=None,
)

RulesOpt = Annotated[Path | None, typer.Option(
    "--rules", help="TOML file of rules overriding the defaults (partial files are fine).",
    dir_okay=False)]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Override one rule: path=value, e.g. masks=3. bots.BOT.PARAM=VALUE (e.g. "
                  "bots.fog-grabber.greed=0.5) sets a bot parameter at every seat playing "
                  "that bot. Repeatable.", metavar="PATH=VALUE")]


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


def given(ctx: typer.Context, name: str) -> bool:
    """Whether the option `name` was given on the command line (not left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def refuse_given(ctx: typer.Context, names: tuple[str, ...], why: str) -> None:
    """UsageError naming the first of the options `names` given on the command line, `why`
    saying what it needs ("only with --oracle search", say): a flag that would do nothing
    in this combination is refused, not silently dropped."""
    for name in names:
        if given(ctx, name):
            flag = next("/".join(p.opts + p.secondary_opts) for p in ctx.command.params
                        if p.name == name)
            raise UsageError(f"{flag}: {why}")


def _scheduler_address(value: str | None) -> str | None:
    """--scheduler: a malformed address refused as the flags are read, before the command
    writes anything (a lock, a folder)."""
    if value is None:
        return None
    from fbsim.experiments.run.cluster import check_scheduler

    return check_scheduler(value)


SchedulerOpt = Annotated[str | None, typer.Option(
    help="Run on an existing dask.distributed cluster, e.g. tcp://10.0.0.5:8786.",
    callback=_scheduler_address)]
WorkersOpt = Annotated[int | None, typer.Option(
    help="Start a local Dask cluster of this many worker processes.", min=1)]


def _rules(rules_file: Path | None, sets: list[str] | None, players: int | None = None,
           bots: dict | None = None):
    """The rules; `bots` receives the `bots.BOT.PARAM` values of --set (without it they
    are an error: they are not rules)."""
    from fbsim.rules import load_rules

    return load_rules(rules_file, list(sets or []), bots=bots, players=players)


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
    """List the bots and their parameters.

    A lineup gives a bot's parameters: --seat 1=tunable:aim=520,greed=0.3,
    --lineup accelerationist=tunable:aim=560;greed=0.5, a lineup file, or
    --set bots.NAME.PARAM=VALUE for every seat playing NAME (shown here)."""
    from fbsim.lineup import DEFAULT_BY_AGENDA
    from fbsim.policies import registry

    bots: dict = {}
    _rules(rules_file, set_, bots=bots)
    defaults = {v: k for k, v in DEFAULT_BY_AGENDA.items()}
    for name, spec in registry().items():
        tag = f"  (default for {defaults[name]})" if name in defaults else ""
        typer.echo(f"{name}: {spec.summary}{tag}")
        for p in spec.params:
            if spec.listed is not None and p.name not in spec.listed:
                continue
            value = bots.get(name, {}).get(p.name, p.default)
            typer.echo(f"    {p.name} = {value:g}  [{p.lo:g}..{p.hi:g}, default {p.default:g}]"
                       f"  {p.help}")
        if spec.note:
            typer.echo(f"    {spec.note}")


@app.command("replay", help="Play one game in the reference engine and narrate it step by "
             "step.\n\nGame G of seed S is the same game in every fbsim command, so any "
             "simulated game can be replayed here. --json prints the game record instead.")
def replay_cmd(
    ctx: typer.Context,
    players: Annotated[str | None, typer.Option(
        help="Table size 3-6 (default: the rules' players), or a range like 3..6 to narrate "
             "one game per size.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the run.",
                                      min=0, max=MAX_SEED)] = 0,
    game: Annotated[int, typer.Option(help="Index of the game within the run.", min=0,
                                      max=MAX_GAMES)] = 0,
    lineup: Annotated[str | None, typer.Option(
        help="Bots by Agenda, e.g. steward=steward,accelerationist=tunable:aim=560;greed=0.5 "
             "(a bot's parameters after ':', separated by ';'), one bot for all, or a "
             "lineup file FILE.toml. Default: steward, opportunist, fog-grabber.")] = None,
    seat: Annotated[list[str] | None, typer.Option(
        help="Override one seat's bot: SEAT=BOT[:PARAM=VALUE,...] (e.g. 2=hoarder or "
             "1=tunable:aim=520,greed=0.3). Repeatable.", metavar="SEAT=BOT")] = None,
    script: Annotated[Path | None, typer.Option(
        help="Replay a scripted game (TOML) instead of bots.", dir_okay=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the game record as JSON "
                                                         "instead of narrating.")] = False,
    events: Annotated[bool, typer.Option(
        "--events", help="With --json: include the full event log.")] = False,
    searcher: Annotated[int | None, typer.Option(
        help="This seat searches its commitments (fbsim exploit --oracle search) against "
             "the lineup as its field: the narration shows, at each commitment, every "
             "candidate's rollout wins and what it chose.", min=0, max=5)] = None,
    rollouts: Annotated[int | None, typer.Option(
        help="With --searcher: rollouts per candidate (default 64).", min=1, max=100_000,
        show_default=False)] = None,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.lineup import parse_lineup
    from fbsim.reference.engine import play_game
    from fbsim.reference.narrate import narrate

    if events and not as_json:
        raise UsageError("--events: only with --json (the narration tells every event)")
    if script is not None:  # (its table size, seats and every decision are the script's)
        refuse_given(ctx, ("players", "seed", "game", "lineup", "seat"),
                     "not with --script: the scripted game sets its own table size, decisions "
                     "and draws")
    if rollouts is not None and searcher is None:
        raise UsageError("--rollouts: only with --searcher")
    out = []
    if searcher is not None:
        from fbsim.experiments.search.searcher import (
            ROLLOUTS,
            Knobs,
            narrate_searched,
            replay_searched,
        )

        if script is not None or seat or (players is not None and len(table_sizes(players))
                                          != 1):
            raise UsageError("--searcher: one table size, a lineup, no --script or --seat")
        rules = _rules(rules_file, set_, None if players is None else
                       sizes_for(players, players, rules_file, set_)[0], {})
        if searcher >= rules.players:
            raise UsageError(f"--searcher: a seat 0 to {rules.players - 1}, got {searcher}")
        lu = parse_lineup(lineup, [], rules.players)
        knobs = Knobs(rollouts=ROLLOUTS if rollouts is None else rollouts)
        rep = replay_searched(rules, lu, knobs, seed, game, searcher)
        if as_json:
            from dataclasses import asdict

            from fbsim.rules import rules_hash

            # (the record's bots are the lineup's: the searching seat's commitments were its
            # own, so the record says which seat searched and how)
            typer.echo(json.dumps({"rules_hash": rules_hash(rules),
                                   "searcher": {"seat": searcher, **asdict(knobs)},
                                   **rep.record.as_dict(events=events)}, indent=1))
        else:
            typer.echo(narrate_searched(rep, rules), nl=False)
        return
    if script is not None:
        from fbsim.reference.script import load_script, play_script, prepare

        base = _rules(rules_file, set_)
        doc = load_script(script)
        rules = prepare(doc, base)[0]
        rec = play_script(doc, base, events=True)
        out.append((rules, rec, doc.get("title")))
    else:
        # (a --players that disagrees with the rules' own size is refused, naming both)
        for n in [None] if players is None else sizes_for(players, players, rules_file, set_):
            bots: dict = {}
            rules = _rules(rules_file, set_, n, bots)
            lu = parse_lineup(lineup, seat or [], rules.players).with_bot_params(bots,
                                                                                 strict=True)
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


@app.command("bench", help="Measure games per second of every path at each table size, in "
             "one run: the runner (the path every command plays through: the lineup's fast "
             "kernel build, records reduced to every metric), the kernel alone, the checked "
             "build, the engine-only floor (the same games replayed from recorded answers), "
             "the reference engine and, when the open-spiel package is installed (the project's "
             "'bench' extra), OpenSpiel's C++ goofspiel with 4 players and random bots.\n\n"
             "Each path plays its games in 10 slices, the slices of every path in turn, "
             "--repeats times over, and keeps its fastest slice, on one thread (the runner "
             "also on --threads, with as many games per thread as on one); read the figures "
             "as ratios: the machine's other load moves "
             "the absolute numbers. Also times a cold compile and a warm start.")
def bench_cmd(
    ctx: typer.Context,
    players: Annotated[str, typer.Option(help="Table sizes to measure, e.g. 3..6 or 4.")
                       ] = "3..6",
    games: Annotated[str, typer.Option(help="Games of each of the runner, kernel, checked "
                                            "and floor paths (in 10 slices).")] = "200000",
    ref_games: Annotated[int, typer.Option(help="Games of the reference engine's path.",
                                           min=1)] = 300,
    openspiel_games: Annotated[int, typer.Option(
        help="Games of OpenSpiel's path.", min=1)] = 20_000,
    lineup: Annotated[str | None, typer.Option(
        help="Bots by Agenda (as in fbsim simulate), or a lineup file FILE.toml. Default: "
             "steward, opportunist, fog-grabber.")] = None,
    seat: Annotated[list[str] | None, typer.Option(
        help="Override one seat's bot: SEAT=BOT[:PARAM=VALUE,...]. Repeatable.",
        metavar="SEAT=BOT")] = None,
    threads: Annotated[int | None, typer.Option(
        help="Threads of the runner's second measurement (default: all).", min=1)] = None,
    repeats: Annotated[int, typer.Option(
        help="Rounds of measurement; each path keeps its fastest slice.", min=1)] = 3,
    compile_times: Annotated[bool, typer.Option(
        "--compile/--no-compile", help="Also time a cold compile and a warm start.")] = True,
    rss_games: Annotated[str | None, typer.Option(
        help="Also measure the peak memory of a process aggregating this many games "
             "(4 players), e.g. 1e8.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")
                       ] = False,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print the figures as a Markdown page (as results/bench.md).")
                        ] = False,
    workers: Annotated[int | None, typer.Option(
        help="Instead: a one-point sweep through a local Dask cluster of this many worker "
             "processes, next to the same sweep in-process.", min=1)] = None,
    scheduler: Annotated[str | None, typer.Option(
        help="Instead: the same through an existing cluster (tcp://HOST:PORT).",
        callback=_scheduler_address)] = None,
    decisions: Annotated[bool, typer.Option(
        "--decisions", help="Instead: what each decision of the lineup's bots costs per "
                            "game and per question, asked on the side of the floor's "
                            "replay of the same games (the first table size given).")
                         ] = False,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    if as_json and markdown:
        raise UsageError("--json and --markdown: give one (both print the figures)")
    # (each measurement's own options: one given to another would be silently dropped)
    if given(ctx, "decisions"):
        refuse_given(ctx, ("workers", "scheduler"), "not with --decisions (each is a "
                     "measurement of its own: give one)")
        refuse_given(ctx, ("ref_games", "openspiel_games", "threads", "compile_times",
                           "rss_games", "markdown"), "not with --decisions (it measures each "
                     "decision's cost, and nothing else)")
    if given(ctx, "workers") and given(ctx, "scheduler"):
        raise UsageError("--workers and --scheduler: give one (local workers, or a cluster's "
                         "scheduler)")
    if given(ctx, "workers") or given(ctx, "scheduler"):
        refuse_given(ctx, ("ref_games", "openspiel_games", "lineup", "seat", "threads",
                           "repeats", "compile_times", "rss_games", "markdown"),
                     "not with --workers or --scheduler (they measure a one-point sweep on a "
                     "cluster, and nothing else)")
    import numba

    from fbsim.bench import (
        decision_costs,
        format_bench,
        format_decisions,
        format_markdown,
        format_sweep_rates,
        run_bench,
        sweep_rates,
    )
    from fbsim.lineup import parse_lineup

    base = _rules(rules_file, set_)
    # (--set players=N without --players measures N; with a --players that disagrees, refused)
    sizes = sizes_for(players if given(ctx, "players") else None, players, rules_file, set_)
    n_games = games_count(games)
    if threads is not None and threads > numba.config.NUMBA_NUM_THREADS:
        raise UsageError(f"--threads: at most {numba.config.NUMBA_NUM_THREADS} on this "
                         f"machine, got {threads}")
    lu = parse_lineup(lineup, seat or [], min(sizes) if sizes else None)
    echo = None if as_json or markdown else (lambda m: typer.echo(m, err=True))
    if decisions:
        from fbsim.rules import load_rules

        if markdown:
            raise UsageError("--decisions: prints a table, or JSON with --json; not --markdown")

        if echo:
            echo(f"{sizes[0]} players: recording and replaying the games of every decision ...")
        res = decision_costs(load_rules(base=base, players=sizes[0]), lu, n_games, repeats)
        typer.echo(json.dumps(res, indent=1) if as_json else format_decisions(res))
        return
    if workers or scheduler:
        res = sweep_rates(sizes, n_games, workers or 0, scheduler,
                          None if rules_file is None else str(rules_file), set_ or [], echo)
        typer.echo(json.dumps(res, indent=1) if as_json else format_sweep_rates(res))
        return
    res = run_bench(sizes, n_games, ref_games, base, lu, threads=threads, repeats=repeats,
                    compile_times=compile_times, openspiel_games=openspiel_games,
                    rss_games=None if rss_games is None else games_count(rss_games, "--rss-games"),
                    echo=echo)
    if as_json:
        typer.echo(json.dumps(res, indent=1))
    elif markdown:
        typer.echo(format_markdown(res, command_line(ctx)), nl=False)
    else:
        typer.echo(format_bench(res))


def _progress(quiet: bool):
    if quiet:
        return None
    from fbsim.experiments.run.progress import RichProgress

    return RichProgress()


@app.command("simulate", help="Play many games of one table and print win rates with 95% "
             "Wilson intervals, collapse and everyone-loses rates, band shares, the final "
             "Dial, seat advantage, Legacy and Fog use.\n\n"
             "--out writes every number as one tidy Parquet table; --records writes one row "
             "per game. Game G of seed S can be narrated with `fbsim replay --seed S --game G`.")
def simulate_cmd(
    players: Annotated[int | None, typer.Option(
        help="Table size, 3 to 6 (default: the rules' players, 4 unless a rules file or "
             "--set names it).", min=3, max=6, show_default=False)] = None,
    games: Annotated[str, typer.Option(help="Number of games (1000000, 1e6 or 1_000_000).")
                     ] = "100000",
    lineup: Annotated[str | None, typer.Option(
        help="Bots by Agenda, e.g. accelerationist=hoarder or "
             "accelerationist=tunable:aim=560;greed=0.5 (a bot's parameters after ':', "
             "separated by ';'), one bot for all, or a lineup file FILE.toml.")] = None,
    seat: Annotated[list[str] | None, typer.Option(
        help="Override one seat's bot: SEAT=BOT[:PARAM=VALUE,...], e.g. "
             "1=tunable:aim=520,greed=0.3. Repeatable.", metavar="SEAT=BOT")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the run.", min=0, max=MAX_SEED)] = 0,
    out: Annotated[Path | None, typer.Option(
        help="Write every reported number as a tidy Parquet table.", dir_okay=False)] = None,
    records: Annotated[Path | None, typer.Option(
        help="Write one row per game (Parquet).", dir_okay=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tables as JSON instead.")
                       ] = False,
    checked: Annotated[bool, typer.Option(
        "--checked", help="Play the kernel's checked build: every bot decision checked "
                          "against the rules (the same games, a little slower; for trying "
                          "a new bot).")] = False,
    quiet: QuietOpt = False,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from contextlib import ExitStack

    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_file
    from fbsim.experiments.run.simulate import format_report, simulate, write_metrics

    n = games_count(games)
    parent_exists((out, "--out"), (records, "--records"))
    for path, flag, kind in ((out, "--out", "simulation"), (records, "--records", "game records")):
        if path is not None:
            check_output_file(path, flag, (kind,))
    if out is not None and records is not None and out.resolve() == records.resolve():
        raise UsageError(f"--records {records}: the same file as --out; give two paths")
    with ExitStack() as held:
        def lock() -> None:  # one writer per output file, once the inputs are checked
            for path in (out, records):
                if path is not None:
                    held.enter_context(output_lock(path.parent, f".{path.name}.lock"))

        res = simulate(players=players, games=n, rules=rules_file, sets=set_ or [],
                       lineup=lineup, seats=seat or [], seed=seed,
                       progress=_progress(quiet or as_json), records=records,
                       checked=True if checked else None, before_writing=lock)
        if out is not None:
            write_metrics(res, out)
    if as_json:
        doc = {"provenance": {k: v for k, v in res.provenance.items() if k != "rules_toml"},
               **{t: json.loads(getattr(res, t).to_json(orient="records"))
                  for t in ("win_rates", "outcomes", "seats")}}
        typer.echo(json.dumps(doc, indent=1))
    else:
        typer.echo(format_report(res), nl=False)


@app.command("sweep", help="Play a grid of rule or bot parameter values and write tidy "
             "Parquet tables (win_rates, outcomes, seats) with 95% intervals and paired "
             "differences against a baseline point.\n\n"
             "Give the grid as flags (--vary baseline_offset=-2..2 --vary masks=0,1,2,3 "
             "--players 3..6; ranges LO..HI or LO..HI:STEP) or as a spec file "
             "(docs/designers-guide.md, \"Sweep a rule\"). Every point plays the same games "
             "(common random numbers), so "
             "differences between points have tight intervals. Each finished point is "
             "saved at once: rerun the same command after an interruption to resume. With "
             "no spec and no --vary: baseline_offset -2..2 at 3 to 6 players.")
def sweep_cmd(
    ctx: typer.Context,
    spec_file: Annotated[Path | None, typer.Argument(
        help="Sweep spec (TOML); flags given as well override it.", dir_okay=False,
        show_default=False)] = None,
    vary: Annotated[list[str] | None, typer.Option(
        help="A swept parameter: KEY=VALUES, e.g. masks=0,1,2 or baseline_offset=-2..2 or "
             "bots.fog-grabber.greed=0..1:0.25. Repeatable (a grid).",
        metavar="KEY=VALUES")] = None,
    players: Annotated[str | None, typer.Option(help="Table sizes: 4, 3..6 or 3,5.")] = None,
    games: Annotated[str | None, typer.Option(help="Games per point (default 100000).")
                     ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed (default 0).", min=0,
                                             max=MAX_SEED)] = None,
    lineup: Annotated[str | None, typer.Option(help="Bots by Agenda, as in simulate.")] = None,
    seat: Annotated[list[str] | None, typer.Option(
        help="Seat override SEAT=BOT for every point. Repeatable.", metavar="SEAT=BOT")] = None,
    baseline: Annotated[list[str] | None, typer.Option(
        help="The baseline point for paired differences, KEY=VALUE per varied key "
             "(default: each key's default value if swept, else its first value).",
        metavar="KEY=VALUE")] = None,
    ci_width: Annotated[float | None, typer.Option(
        help="Instead of a fixed count, play each point in batches until every Agenda's "
             "95% half-width is at most this (e.g. 0.005).", min=0.0001, max=0.49)] = None,
    min_games: Annotated[str | None, typer.Option(
        help="With --ci-width: games before the first check (default 20000).")] = None,
    max_games: Annotated[str | None, typer.Option(
        help="With --ci-width: the most games per point (default 100000000).")] = None,
    out: Annotated[Path, typer.Option(help="Dataset folder to write (or resume).",
                                      file_okay=False)] = Path("out/sweep"),
    force: Annotated[bool, typer.Option(
        "--force", help="Start afresh even if OUT holds another sweep.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout.")
                       ] = False,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    task_games: Annotated[str | None, typer.Option(
        help="On a cluster: games per task (default: a few tasks per worker and point). "
             "The tables do not depend on it.")] = None,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.experiments.run.provenance import check_places
    from fbsim.experiments.run.spec import sweep_from_command_line
    from fbsim.experiments.run.sweep import TABLES, run_sweep

    folder_ok(out, "--out")
    check_places(files=[out / "sweep.json", *(out / f"{t}.parquet" for t in TABLES)])
    spec = sweep_from_command_line(
        spec_file, vary=vary or [], players=players, games=games, seed=seed, lineup=lineup,
        seats=seat or [], rules=rules_file, sets=set_ or [], baseline=baseline or [],
        ci_width=ci_width, min_games=min_games, max_games=max_games)
    for flag, value in (("--min-games", min_games), ("--max-games", max_games)):
        if value is not None and spec.ci_width is None:
            raise UsageError(f"{flag}: only with --ci-width (in the spec or as a flag; "
                             "else every point plays --games)")
    if spec.ci_width is not None:
        refuse_given(ctx, ("games",), "not with --ci-width (each point plays until its "
                     "intervals are that narrow: --min-games and --max-games bound it)")
    if scheduler is None and workers is None:
        refuse_given(ctx, ("task_games",), "only on a cluster (--workers or --scheduler)")
    echo = None if as_json and quiet else (lambda m: typer.echo(m, err=True))
    from fbsim.experiments.run.cluster import open_client

    with open_client(scheduler, workers) as (client, threads):
        res = run_sweep(spec, out, progress=_progress(quiet), force=force, echo=echo,
                        client=client, threads=threads,
                        task_games=None if task_games is None else games_count(task_games,
                                                                          "--task-games"))
    if as_json:
        typer.echo(json.dumps(res.summary(), indent=1))
    else:
        from fbsim.experiments.report.text import format_sweep

        typer.echo(format_sweep(res), nl=False)


@app.command("plot", help="Draw PNG figures from a sweep dataset: win rate per Agenda "
             "against the varied parameter with 95% bands (a panel per table size), the "
             "collapse rate, and a heatmap for two-parameter sweeps.")
def plot_cmd(
    results: Annotated[Path, typer.Argument(help="A sweep dataset folder (fbsim sweep --out).",
                                            file_okay=False, show_default=False)],
    out: Annotated[Path | None, typer.Option(
        help="Folder for the PNG files (default: RESULTS/plots).", file_okay=False)] = None,
    x: Annotated[str | None, typer.Option(
        help="The parameter on the x axis (default: the first varied one).")] = None,
):
    from fbsim.experiments.report.plots import plot_dataset

    if out is not None:
        folder_ok(out, "--out")
    for path in plot_dataset(results, out, x=x):
        typer.echo(str(path))


@app.command("report", help="A one-page HTML balance report of a rules file, with its "
             "figures embedded (opens in any browser, no server): the verdict in words and "
             "numbers, then per table size the win rate per Agenda against its fair share, "
             "collapse and everyone-loses rates, final bands, the final Dial, the Dial round "
             "by round (a fan chart), seat advantage, the Fog pot, Accusation accuracy and, "
             "when `fbsim exploit` results exist for the same rules, exploitability.\n\n"
             "--against OLD.toml (or --against-set) turns it into a diff: both rules play "
             "the same games, every metric shows old -> new with its paired difference and "
             "95% interval (a rate's from the games whose outcome changed: Tango's score "
             "interval and McNemar's exact test), and differences that are not significant "
             "after Holm's correction over the page read 'no difference detected'.\n\n"
             "Every number is also written as a tidy Parquet table beside the page "
             "(report.html -> report.parquet). An interrupted run started again with the "
             "same inputs skips the table sizes it had finished.")
def report_cmd(
    ctx: typer.Context,
    rules_file: RulesOpt = None,
    against: Annotated[Path | None, typer.Option(
        help="The old rules file to compare against (paired, same games); `default` for "
             "the default rules.",
        dir_okay=False)] = None,
    set_: SetOpt = None,
    against_set: Annotated[list[str] | None, typer.Option(
        "--against-set", help="Override one rule of the old rules only (compares against "
        "the rules with this change), e.g. masks=1. Repeatable.", metavar="PATH=VALUE")
        ] = None,
    players: Annotated[str | None, typer.Option(
        help="Table sizes: 3..6, 4 or 3,5 (default: the size the rules file or --set names, "
             "else 3..6).")] = None,
    games: Annotated[str, typer.Option(help="Games per table size (and per rules file).")
                     ] = "200000",
    seed: Annotated[int, typer.Option(help="Seed: game G of every table size and rules "
                                           "file uses the same draws.", min=0,
                                      max=MAX_SEED)] = 0,
    lineup: Annotated[str | None, typer.Option(
        help="Bots by Agenda, as in simulate (default: the default lineup).")] = None,
    out: Annotated[Path, typer.Option(help="The HTML page to write.", dir_okay=False)
                   ] = Path("report.html"),
    against_lineup: Annotated[str | None, typer.Option(
        "--against-lineup", help="The old rules' field (default: --lineup), e.g. the "
        "equilibrium solved under them: each rules file is then played by its own field, on "
        "the same games.")] = None,
    exploit: Annotated[Path | None, typer.Option(
        help="Folder of `fbsim exploit` results; those played under the same rules are "
             "shown; `none` for no such section.", file_okay=False)] = Path("results/exploit"),
    rulebook: Annotated[Path | None, typer.Option(
        help="Folder of a `fbsim tune --equilibrium` search: its \"rules under strong "
             "play\" section is shown when the page's rules are the ones it recommends or "
             "searched from; `none` for no such section.", file_okay=False)
                        ] = Path("results/tune-equilibrium"),
    ladder: Annotated[Path | None, typer.Option(
        help="Folder of a `fbsim ladder`: its table sizes played under the page's rules "
             "are shown as \"how much skill pays\"; `none` for no such section.",
        file_okay=False)
                      ] = Path("results/ladder"),
    map_: Annotated[Path | None, typer.Option(
        "--map", help="Folder of a `fbsim equilibrium --map`: every equilibrium it found at "
        "the table sizes played under the page's rules is shown, with the verdict over the "
        "map; `none` for no such section.", file_okay=False)
                    ] = Path("results/equilibrium-map"),
    screenshot: Annotated[Path | None, typer.Option(
        help="Also save a full-page PNG of the report, rendered in headless Chromium "
             "(needs Debian's chromium and chromium-driver and the package selenium).",
        dir_okay=False)] = None,
    quiet: QuietOpt = False,
):
    from fbsim.experiments.report.model import (
        check_inputs,
        check_kept_parts,
        clear_resume,
        format_verdict,
        read_exploit_folder,
        read_ladder_folder,
        read_map_folder,
        read_rulebook_folder,
        report,
    )
    from fbsim.experiments.report.page import check_output_page, write_report
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_file

    n = games_count(games)
    sizes = sizes_for(players, "3..6", rules_file, set_)
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {out}: expected an .html file")
    parent_exists((out, "--out"), (screenshot, "--screenshot"))
    check_output_file(out.with_suffix(".parquet"), "--out", ("balance report",))
    check_output_page(out)  # (a user's own page there is not overwritten)
    if screenshot is not None and screenshot.suffix.lower() != ".png":
        raise UsageError(f"--screenshot {screenshot}: expected a .png file")
    if screenshot is not None:  # (written last: its place and the browser checked first)
        check_writable(screenshot, "--screenshot")
        from fbsim.experiments.report.browser import check_browser

        try:
            check_browser()
        except UsageError as e:
            raise UsageError(f"--screenshot: {e}") from None
    # finished table sizes are kept beside the page until it is written: an interrupted
    # run, started again with the same inputs, skips them
    check_inputs(rules_file, against, n, sizes, set_ or [], against_set or [], lineup,
                 against_lineup)
    # `none`: no such section
    exploit, rulebook, ladder, map_ = (None if x is not None and str(x) == "none" else x
                                       for x in (exploit, rulebook, ladder, map_))
    for name, folder, wants, command in (
            ("rulebook", rulebook, "summary.json", "tune --equilibrium"),
            ("map_", map_, "summary.json", "equilibrium --map"),
            ("ladder", ladder, "ladder.json", "ladder"),
            ("exploit", exploit, "AGENDA-pN/result.json", "exploit")):
        # (a folder named on the command line with nothing of its kind in it would be
        # skipped as the default folder is where a checkout has none)
        there = folder is not None and (any(folder.glob("*-p[3-6]/result.json"))
                                        if name == "exploit" else (folder / wants).is_file())
        if folder is not None and given(ctx, name) and not there:
            raise UsageError(f"--{name.rstrip('_')} {folder}: no {wants} there (not a folder of "
                             f"`fbsim {command}`; `none` for no such section)")
    read_ladder_folder(ladder)  # (a damaged ladder refused before the lock is taken)
    read_rulebook_folder(rulebook)  # (and a summary of another kind)
    read_map_folder(map_)  # (and a damaged map)
    read_exploit_folder(exploit)  # (and a damaged exploit result)
    keep = out.parent / f".{out.stem}.parts"
    check_kept_parts(keep, [])  # (the folder of kept table sizes: before the lock)
    # one report into this page at a time (its lock file is beside the page)
    with output_lock(out.parent, f".{out.stem}.lock"):
        rep = report(rules_file, against, n, sizes, seed, set_ or [], against_set or [],
                     lineup, exploit, progress=_progress(quiet), resume=keep,
                     echo=lambda m: typer.echo(m, err=True), against_lineup=against_lineup,
                     rulebook_dir=rulebook, ladder_dir=ladder, map_dir=map_)
        written = write_report(rep, out)
        clear_resume(keep)
    typer.echo(format_verdict(rep), nl=False)
    if screenshot is not None:
        from fbsim.experiments.report.browser import render

        shot = render(out, screenshot)
        if shot["errors"] or not shot["figures_loaded"]:
            raise FbsimError(f"--screenshot: the page did not render cleanly in Chromium "
                             f"({len(shot['errors'])} errors)")
        written.append(screenshot)
    typer.echo("wrote " + ", ".join(str(p) for p in written))


@app.command("experiment", help="Run a named experiment into results/NAME/ (Parquet tables, "
             "PNG figures and a summary.md).\n\n`fbsim experiment --list` lists them; "
             "`fbsim experiment --all` regenerates every one.")
def experiment_cmd(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Experiment names.",
                                                      show_default=False)] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Run every experiment.")] = False,
    games: Annotated[str | None, typer.Option(
        help="Games per point (default: each experiment's, 1000000).")] = None,
    results: Annotated[Path, typer.Option(help="Folder of the results.", file_okay=False)
                       ] = Path("results"),
    field: Annotated[str | None, typer.Option(
        help="Play the experiment against this field instead of the default bots: a lineup "
             "or field file ({players} in a path stands for the table size, e.g. "
             "results/equilibrium/p{players}.toml). Give another --results folder.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute finished points.")
                     ] = False,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
):
    from fbsim.experiments.catalog import registry as xreg
    from fbsim.experiments.run.cluster import open_client

    exps = xreg.experiments()
    if names and (list_ or all_):
        raise UsageError(f"{'--list' if list_ else '--all'}: give it or experiment names, not "
                         "both")
    if list_:  # (it runs nothing: an option of a run would be silently dropped)
        refuse_given(ctx, ("all_", "games", "results", "field", "force", "scheduler",
                           "workers"), "not with --list (it lists, and runs nothing)")
        for name, exp in exps.items():
            typer.echo(f"{name:18} {exp.SUMMARY}")
        return
    chosen = list(exps) if all_ else list(names or [])
    if not chosen:
        raise UsageError("name an experiment, or give --list or --all")
    for name in chosen:
        if name not in exps:
            raise UsageError(f"unknown experiment '{cut(name)}'{did_you_mean(name, exps)} "
                             "(fbsim experiment --list)")
    n = games_count(games) if games is not None else None
    if field is not None and results == Path("results"):
        raise UsageError("--field: give another --results folder (results/ holds the "
                         "experiments of the default bots)")
    if field is not None:  # (every table size of every experiment, before any game)
        from fbsim.lineup import parse_lineup

        for size in sorted({p for x in chosen for p in exps[x].spec(n or 1000).players}):
            parse_lineup(field, players=size, flag="--field")
    from fbsim.experiments.run.provenance import check_output_folder, check_places
    from fbsim.experiments.run.sweep import TABLES

    folder_ok(results, "--results")
    check_output_folder(results, "--results", ())  # (a folder of datasets, not one itself)
    for name in chosen:  # (every experiment's outputs' places, before the first is played)
        d = results / name
        check_output_folder(d, "--results", ("sweep",))  # (each experiment is a sweep)
        check_places(files=[d / f for f in ("summary.md", "sweep.json", "win_rates.png",
                                            "collapse.png", *(f"{t}.parquet" for t in TABLES))],
                     folders=[d, d / "points"])
    with open_client(scheduler, workers) as (client, threads):
        for name in chosen:
            typer.echo(f"== {name}", err=True)
            path = xreg.run(name, results, games=n, progress=_progress(quiet), force=force,
                            echo=lambda m: typer.echo(m, err=True), client=client,
                            threads=threads, field=field)
            typer.echo(str(path))


@app.command("exploit", help="Search the best response of one Agenda against a fixed "
             "field, then confirm it against the field on a fresh seed (paired, the same "
             "games). A gain found is a lower bound of what exists.\n\n"
             "--deviate seat (the default): one seat alone plays a planner whenever it is "
             "dealt the Agenda, every other seat the field, the seat rotated over the table; "
             "the planner is searched in its whole space from several starts. The measure of "
             "strong play in a game won by one player.\n\n"
             "--deviate team: every seat of the Agenda plays the `tunable` bot together "
             "and the Agenda's win counts.\n\n"
             "--all runs every Agenda x table size and writes OUT/exploitability.parquet and "
             ".png.\n\n"
             "--oracle search: an out-of-family oracle. One seat plays the field, except at "
             "each commitment, where it scores candidate commitments (the field's choice and "
             "open splits of COOL and BURN) by rollouts from worlds it samples from its own "
             "view (rivals' Agendas by the public record's likelihood, their Capital from the "
             "public ledger) and departs when the rollouts say so clearly. Its gain per "
             "Agenda at --rollouts and 4x --rollouts, paired on the field's own games, goes "
             "to OUT/search/summary.json and summary.md.")
def exploit_cmd(
    ctx: typer.Context,
    agenda: Annotated[str | None, typer.Option(
        help="steward, opportunist or accelerationist.")] = None,
    players: Annotated[str | None, typer.Option(
        help="Table size (with --all: sizes, e.g. 3..6; default: the size the rules file or "
             "--set names, else 4)")] = None,
    field: Annotated[str | None, typer.Option(
        help="The field's bots by Agenda (as --lineup, or a lineup or field file; "
             "{players} in a path stands for the table size, e.g. "
             "results/equilibrium/p{players}.toml; default: the default lineup).")
                     ] = None,
    budget: Annotated[str, typer.Option(help="Games the search may play.")] = "2560000",
    generations: Annotated[int, typer.Option(help="Generations of the search.", min=1)] = 8,
    population: Annotated[int, typer.Option(help="Candidates per generation.", min=2)] = 16,
    confirm_games: Annotated[str, typer.Option(
        help="Games of the confirmation on a fresh seed.")] = "200000",
    seed: Annotated[int, typer.Option(help="Seed of the search.", min=0, max=MAX_SEED)] = 0,
    all_: Annotated[bool, typer.Option("--all", help="Every Agenda x table size.")] = False,
    deviate: Annotated[str, typer.Option(
        help="Who deviates: 'seat' (one player alone) or 'team' (every seat of the Agenda)."
    )] = "seat",
    out: Annotated[Path, typer.Option(help="Folder for the searches and tables.",
                                      file_okay=False)] = Path("out/exploit"),
    force: Annotated[bool, typer.Option("--force", help="Recompute finished generations.")
                     ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result(s) as JSON.")
                       ] = False,
    oracle: Annotated[str, typer.Option(
        help="'planner' (the planner family's search) or 'search' (the searching seat: "
             "out of the family).")] = "planner",
    rollouts: Annotated[int | None, typer.Option(
        help="search: rollouts per candidate at each commitment (the audit also runs 4x; "
             "default 64).", min=1, max=100_000, show_default=False)] = None,
    seat_games: Annotated[str, typer.Option(
        help="search: seat-games per Agenda in which the searching seat holds it.")
                          ] = "3000",
    margin: Annotated[float, typer.Option(
        help="search: the paired z the best candidate needs over the field's choice.",
        min=0.0, max=1000.0)] = 2.0,
    step: Annotated[int, typer.Option(
        help="search: the grid of open COOL and BURN Agents (0, step, 2 step, ...).",
        min=1, max=6)] = 2,
    masked: Annotated[bool, typer.Option(
        "--masked", help="search: every split with BURN also with its BURNs masked.")
                      ] = False,
    beliefs: Annotated[bool, typer.Option(
        "--beliefs/--no-beliefs", help="search: weigh rivals' Agendas by how likely their "
        "public play was under the field (else by the cards alone).")] = True,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    if oracle not in ("planner", "search"):
        raise UsageError(f"--oracle: 'planner' or 'search', got '{cut(oracle)}'")
    if oracle == "planner":  # (the searcher's knobs, given without it)
        refuse_given(ctx, ("rollouts", "seat_games", "margin", "step", "masked", "beliefs"),
                     "only with --oracle search")
    else:  # (and the planner family's search's, given to the searcher)
        refuse_given(ctx, ("budget", "generations", "population", "confirm_games", "force"),
                     "only with --oracle planner (the searcher takes --seat-games and "
                     "--rollouts, and plays every table size it is given afresh)")
    if all_:
        refuse_given(ctx, ("agenda",), "not with --all (every Agenda x table size)")
    if oracle == "search":
        if deviate != "seat":
            raise UsageError("--deviate: the searcher deviates alone ('seat')")
        if scheduler is not None:
            raise UsageError("--scheduler: the searcher's audit runs on this machine's cores")
        from fbsim.experiments.search.searcher import ROLLOUTS, Knobs

        _exploit_search(agenda, players, field, seed, out, as_json, quiet, rules_file, set_,
                        Knobs(ROLLOUTS if rollouts is None else rollouts, step, masked, margin,
                              beliefs),
                        games_count(seat_games, "--seat-games"), workers)
        return
    from fbsim.experiments.run.cluster import open_client
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import (
        check_output_folder,
        check_places,
        check_replaceable,
        now_iso,
    )
    from fbsim.experiments.search.equilibrium.fields import check_dealt
    from fbsim.experiments.search.exploit import (
        EXPLOIT_ALL_FILES,
        EXPLOIT_FILES,
        EXPLOIT_FOLDERS,
        MODES,
        exploit,
        fair_share,
        format_result,
        per_candidate,
        run_all,
        write_result,
    )
    from fbsim.game import layout as L
    from fbsim.lineup import parse_lineup
    from fbsim.rules import parse_set, rules_to_toml

    sizes = sizes_for(players, "4", rules_file, set_)
    if deviate not in MODES:
        raise UsageError(f"--deviate: one of {', '.join(MODES)}, got '{cut(deviate)}'")
    if field is not None:  # ("{players}" in a field file's path: each table size's file)
        for n in sizes:
            parse_lineup(field, players=n, flag="--field")
    if not all_:
        if agenda is None:
            raise UsageError("--agenda: name an Agenda (or give --all)")
        if agenda not in L.AGENDA_NAMES:
            raise UsageError(f"--agenda: one of {', '.join(L.AGENDA_NAMES)}, got '{cut(agenda)}'")
        if len(sizes) != 1:
            raise UsageError("--players: one table size (or give --all)")
    sets = dict(parse_set(x) for x in set_ or [])
    for n in sizes:  # the rules and the budget must be valid before any game runs
        check_dealt(_rules(rules_file, set_, n, bots={}), agendas=(
            L.AGENDA_NAMES if all_ else (agenda,)), why="its gain is what is asked")
        per_candidate(games_count(budget, "--budget"), generations, population, n, deviate)
    kw = {"field": field, "budget": games_count(budget, "--budget"), "generations": generations,
          "population": population, "confirm_games": games_count(confirm_games, "--confirm-games"),
          "seed": seed, "rules": None if rules_file is None else str(rules_file), "sets": sets,
          "force": force, "progress": _progress(quiet or as_json), "deviate": deviate}
    echo = None if as_json else (lambda m: typer.echo(m, err=True))
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("exploit",))
    searched = [out / f"{a}-p{n}" for n in sizes
                for a in (L.AGENDA_NAMES if all_ else (agenda,))]
    check_places(files=[d / f for d in searched for f in EXPLOIT_FILES]
                 + ([out / f for f in EXPLOIT_ALL_FILES] if all_ else []),
                 folders=searched + [d / f for d in searched for f in EXPLOIT_FOLDERS])
    # (a table there that fbsim did not write, a user's own, is not replaced)
    for table, kind in [(d / f, "exploit search") for d in searched
                        for f in ("search.parquet", "candidates.parquet")] + (
            [(out / "exploitability.parquet", "exploitability")] if all_ else []):
        check_replaceable(table, "--out", (kind,))
    with output_lock(out), open_client(scheduler, workers) as (client, _threads):
        kw["client"] = client
        if all_:
            df = run_all(out, players=sizes, echo=echo, **kw)
            if as_json:
                typer.echo(df.to_json(orient="records", indent=1))
            else:
                typer.echo(f"{out / 'exploitability.parquet'}\n{out / 'exploitability.png'}")
            return
        rules = _rules(rules_file, set_, sizes[0], bots={})
        res = exploit(agenda, sizes[0], out=out, echo=echo, **kw)
        fair = fair_share(rules, res)
        write_result(res, out, now_iso(), rules_to_toml(rules, comments=False), field, fair)
        if as_json:
            typer.echo(json.dumps({**res.row(), "fair_share": fair}, indent=1))
        else:
            typer.echo(format_result(res, fair))


def _exploit_search(agenda, players, field, seed, out, as_json, quiet, rules_file, set_, knobs,
                    seat_games, threads) -> None:
    """`fbsim exploit --oracle search`: the searcher's gains per Agenda and table size."""
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import base_provenance, check_output_folder, now_iso
    from fbsim.experiments.search.equilibrium.fields import check_dealt
    from fbsim.experiments.search.equilibrium.state import publish, read_published, write_text
    from fbsim.experiments.search.searcher import (
        check_gains,
        format_gains,
        gains_summary,
        search_gains,
    )
    from fbsim.game import layout as L
    from fbsim.lineup import parse_lineup
    from fbsim.rules import rules_to_toml

    sizes = sizes_for(players, "4", rules_file, set_)
    if agenda is not None and agenda not in L.AGENDA_NAMES:
        raise UsageError(f"--agenda: one of {', '.join(L.AGENDA_NAMES)}, got '{cut(agenda)}'")
    agendas = (agenda,) if agenda else L.AGENDA_NAMES
    if seat_games < 10:
        raise UsageError(f"--seat-games: at least 10, got {seat_games}")
    plan = []
    for n in sizes:  # every size's rules and field before any game
        rules = _rules(rules_file, set_, n, bots={})
        check_dealt(rules, agendas=agendas, why="its gain is what is asked")
        lu = parse_lineup(field, players=n, flag="--field")
        plan.append((n, rules, lu, (field or "default lineup").replace("{players}", str(n))))
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("exploit",))
    # (its table sizes kept, a damaged one refused first)
    check_gains(read_published(out / "search"), out / "search" / "summary.json")
    started = now_iso()
    docs = {}
    with output_lock(out):
        for n, rules, lu, name in plan:
            if not as_json:
                typer.echo(f"== {n} players: the searcher against {name}", err=True)
            began = time.monotonic()
            gains = search_gains(rules, lu, seed, seat_games=seat_games, knobs=knobs,
                                 agendas=agendas, threads=threads,
                                 progress=_progress(quiet or as_json))
            summary = gains_summary(gains, knobs, seed, name, seat_games)
            summary["rules_toml"] = rules_to_toml(rules, comments=False)
            summary["provenance"] = {**base_provenance(started), "kind": "exploit search"}
            doc = publish(out / "search", n, summary)
            docs[n] = summary
            text = ["# The searcher's single-seat gains (lower bounds of what exists)", "",
                    "One seat plays the field except at its commitments, which it searches "
                    "by rollouts from its own view; paired on the field's games, 95% "
                    "intervals; `held`: every upper end <= 3 points.", ""]
            for size, entry in doc["players"].items():
                text += [format_gains(int(size), entry), ""]
            write_text(out / "search" / "summary.md", "\n".join(text))
            if not as_json:  # (the time is not kept: the same bytes on any machine)
                typer.echo(format_gains(n, summary))
                typer.echo(f"  {n} players: this run took {time.monotonic() - began:.0f} s",
                           err=True)
    if as_json:
        typer.echo(json.dumps({str(n): d for n, d in docs.items()}, indent=1))
    else:
        typer.echo(str(out / "search" / "summary.json"))


@app.command("ladder", help="How much skill pays: one seat climbs four rungs against a "
             "field (default: the committed single-seat equilibrium) while every other seat "
             "plays the field: the random bot, the Agenda's default bot, the field's own "
             "strategy, and the searcher (the field's strategy with every commitment searched "
             "by rollouts from its own view, as `exploit --oracle search`). Each Agenda's "
             "chance to win as a player at each rung, with the rung's gain over the field's "
             "strategy paired on the same games (95% intervals; the searcher's a lower bound "
             "of what skill reaches). Writes OUT/ladder.parquet, OUT/ladder.json and "
             "OUT/ladder.md; an interrupted run resumes at the table size it stopped in.")
def ladder_cmd(
    players: Annotated[str | None, typer.Option(
        help="Table sizes, e.g. 4, 3..6 or 3,5 (default: the size the rules file or --set "
             "names, else 3..6).")] = None,
    field: Annotated[str, typer.Option(
        help="The field (a lineup or field file, or bots by Agenda as --lineup; {players} "
             "stands for the table size).")] = "results/equilibrium/p{players}.toml",
    games: Annotated[str, typer.Option(
        help="Games per seat range of the random, default-bot and field rungs.")] = "20000",
    seat_games: Annotated[str, typer.Option(
        help="The searcher's seat-games per Agenda.")] = "3000",
    rollouts: Annotated[int, typer.Option(
        help="The searcher's rollouts per candidate at each commitment.", min=1,
        max=100_000)] = 64,
    seed: Annotated[int, typer.Option(help="Seed of the games.", min=0, max=MAX_SEED)] = 0,
    out: Annotated[Path, typer.Option(help="Folder for the ladder.", file_okay=False)
                   ] = Path("out/ladder"),
    quiet: QuietOpt = False,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import (
        check_output_folder,
        check_places,
        check_replaceable,
    )
    from fbsim.experiments.search.ladder import read_ladder, run_ladder
    from fbsim.experiments.search.searcher import Knobs
    from fbsim.lineup import parse_lineup

    sizes = sizes_for(players, "3..6", rules_file, set_)
    n_games = games_count(games, "--games")
    n_seat = games_count(seat_games, "--seat-games")
    if n_seat < 10:
        raise UsageError(f"--seat-games: at least 10, got {n_seat}")
    plan = []
    for n in sizes:  # every size's rules and field before any game
        rules = _rules(rules_file, set_, n, bots={})
        plan.append((rules, parse_lineup(field, players=n, flag="--field"),
                     field.replace("{players}", str(n))))
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("ladder",))
    check_places(files=[out / f for f in ("ladder.json", "ladder.parquet", "ladder.md")])
    check_replaceable(out / "ladder.parquet", "--out", ("ladder",))  # (not a user's own)
    read_ladder(out / "ladder.json")  # (a damaged one refused before the lock is taken)
    with output_lock(out):
        path = run_ladder(plan, out, seed, n_games, n_seat, Knobs(rollouts=rollouts),
                          progress=lambda: _progress(quiet),
                          echo=None if quiet else (lambda m: typer.echo(m, err=True)))
    typer.echo(str(path))


@app.command("equilibrium", help="Measure balance at an equilibrium of strong strategies, "
             "not against fixed bots.\n\n"
             "--draw seat (the default) solves the game as played, won by one player: every "
             "seat draws its own planner from its Agenda's mixture, and the search (PSRO-style: "
             "smooth fictitious play on simulated single-seat payoffs, best responses of one seat "
             "by the cross-entropy search from several starts, confirmed on fresh games, the "
             "answer audited on fresh seeds with single-seat and team best responses) stops "
             "when no single player gains more than --tolerance by switching strategy alone.\n\n"
             "--draw agenda solves the team game (every seat of an Agenda plays one shared "
             "draw and the Agenda's win counts: what players of an Agenda gain by acting as "
             "one), with a payoff table of Agenda-against-Agenda cells.\n\n"
             "Writes OUT/pN.toml (the field: a lineup file that simulate, sweep, report and "
             "exploit --field take), OUT/summary.json and OUT/summary.md. Interrupted searches "
             "resume from OUT/pN/state.json. Options left out take the defaults of the game "
             "solved (shown as: seat / agenda).")
def equilibrium_cmd(
    ctx: typer.Context,
    players: Annotated[str | None, typer.Option(
        help="Table sizes, e.g. 4, 3..6 or 3,5 (default: the size the rules file or --set "
             "names, else 3..6).")] = None,
    out: Annotated[Path, typer.Option(help="Folder for the fields, summary and searches.",
                                      file_okay=False)] = Path("out/equilibrium"),
    seed: Annotated[int, typer.Option(help="Seed of the search.", min=0, max=MAX_SEED)] = 0,
    draw: Annotated[str, typer.Option(
        help="The game solved: 'seat' (each seat draws its own strategy: the game as "
             "played) or 'agenda' (one draw per Agenda, shared by its seats: a team "
             "game).")] = "seat",
    meta_games: Annotated[str | None, typer.Option(
        help="seat: games per seat range for each strategy of the populations, each step of "
             "the meta-solver (1000).")] = None,
    meta_steps: Annotated[int | None, typer.Option(
        help="seat: the meta-solver's steps (smooth fictitious play) per iteration (16).")
                                  ] = None,
    cell_games: Annotated[str | None, typer.Option(
        help="agenda: games per cell of the payoff table (20000).")] = None,
    generations: Annotated[int | None, typer.Option(
        help="Generations of each start of a best-response search, 1 to 99 (8).")] = None,
    population: Annotated[int | None, typer.Option(
        help="Candidates per generation (12).", min=2)] = None,
    screen_games: Annotated[str | None, typer.Option(
        help="seat: games per seat range for each start candidate screened (1000).")] = None,
    search_games: Annotated[str | None, typer.Option(
        help="Games per candidate and generation; seat: per seat range (1500 / 5000).")
                             ] = None,
    select_games: Annotated[str | None, typer.Option(
        help="seat: games per seat range for each finalist of a search (6000).")] = None,
    starts: Annotated[int | None, typer.Option(
        help="seat: the best screened candidates a best response is searched from (3); "
             "agenda: the first N of the population's strongest, exploit's search, the "
             "previous best response, exploit's preset (3).")] = None,
    audit_starts: Annotated[int | None, typer.Option(
        help="seat: the same in an audit (4).")] = None,
    confirm_games: Annotated[str | None, typer.Option(
        help="Games of each confirmation on fresh games; seat: per seat range "
             "(20000 / 100000).")] = None,
    audit_games: Annotated[str | None, typer.Option(
        help="seat: games per seat range of an audit's confirmation (40000).")] = None,
    iterations: Annotated[int | None, typer.Option(
        help="Iterations at most, 1 to 99 (30 / 40); a search stops sooner once it "
             "converges.")] = None,
    audits: Annotated[int | None, typer.Option(
        help="Audits at most (3 / 2): new best responses against a field on fresh seeds, "
             "from more starts; seat: single-seat and team, and a field converges only once "
             "its audit finds no single-seat gain above --tolerance.", min=0,
        max=10)] = None,
    tolerance: Annotated[float, typer.Option(
        help="Stop when no deviation gain (upper end of its 95% interval) exceeds this, in "
             "points of win rate: one seat's (seat), an Agenda's (agenda).", min=0,
        max=100)] = 3.0,
    stability: Annotated[float, typer.Option(
        help="agenda: ... and the field's win rates moved at most this over the last three "
             "iterations, in points.", min=0, max=100)] = 3.0,
    start_from: Annotated[Path | None, typer.Option(
        "--from", help="seat: warm start from a finished single-seat search's folder (its "
        "answer at each table size and its populations), e.g. results/equilibrium with "
        "--rules or --set changing a rule: the search goes on from the old equilibrium "
        "instead of from scratch.", file_okay=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Start over, replaying everything.")
                     ] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the summary (the shape of OUT/summary.json) as JSON.")] = False,
    searcher_games: Annotated[str, typer.Option(
        help="seat: the answer's audit by the searcher too (an oracle out of the planner "
             "family, `fbsim exploit --oracle search`): seat-games per Agenda, 0 for none. "
             "Its gains go beside the family's, and a field it beats is not converged.")
                              ] = "3000",
    searcher_rollouts: Annotated[int, typer.Option(
        help="seat: the searcher's rollouts per candidate (its audit also runs 4x).",
        min=1, max=100_000)] = 64,
    distill: Annotated[int | None, typer.Option(
        help="seat: where the searcher beats the answer, distil its departures into the "
             "field's tables of commitments (by round and projected final Dial, and by round "
             "and its own Capital) and solve on from there, at most this many times, 0 to 20 "
             "(0: off; needs --searcher-games; the answer is the phase the searcher gains "
             "least against).")
                                ] = None,
    distill_share: Annotated[float | None, typer.Option(
        help="seat: the share of a field component's weight its distilled copy takes, above "
             "0 and at most 1 (0.5: half the table keeps playing the old strategy).")
                             ] = None,
    map_starts: Annotated[int | None, typer.Option(
        "--map", help="seat: map the equilibria instead of finding one: at least this many "
        "cold starts per table size (seeds --seed, --seed + 1, ..., each a search from "
        "scratch in OUT/starts/pN/s<seed>/, resumed where it stopped), their answers told "
        "apart by outcome, each equilibrium's basin share (the fraction of starts reaching "
        "it) with its interval; starts are added until none of the last --map-new-within "
        "found a new one. OUT/pN.toml is the largest basin's.", min=2)] = None,
    map_most: Annotated[int | None, typer.Option(
        help="seat, with --map: starts at most per table size (3 x --map).", min=2)] = None,
    map_new_within: Annotated[int | None, typer.Option(
        help="seat, with --map: stop once this many starts in a row found no new "
             "equilibrium (8, or --map less one if smaller).", min=1)] = None,
    map_distance: Annotated[float, typer.Option(
        help="seat, with --map: two answers are one equilibrium when every Agenda's chance "
             "to win as a player and the Collapse rate are within this many points.",
        min=0, max=100)] = 3.0,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    rules_file: RulesOpt = None,
    set_: SetOpt = None,
):
    from fbsim.experiments.run.cluster import open_client
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_folder, check_places
    from fbsim.experiments.search.equilibrium.basins import NEW_WITHIN
    from fbsim.experiments.search.searcher import Knobs

    searcher_games = (0 if searcher_games.strip() == "0"
                      else games_count(searcher_games, "--searcher-games"))
    if 0 < searcher_games < 10:
        raise UsageError(f"--searcher-games: 0 (none) or at least 10, got {searcher_games}")
    from fbsim.experiments.search.equilibrium import (
        DRAWS,
        Budget,
        TeamBudget,
        check_folders,
        check_map_options,
        check_options,
        format_summary,
        run_equilibrium,
        run_map,
    )
    from fbsim.experiments.search.equilibrium.fields import check_dealt
    from fbsim.experiments.search.equilibrium.trainer import warm_start
    from fbsim.rules import parse_set

    if draw not in DRAWS:
        raise UsageError(f"--draw: one of {', '.join(DRAWS)}, got '{cut(draw)}'")
    sizes = sizes_for(players, "3..6", rules_file, set_)
    given = {"generations": generations, "population": population, "starts": starts,
             "iterations": iterations, "audits": audits}
    for name, text in (("search_games", search_games), ("confirm_games", confirm_games),
                       ("meta_games", meta_games), ("cell_games", cell_games),
                       ("screen_games", screen_games), ("select_games", select_games),
                       ("audit_games", audit_games)):
        if text is not None:
            given[name] = games_count(text, "--" + name.replace("_", "-"))
    given["meta_steps"], given["audit_starts"] = meta_steps, audit_starts
    given["distill"], given["distill_share"] = distill, distill_share
    own = {"seat": {"meta_games", "meta_steps", "screen_games", "select_games", "audit_games",
                    "audit_starts", "distill", "distill_share"}, "agenda": {"cell_games"}}
    for name in own["agenda" if draw == "seat" else "seat"]:
        if given.get(name) is not None:
            raise UsageError(f"--{name.replace('_', '-')}: only with --draw "
                             f"{'agenda' if draw == 'seat' else 'seat'}")
    given = {k: v for k, v in given.items() if v is not None}
    if draw == "seat":
        refuse_given(ctx, ("stability",), "only with --draw agenda")
    if not distill:
        refuse_given(ctx, ("distill_share",), "only with --distill (the share of its "
                     "distilled copies)")
    if not searcher_games and not distill:  # (a distillation without it: refused below)
        refuse_given(ctx, ("searcher_rollouts",), "only with the searcher's audit "
                     "(--searcher-games above 0)")
    if map_starts is None:
        refuse_given(ctx, ("map_most", "map_new_within", "map_distance"),
                     "only with --map (the map of equilibria)")
    else:
        if draw != "seat":
            raise UsageError("--map: only with --draw seat (the map of single-seat "
                             "equilibria)")
        if start_from is not None:
            raise UsageError("--map: not with --from (each start of a map is a search from "
                             "scratch)")
        map_most = 3 * map_starts if map_most is None else map_most
        map_new_within = min(NEW_WITHIN, map_starts - 1) if map_new_within is None \
            else map_new_within
    if draw == "seat":
        budget = Budget(**given, tolerance=tolerance / 100)
    else:
        budget = TeamBudget(**given, tolerance=tolerance / 100, stability=stability / 100)
        for flag, v in (("--cell-games", budget.cell_games),
                        ("--search-games", budget.search_games),
                        ("--confirm-games", budget.confirm_games)):
            if v < 100:
                raise UsageError(f"{flag}: at least 100 games, got {v}")
    sets = dict(parse_set(x) for x in set_ or [])
    for n in sizes:  # the rules and the warm start must be valid before any game runs
        check_dealt(_rules(rules_file, set_, n, bots={}))
        if start_from is not None:
            if draw != "seat":
                raise UsageError("--from: a warm start is for the single-seat search "
                                 "(--draw seat)")
            warm_start(start_from, n)
    echo = None if as_json or quiet else (lambda m: typer.echo(m, err=True))
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("equilibrium",))
    if draw != "seat" and searcher_games:
        searcher_games = 0  # (the searcher deviates alone: the team game has no such audit)
    check_options(draw, budget, start_from, searcher_games)  # (before the lock)
    if map_starts is not None:
        check_map_options(budget, searcher_games, map_starts, map_most, map_new_within,
                          map_distance / 100)
    check_folders(out, sizes, mapping=map_starts is not None)
    check_places(files=[out / "summary.json", out / "summary.md",
                        *(out / f"p{n}.toml" for n in sizes)])
    with output_lock(out), open_client(scheduler, workers) as (client, _threads):
        if map_starts is not None:
            doc = run_map(sizes, out, seed=seed, budget=budget,
                          rules=None if rules_file is None else str(rules_file), sets=sets,
                          client=client, progress=_progress(quiet or as_json), echo=echo,
                          force=force, searcher_games=searcher_games,
                          searcher_knobs=Knobs(rollouts=searcher_rollouts), least=map_starts,
                          most=map_most, new_within=map_new_within,
                          distance=map_distance / 100)
        else:
            doc = run_equilibrium(sizes, out, seed=seed, budget=budget,
                              rules=None if rules_file is None else str(rules_file), sets=sets,
                                  client=client, progress=_progress(quiet or as_json),
                                  echo=echo, force=force, draw=draw, start_from=start_from,
                                  searcher_games=searcher_games,
                                  searcher_knobs=Knobs(rollouts=searcher_rollouts))
    if as_json:
        typer.echo(json.dumps({"players": {str(n): doc["players"][str(n)] for n in sizes}},
                              indent=1, sort_keys=True))
        return
    for n in sizes:
        typer.echo(format_summary(n, doc["players"][str(n)]))
    typer.echo(f"{out / 'summary.json'}")


@app.command("tune", help="Search rules values that balance the game: the parameters "
             "named in the spec, within their ranges, minimising its balance loss (each "
             "Agenda's win rate against its target, the collapse rate against a band, the "
             "seat spread against a bound) by the cross-entropy method; the best candidates "
             "are confirmed on a fresh seed and ranked, and the chosen rules' loss is measured "
             "once more on another fresh seed (fresh_loss: the figure to quote).\n\nWrites "
             "OUT/candidates.parquet (ranked, with confirmed metrics), OUT/search.parquet and "
             "OUT/best_rules.toml.\n\nWith --equilibrium the candidates are judged under "
             "strong play instead of by fixed fields: each at its own single-seat equilibrium, "
             "re-solved for it at every table size (Optuna's TPE proposes them); the best are "
             "re-solved from scratch, audited and confirmed on fresh games. Writes "
             "OUT/best_rules.toml, OUT/pN.toml (its fields), OUT/summary.json (`found`: every "
             "Agenda within the target of 1/players at every table size), OUT/summary.md, "
             "OUT/trials.parquet and OUT/finalists.parquet. Interrupted searches resume.")
def tune_cmd(
    target: Annotated[Path | None, typer.Option(
        help="The tune spec (TOML; docs/designers-guide.md, \"Search the rules\"). With "
        "--equilibrium it may be left out: "
        "the designer's levers (`fbsim.experiments.search.rulebook.DEFAULT_SPEC`).",
        dir_okay=False)] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for the search and its tables [default: out/tune, or "
        "out/tune-equilibrium with --equilibrium].", file_okay=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute finished generations "
                                        "(with --equilibrium: trials and finalists).")
                     ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranked table as JSON "
                                          "(with --equilibrium: summary.json).")] = False,
    robust: Annotated[bool, typer.Option(
        "--robust", help="Search rules against several fields at once and rank them by the "
        "worst field's loss: the spec's lineup and the committed equilibria "
        "(results/equilibrium/pN.toml), plus every --field.")] = False,
    field: Annotated[list[str] | None, typer.Option(
        "--field", help="With --robust: one more field (a lineup or field file; {players} in "
        "a path stands for the table size). Repeatable.")] = None,
    equilibrium: Annotated[bool, typer.Option(
        "--equilibrium", help="Judge every candidate at its own single-seat equilibrium, "
        "re-solved for it at 3-6 players (warm-started from solved fields), proposed by "
        "Optuna's TPE; the best are re-solved from scratch, audited and confirmed on fresh "
        "games. Writes best_rules.toml, its fields pN.toml and summary.json (`found`).")
    ] = False,
    quiet: QuietOpt = False,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
):
    if equilibrium:
        if robust or field:
            raise UsageError("--robust/--field: not with --equilibrium (each candidate plays "
                             "its own equilibrium)")
        return _tune_equilibrium(target, out or Path("out/tune-equilibrium"), force, as_json,
                                 quiet, scheduler, workers)
    if target is None:
        raise UsageError("--target: give the tune spec (or use --equilibrium)")
    out = out or Path("out/tune")
    from fbsim.experiments.run.cluster import open_client
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_folder, now_iso
    from fbsim.experiments.search.tune import (
        ROBUST_FIELDS,
        check_outputs,
        check_tune_spec,
        format_tune,
        load_tune_spec,
        tune,
        write_tune,
    )

    spec = load_tune_spec(target)
    if field and not robust:
        raise UsageError("--field: give it with --robust")
    if robust:  # (tune loads every field at every table size before any game)
        spec.fields = list(dict.fromkeys([*(spec.fields or ROBUST_FIELDS), *(field or [])]))
    started = now_iso()
    echo = None if as_json else (lambda m: typer.echo(m, err=True))
    check_tune_spec(spec)
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("tune",))
    check_outputs(out)
    with output_lock(out):
        with open_client(scheduler, workers) as (client, _threads):
            res = tune(spec, out, client=client, progress=_progress(quiet or as_json),
                       echo=echo, force=force)
        paths = write_tune(res, spec, out, started)
    if as_json:
        typer.echo(res.ranked.to_json(orient="records", indent=1))
        return
    typer.echo(format_tune(res, spec))
    for p in paths:
        typer.echo(str(p))


def _tune_equilibrium(target: Path | None, out: Path, force: bool, as_json: bool, quiet: bool,
                      scheduler, workers) -> None:
    import json

    from fbsim.experiments.run.cluster import open_client
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_folder, now_iso
    from fbsim.experiments.search.rulebook import (
        check_rulebook_spec,
        load_rulebook_spec,
        summary_markdown,
        tune_equilibrium,
        write_rulebook,
    )

    spec = load_rulebook_spec(target)
    check_rulebook_spec(spec)
    started = now_iso()
    echo = None if (as_json or quiet) else (lambda m: typer.echo(m, err=True))
    folder_ok(out, "--out")
    check_output_folder(out, "--out", ("rules search (tune --equilibrium)",))
    with output_lock(out):
        with open_client(scheduler, workers) as (client, _threads):
            res = tune_equilibrium(spec, out, client=client, echo=echo, force=force)
        paths = write_rulebook(res, spec, out, started)
    if as_json:
        typer.echo(json.dumps(res.summary, indent=1, sort_keys=True))
        return
    typer.echo(summary_markdown(res.summary, spec))
    for p in paths:
        typer.echo(str(p))


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
    from fbsim.environment import check_environment

    check_environment()  # a bad setting stops every command before it writes anything


RESUMABLE = {"sweep", "experiment", "exploit", "equilibrium", "tune", "report", "ladder"}


def _interruptible(name: str, callback):
    """`callback` with Ctrl-C turned into `Interrupted` (typer would turn it into exit 0 when
    called with standalone_mode=False, the way `main` calls it)."""

    @functools.wraps(callback)
    def run(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted(name in RESUMABLE) from None

    return run


for _info in app.registered_commands:
    _info.callback = _interruptible(_info.name or _info.callback.__name__, _info.callback)


SAY_WIDTH = 2000  # (messages cut the values they quote; this bounds any that does not)


def _say(message: str) -> None:
    """One line on stderr, whatever the message holds (at most SAY_WIDTH characters of it)."""
    print("fbsim: " + cut(" ".join(str(message).split()), SAY_WIDTH), file=sys.stderr)


def os_error_line(e: OSError) -> str:
    """What an OSError says in one line, naming the path and, where the error alone does not
    say it, what is wrong there and the way out."""
    import errno

    path = e.filename
    where = f"{path}: " if path is not None else "cannot read or write: "
    if e.errno == errno.EEXIST and path is not None:
        return (f"{path}: a file is in the place of a folder that fbsim writes into; remove "
                "it, or write elsewhere")
    if e.errno == errno.EISDIR and path is not None:
        return (f"{path}: a folder is in the place of a file that fbsim writes; remove it, "
                "or write elsewhere")
    if e.errno == errno.ENOTDIR and path is not None:
        return (f"{path}: a file is in the place of one of its folders; remove it, or write "
                "elsewhere")
    return f"{where}{e.strerror or e}"


def check_no_blank_argument(args: list[str]) -> None:
    """No argument is empty or blank (`--out ""`, `--out=`, often a shell variable that was
    never set): no option takes one, and a path read from one is the current folder, where
    a command would then write. UsageError naming the option, before anything is read."""
    for i, a in enumerate(args):
        flag, eq, given = a.partition("=") if a.startswith("--") else (a, "", "")
        if eq and not given.strip():
            raise UsageError(f"{flag}: an empty value; give one (an unset shell variable?)")
        if not a.strip():
            before = args[i - 1] if i and args[i - 1].startswith("-") else None
            raise UsageError((f"{before}: an empty value" if before else
                              f"argument {i + 1} is empty")
                             + "; give one (an unset shell variable?)")


def main(argv: list[str] | None = None) -> int:
    """Entry point: errors become one line on stderr and an exit code (2 for bad input, 130
    for Ctrl-C), never a traceback."""
    try:
        check_no_blank_argument(sys.argv[1:] if argv is None else argv)
        code = app(args=argv, standalone_mode=False)
    except Interrupted as e:
        _say(str(e))
        return e.exit_code
    except FbsimError as e:
        _say(f"error: {e}")
        return e.exit_code
    except typer.Exit as e:
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        _say(str(Interrupted(False)))
        return 130
    except typer.TyperException as e:  # errors of the command-line parser: bad input
        fmt = getattr(e, "format_message", None)
        _say(f"error: {fmt() if callable(fmt) else e}")
        return 2
    except OSError as e:  # a file or folder that cannot be read or written
        _say(f"error: {os_error_line(e)}")
        return 2
    except (OverflowError, MemoryError) as e:
        _say(f"error: a number too large: {e}")
        return 2
    except RecursionError:  # (a file's readers name it: `fbsim.jsonfile`; this is the net)
        _say("error: an input nested too deeply to read")
        return 2
    # typer returns the code of a typer.Exit (or 130 for a Ctrl-C outside a command)
    return code if isinstance(code, int) else 0


def _interrupt_once(signum, frame) -> None:
    """SIGINT: a KeyboardInterrupt, as Python's own handler raises, the first time; every
    later one is ignored while the first unwinds (a second Ctrl-C, or `timeout`, which
    signals the process and then its group), so that the command still ends with its one
    line and status 130, not a traceback from wherever the second landed (the message being
    printed, threading's shutdown)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def entry() -> None:
    import signal

    # (a SIGINT the parent ignores, as for a job started in the background, stays ignored)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt_once)
    sys.exit(main())


if __name__ == "__main__":
    entry()
