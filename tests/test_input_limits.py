"""Input that is too big, too deep or not a file at all: one line `fbsim: error: ...` naming
the file or key, exit code 2, nothing written, never a traceback or a hang. FIFOs and
devices are refused by name, before opening (a FIFO would block); TOML nested thousands of
levels deep, a file over the size cap, card counts that would fill the memory, seeds that
overflow once a search adds its offsets, long values echoed in full."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fbsim.cli import main
from fbsim.errors import ConfigError, FbsimError, UsageError, cut, did_you_mean
from fbsim.limits import MAX_SEED
from fbsim.rules import load_rules
from fbsim.rules.schema import MAX_CARDS
from fbsim.tomlfile import MAX_TOML_BYTES, read_toml

LONG = "x" * 200_000  # far longer than any message should quote
EQUILIBRIUM = Path(__file__).resolve().parents[1] / "results" / "equilibrium"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(code: int, err: str, *names: str) -> str:
    """The single error line, after checking it (exit 2, no traceback, names given)."""
    assert code == 2, err[:2000]
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbsim: error:"), err[:2000]
    for name in names:
        assert name in lines[0], lines[0][:2000]
    return lines[0]


def _fail(message):
    raise UsageError(message)


def _out(tmp_path):
    """A folder for the --out paths of a command (which must leave it empty)."""
    out = tmp_path / "out"
    out.mkdir()
    return out


def _empty(folder) -> bool:
    return not any(folder.iterdir())


# ------------------------------------------------------------------- not a regular file


def _cli(*args, timeout: float = 20) -> subprocess.CompletedProcess:
    """The command line in a child process: were a FIFO opened, it would block, and the
    timeout turns that into a failure instead of a hung test run."""
    return subprocess.run([sys.executable, "-m", "fbsim.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", [
    ["rules", "--rules", "{fifo}"],
    ["simulate", "--games", "10", "-q", "--rules", "{fifo}", "--out", "{out}/m.parquet"],
    ["replay", "--lineup", "{fifo}"],
    ["replay", "--script", "{fifo}"],
    ["sweep", "{fifo}", "--out", "{out}/sw"],
    ["tune", "--target", "{fifo}", "--out", "{out}/tu"],
    ["exploit", "--agenda", "steward", "--field", "{fifo}", "--out", "{out}/ex"],
])
def test_a_fifo_is_refused_by_name_and_never_opened(tmp_path, command):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    out = _out(tmp_path)
    args = [a.replace("{fifo}", str(fifo)).replace("{out}", str(out)) for a in command]
    r = _cli(*args)
    line = one_line(r.returncode, r.stderr, str(fifo), "not a regular file (a FIFO)")
    assert r.stdout == "" and _empty(out), line


def test_a_device_or_a_folder_is_refused_by_name(capsys, tmp_path):
    line = one_line(*run(capsys, "rules", "--rules", "/dev/null")[::2], "/dev/null")
    assert "not a regular file (a character device)" in line
    with pytest.raises(UsageError, match="it is a folder"):
        read_toml(tmp_path, _fail)


def test_a_file_over_the_size_cap_is_refused_unread(capsys, tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_TOML_BYTES + 1)  # sparse: no disk used
    with pytest.raises(UsageError, match="too large"):
        read_toml(big, _fail)
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "sweep", big, "--out", out / "sw")
    one_line(code, err, str(big), "too large", "MiB")
    assert stdout == "" and _empty(out)


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("text", [
    "masks = " + "[" * 5000,  # tomllib recurses out
    "masks = " + "[" * 5000 + "]" * 5000,
    "masks = " + "[" * 40 + "]" * 40,  # parses, deeper than any file fbsim reads
    "masks = " + "{a = " * 5000 + "1" + "}" * 5000,
])
def test_toml_nested_too_deep_is_one_line(capsys, tmp_path, text):
    f = tmp_path / "deep.toml"
    f.write_text(text)
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "simulate", "--games", "10", "-q", "--rules", f,
                            "--out", out / "m.parquet")
    one_line(code, err, str(f), "nested too deep")
    assert stdout == "" and _empty(out)
    code, _, err = run(capsys, "replay", "--lineup", f)
    one_line(code, err, str(f), "nested too deep")


def test_a_set_value_nested_too_deep_is_one_line(capsys):
    for value in ("[" * 5000, "[" * 40 + "]" * 40):
        one_line(*run(capsys, "rules", "--set", f"masks={value}")[::2], "--set", "masks",
                 "nested too deep")
    key = ".".join(["a"] * 5000)
    one_line(*run(capsys, "rules", "--set", f"{key}=1")[::2], "--set", "nested too deep")


def test_an_integer_of_too_many_digits_is_one_line(capsys, tmp_path):
    f = tmp_path / "digits.toml"
    f.write_text("masks = " + "9" * 5000 + "\n")
    one_line(*run(capsys, "rules", "--rules", f)[::2], str(f), "digits")
    one_line(*run(capsys, "rules", "--set", "masks=" + "9" * 5000)[::2], "masks", "digits")


def test_rules_text_nested_too_deep_is_a_config_error():
    from fbsim.rules import rules_from_toml

    with pytest.raises(ConfigError, match="nested too deep"):
        rules_from_toml("masks = " + "[" * 5000, "provenance")


# ------------------------------------------------------------------------ long values


def test_cut_keeps_short_text_and_cuts_long_text():
    assert cut("masks") == "masks"
    assert cut("y" * 60) == "y" * 60
    assert cut("y" * 61) == "y" * 60 + "..."
    start = time.perf_counter()
    assert did_you_mean(LONG * 50, ["masks", "rounds"]) == ""  # (no 10 MB comparison)
    assert time.perf_counter() - start < 1


def _files(tmp_path):
    rules = tmp_path / "long-value.toml"
    rules.write_text(f'masks = "{LONG}"\n')
    key = tmp_path / "long-key.toml"
    key.write_text(f"{LONG} = 1\n")
    lineup = tmp_path / "long-lineup.toml"
    lineup.write_text(f'draw = "{LONG}"\n')
    seat = tmp_path / "long-seat.toml"
    seat.write_text(f'[seats]\n{LONG} = "hoarder"\n')
    return rules, key, lineup, seat


@pytest.mark.parametrize("case", [
    ("rules", "--rules", "{rules}"),
    ("rules", "--rules", "{key}"),
    ("replay", "--lineup", "{lineup}"),
    ("replay", "--lineup", "{seat}"),
    ("rules", "--set", f"masks={LONG}"),
    ("rules", "--set", f"masks=[{LONG}]"),
    ("rules", "--set", f"{LONG}=1"),
    ("rules", "--set", f"scoring.tiebreak_first_player={LONG}"),
    ("rules", "--set", f"bots.{LONG}.aim=1"),
    ("rules", "--set", f"bots.tunable.aim={LONG}"),
    ("rules", "--set", LONG),
    ("replay", "--lineup", f"steward={LONG}"),
    ("replay", "--lineup", f"{LONG}=steward"),
    ("replay", "--lineup", LONG),
    ("replay", "--seat", f"1=tunable:aim={LONG}"),
    ("replay", "--seat", f"1=tunable:{LONG}=3"),
    ("replay", "--seat", f"{LONG}=hoarder"),
    ("replay", "--players", LONG),
    ("simulate", "--games", LONG),
])
def test_a_long_value_is_cut_in_the_message(capsys, tmp_path, case):
    rules, key, lineup, seat = _files(tmp_path)
    args = [a.format(rules=rules, key=key, lineup=lineup, seat=seat) if "{" in a else a
            for a in case]
    line = one_line(*run(capsys, *args)[::2])
    assert "..." in line and len(line) < 600, line[:2000]


def test_a_long_file_path_is_cut_in_the_error_itself(tmp_path):
    """A rules or lineup path far longer than a file name can be (here named in a sweep spec,
    which the command line does not shorten first) is cut where the error names it: the
    message stays short and still says why the file cannot be read."""
    from fbsim.experiments.run.spec import build_points, load_spec
    from fbsim.lineup import lineup_from_file

    far = tmp_path / ("x" * 5000)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'players = [4]\ngames = 10\nrules = "{far.name}"\n')
    errors = []
    for call in (lambda: build_points(load_spec(spec)), lambda: load_rules(far),
                 lambda: lineup_from_file(far)):
        with pytest.raises(FbsimError) as e:
            call()
        errors.append(str(e.value))
    for msg in errors:
        assert len(msg) < 400 and "..." in msg and "cannot read" in msg, msg[:600]


# ------------------------------------------------------------------------ card counts


@pytest.mark.parametrize("item", [
    "decks.p4.steward=1000000000", f"decks.p3.opportunist={MAX_CARDS + 1}",
    f"decks.p6.accelerationist={MAX_CARDS + 1}", "assets.refinery.count=1000000000",
    f"assets.bunker.count={MAX_CARDS + 1}", "assets.solar.count=1000",
])
def test_card_counts_are_bounded(capsys, tmp_path, item):
    key = item.split("=")[0]
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "simulate", "--games", "10", "-q", "--set", item,
                            "--out", out / "m.parquet")
    one_line(code, err, key, f"from 0 to {MAX_CARDS}")
    assert stdout == "" and _empty(out)


def test_card_counts_in_a_rules_file_are_bounded(capsys, tmp_path):
    f = tmp_path / "deck.toml"
    f.write_text(f"[decks.p5]\nsteward = {MAX_CARDS + 1}\n")
    one_line(*run(capsys, "rules", "--rules", f)[::2], str(f), "decks.p5.steward",
             f"from 0 to {MAX_CARDS}")


def test_the_card_bound_itself_is_allowed():
    r = load_rules(sets=[f"decks.p4.steward={MAX_CARDS}", f"assets.refinery.count={MAX_CARDS}",
                         f"assets.solar.count={MAX_CARDS}"])
    assert (r.decks.p4.steward, r.assets["refinery"].count) == (MAX_CARDS, MAX_CARDS)


# ------------------------------------------------------------------------------ seeds


def _seed_offsets() -> list[int]:
    from fbsim.experiments.search import exploit, tune
    from fbsim.experiments.search.equilibrium import team

    return [getattr(m, k) for m in (exploit, tune, team) for k in dir(m)
            if k.endswith("_SEED_OFFSET")]


def test_the_largest_seed_plus_any_offset_fits_an_int64():
    from fbsim.kernel import simulate

    assert MAX_SEED == 2**62 - 1
    offsets = _seed_offsets()
    assert offsets and max(offsets) < 10**8
    # + iterations, generations and starts (each a few thousand at most)
    seed = MAX_SEED + max(offsets) + 10**8
    assert seed < 2**63
    games = simulate(load_rules(), None, seed, 2)
    assert len(games["game"]) == 2


@pytest.mark.parametrize("command", [
    ["simulate", "--games", "10", "-q", "--out", "{out}/m.parquet"],
    ["exploit", "--agenda", "steward", "--out", "{out}/ex"],
    ["equilibrium", "--players", "4", "--out", "{out}/eq"],
])
@pytest.mark.parametrize("seed", [MAX_SEED + 1, 2**63 - 1])
def test_a_seed_over_the_largest_is_refused(capsys, tmp_path, command, seed):
    assert MAX_SEED < 2**62  # (else the command would start a search)
    out = _out(tmp_path)
    args = [a.replace("{out}", str(out)) for a in command] + ["--seed", str(seed)]
    code, stdout, err = run(capsys, *args)
    one_line(code, err, "--seed", str(MAX_SEED))
    assert stdout == "" and _empty(out)


def test_a_spec_seed_over_the_largest_is_refused(capsys, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(f"seed = {MAX_SEED + 1}\n[vary]\nmasks = [1, 2]\n")
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "sweep", spec, "--out", out / "sw")
    one_line(code, err, str(spec), "seed", str(MAX_SEED))
    assert stdout == "" and _empty(out)


# ----------------------------------------------------------------- lineups and seats


@pytest.mark.parametrize("args, says", [
    (["sweep", "--out", ""], "--out: an empty value"),
    (["sweep", "--out="], "--out: an empty value"),
    (["sweep", "--players", "3", "--out", " "], "--out: an empty value"),
    (["sweep", ""], "argument 2 is empty"),
    (["simulate", "--games", "10", "--lineup", " "], "--lineup: an empty value"),
    (["equilibrium", "--players", "3", "--out", ""], "--out: an empty value"),
    (["report", "--games", "100", "--out", "r.html", "--rulebook", ""],
     "--rulebook: an empty value"),
])
def test_an_empty_argument_is_refused_before_anything_is_written(capsys, tmp_path,
                                                                 monkeypatch, args, says):
    """An empty or blank argument (an unset shell variable, typically) is refused in one
    line naming its option: read as a path it would be the current folder, where the
    command would write."""
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run(capsys, *args)
    one_line(code, err, says.split(":")[0], says)
    assert stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("lineup", [",", "steward=steward,", ",random", "random,,"])
def test_an_empty_lineup_item_is_refused(capsys, tmp_path, lineup):
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "simulate", "--games", "10", "-q", "--lineup", lineup,
                            "--out", out / "m.parquet")
    one_line(code, err, "--lineup", "empty item")
    assert stdout == "" and _empty(out)


@pytest.mark.parametrize("seat", ["٣=hoarder", "３=hoarder", "+1=hoarder", "1_0=hoarder"])
def test_a_seat_not_in_ascii_digits_is_refused(capsys, seat):
    code, stdout, err = run(capsys, "replay", "--seat", seat)
    one_line(code, err, "--seat", "seat must be an integer")
    assert stdout == ""


def test_a_seat_not_in_ascii_digits_is_refused_in_a_lineup_file_and_a_sweep(capsys, tmp_path):
    from fbsim.lineup import split_seat_items

    f = tmp_path / "seats.toml"
    f.write_text('[seats]\n"٣" = "hoarder"\n')
    one_line(*run(capsys, "replay", "--lineup", f)[::2], str(f), "seats.٣",
             "a seat is a number")
    assert split_seat_items("0=hoarder,٣=random") == ["0=hoarder,٣=random"]
    one_line(*run(capsys, "replay", "--players", "٣")[::2], "--players")


def test_mixture_weights_whose_sum_overflows_are_refused(capsys, tmp_path):
    f = tmp_path / "field.toml"
    f.write_text("[[agendas.steward.mixture]]\nweight = 1e308\n"
                 "[[agendas.steward.mixture]]\nweight = 1e308\n")
    out = _out(tmp_path)
    code, stdout, err = run(capsys, "simulate", "--games", "10", "-q", "--lineup", f,
                            "--out", out / "m.parquet")
    one_line(code, err, str(f), "agendas.steward.mixture", "not a finite number")
    assert stdout == "" and _empty(out)
    for weight in ("0", "-1", "inf", "nan"):
        f.write_text(f"[[agendas.steward.mixture]]\nweight = {weight}\n")
        one_line(*run(capsys, "replay", "--lineup", f)[::2], str(f),
                 "agendas.steward.mixture[0].weight")


@pytest.mark.parametrize("players", ["4,4", "3,5,3", "٤"])
def test_replay_refuses_a_repeated_or_unreadable_table_size(capsys, players):
    code, stdout, err = run(capsys, "replay", "--players", players)
    one_line(code, err, "--players")
    assert stdout == ""


# ------------------------------------------- conflicting, pointless or misplaced inputs

@pytest.mark.parametrize("args, says", [
    (["replay", "--players", "3", "--set", "players=4"],
     "--players 3: conflicts with players = 4 from --set players=4"),
    (["replay", "--players", "3", "--set", "players=4", "--searcher", "1", "--rollouts", "1"],
     "--players 3: conflicts with players = 4"),
    (["bench", "--players", "3", "--set", "players=4", "--games", "1000", "--no-compile"],
     "--players 3: conflicts with players = 4"),
    (["bench", "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"],
     "--workers and --scheduler: give one"),
    (["bench", "--workers", "1", "--players", "3", "--lineup", "accelerationist=hoarder"],
     "--lineup: not with --workers or --scheduler"),
    (["bench", "--workers", "1", "--markdown"], "--markdown: not with --workers"),
    (["bench", "--decisions", "--threads", "2"], "--threads: not with --decisions"),
    (["bench", "--decisions", "--rss-games", "100"], "--rss-games: not with --decisions"),
    (["experiment", "--list", "--games", "100"], "--games: not with --list"),
    (["experiment", "--list", "--results", "elsewhere"], "--results: not with --list"),
])
def test_options_that_contradict_each_other_are_refused(capsys, tmp_path, monkeypatch, args,
                                                        says):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run(capsys, *args)
    one_line(code, err, says)
    assert stdout == "" and list(tmp_path.iterdir()) == []


def test_an_experiment_never_writes_into_another_commands_dataset(capsys, tmp_path):
    sw = tmp_path / "sw"
    (sw / "points").mkdir(parents=True)
    (sw / "sweep.json").write_text("{}")
    before = sorted(p.name for p in sw.iterdir())
    code, _, err = run(capsys, "experiment", "masks", "--games", "100", "--results", sw)
    one_line(code, err, f"--results {sw}: holds another command's dataset (a sweep)")
    assert sorted(p.name for p in sw.iterdir()) == before


@pytest.mark.parametrize("place, args", [
    ("ladder.parquet", ["ladder", "--players", "3", "--field", EQUILIBRIUM / "p3.toml",
                        "--games", "200", "--seat-games", "10", "--rollouts", "1", "-q"]),
    ("steward-p3/search.parquet", ["exploit", "--agenda", "steward", "--players", "3", "-q"]),
])
def test_a_users_file_in_the_place_of_a_table_is_not_replaced(capsys, tmp_path, place, args):
    out = tmp_path / "out"
    (out / place).parent.mkdir(parents=True)
    (out / place).write_text("my notes")
    code, _, err = run(capsys, *args, "--out", out)
    one_line(code, err, f"--out {out / place}: exists and is not")
    assert (out / place).read_text() == "my notes"


def test_report_map_of_a_folder_that_holds_no_map_is_refused(capsys, tmp_path):
    folder = tmp_path / "eq"
    folder.mkdir()
    (folder / "summary.json").write_text('{"players": {}}')
    code, _, err = run(capsys, "report", "--players", "3", "--games", "100", "--map", folder,
                       "--out", tmp_path / "r.html", "-q")
    one_line(code, err, f"--map {folder}", "no table size holds a map of equilibria")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eq"]


def test_a_tune_spec_cannot_search_the_table_size(tmp_path):
    from fbsim.experiments.run.spec import SpecError
    from fbsim.experiments.search.tune import load_tune_spec

    f = tmp_path / "spec.toml"
    f.write_text("players = [3]\n[params]\nplayers = [3, 4]\n")
    with pytest.raises(SpecError, match=r"params\.players: not a rule to search"):
        load_tune_spec(f)
