"""Damaged or hand-edited files that the searches read back when they resume: the single-seat
equilibrium's OUT/pN/state.json (its iterations' best responses, audits, the searcher's
audits, distillations, the pending step) and `fbsim tune --equilibrium`'s OUT/trials.json.
Each is refused in one line naming the file, the key and the way out, exit 2, before any
game is played or any file written; and --distill without the searcher's audit is refused
before anything is written."""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from pathlib import Path

import pytest

from fbsim.cli import main
from fbsim.errors import UsageError
from fbsim.experiments.run.spec import SpecError
from fbsim.experiments.search.equilibrium import Budget, run_equilibrium
from fbsim.experiments.search.equilibrium.state import State
from fbsim.experiments.search.rulebook import rulebook_spec_from_dict
from tests.test_rulebook import spec_text
from tests.test_seat_equilibrium import run

ROOT = Path(__file__).resolve().parents[1]
# the smallest single-seat search: one iteration, its audit, the searcher's audit
TINY = ["--players", "3", "--meta-games", "100", "--meta-steps", "1", "--generations", "1",
        "--population", "2", "--screen-games", "100", "--search-games", "100",
        "--select-games", "100", "--starts", "1", "--audit-starts", "1", "--confirm-games",
        "100", "--audit-games", "100", "--iterations", "1", "--audits", "1",
        "--searcher-games", "10", "--searcher-rollouts", "1", "-q"]
NAN = float("nan")


def files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by its path there: what a refusal must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def damaged(good: Path, out: Path, name: str, edit) -> Path:
    """A copy of the folder `good` at `out` with its file `name` (JSON) edited by `edit`."""
    shutil.copytree(good, out)
    path = out / name
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    return path


def refused(capsys, out: Path, path: Path, key: str, *args) -> str:
    """The command `args` over the folder `out`: exit 2, one line naming `path` and `key`
    and the way out, every file under `out` as it was."""
    before = files(out)
    code, _, err = run(capsys, *args)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path}: {key}: " in err, err
    assert "restore the file" in err and "--force" in err, err
    assert files(out) == before
    return err


# ------------------------------------------------------------------ the equilibrium's state


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """A finished tiny single-seat search (an iteration, its audit, the searcher's audit)."""
    out = tmp_path_factory.mktemp("equilibrium") / "eq"
    code = main(["equilibrium", "--out", str(out), *TINY])
    assert code == 0
    doc = json.loads((out / "p3" / "state.json").read_text())
    assert doc["audits"] and doc["searched"] and not doc["pending"]
    return out


def _response(doc: dict, agenda: str) -> dict:
    return doc["iterations"][0]["responses"][agenda]


def _longer_than_then(doc: dict) -> None:
    """Iteration 0's mixture of the opportunist one weight longer than its population was
    when it was played, yet no longer than the population now (grown since)."""
    it = doc["iterations"][0]
    then = it["population"]["opportunist"]
    pop = doc["populations"]["opportunist"]
    while len(pop) < then + 1:
        pop.append(dict(pop[0]))
    it["mixture"]["opportunist"] = [1 / (then + 1)] * (then + 1)


def _first_searched_agenda(doc: dict) -> str:
    return next(iter(doc["searched"][0]["agendas"]))


def _other_weights(d: dict, agenda: str) -> list[float]:
    """Weights over the Agenda's population that sum to 1 but are not the current ones."""
    n = len(d["populations"][agenda])
    w = [1.0 / n] * n if n > 1 else [1.0]
    if w == d["mixture"][agenda]:
        w = [1.0] + [0.0] * (n - 1)
    assert w != d["mixture"][agenda], "a population of one strategy has one mixture"
    return w


STATE_DAMAGES = {
    "a response's gain null": (
        lambda d: _response(d, "accelerationist").update(gain=None),
        "iterations[0].responses.accelerationist.gain"),
    "a response's strategy NaN": (
        lambda d: _response(d, "accelerationist")["strategy"].update(aim=NAN),
        "iterations[0].responses.accelerationist.strategy"),
    "a response's strategy text": (
        lambda d: _response(d, "accelerationist")["strategy"].update(aim="x"),
        "iterations[0].responses.accelerationist.strategy"),
    "a response's interval infinite": (
        lambda d: _response(d, "steward")["gain"]["ci"].__setitem__(1, math.inf),
        "iterations[0].responses.steward.gain.ci[1]"),
    "a response missing": (
        lambda d: d["iterations"][0]["responses"].pop("opportunist"),
        "iterations[0].responses.opportunist"),
    "a mixture longer than its population then": (
        _longer_than_then, "iterations[0].mixture.opportunist"),
    "the current mixture not summing to 1": (
        lambda d: d["mixture"].update(steward=[0.3] * len(d["mixture"]["steward"])
                                      if len(d["mixture"]["steward"]) > 1 else [0.6]),
        "mixture.steward"),
    "the current mixture not the last iteration's": (
        lambda d: d["mixture"].update(opportunist=_other_weights(d, "opportunist")),
        "mixture"),
    "an iteration's payoffs NaN": (
        lambda d: d["iterations"][0]["payoffs"]["steward"].__setitem__(0, NAN),
        "iterations[0].payoffs.steward[0]"),
    "the field's Collapse interval reversed": (
        lambda d: d["iterations"][0]["field"]["collapse"].update(ci=[0.9, 0.1]),
        "iterations[0].field.collapse.rate"),
    "an Agenda's win rate outside its interval": (
        lambda d: d["iterations"][0]["field"]["agendas"]["steward"].update(win_rate=0.999),
        "iterations[0].field.agendas.steward.win_rate"),
    "its games beyond an int64": (lambda d: d.update(games=1e20), "games"),
    "an audit of no iteration": (
        lambda d: d["audits"][0].update(iteration=5), "audits[0].iteration"),
    "an audit's team gain a seat's": (
        lambda d: d["audits"][0]["team"]["steward"]["gain"].update(mode="seat"),
        "audits[0].team.steward.gain"),
    "the searcher's worst edited": (
        lambda d: d["searched"][0].update(worst=-0.5), "searched[0].worst"),
    "the searcher's gain NaN": (
        lambda d: d["searched"][0]["agendas"][_first_searched_agenda(d)].update(
            search_gain=NAN), None),
    "the searcher's audit of no iteration": (
        lambda d: d["searched"][0].update(field_iteration=3), "searched[0].field_iteration"),
    "a pending audit of an iteration audited already": (
        lambda d: d.update(pending={"audit": d["audits"][0]["iteration"], "seat": {},
                                    "team": {}}), "pending.audit"),
    "a pending audit of no iteration": (
        lambda d: d.update(pending={"audit": 4, "seat": {}, "team": {}}), "pending.audit"),
    "the field's games fewer than it dealt an Agenda in": (
        lambda d: d["iterations"][0]["field"].update(games=0), "iterations[0].field.games"),
    "a pending response's strategy NaN": (
        lambda d: d.update(pending={
            "iteration": 1, "mixture": d["mixture"], "step": 0, "payoffs": None,
            "regret": None, "games": 0,
            "responses": {"steward": {"strategy": {"aim": NAN}, "start": "x"}}}),
        "pending.responses.steward.strategy"),
}


@pytest.mark.parametrize("how", STATE_DAMAGES)
def test_a_damaged_state_is_refused_before_the_search_resumes(capsys, tmp_path, solved, how):
    """Every record of OUT/pN/state.json is checked when it is read: a best response's gain
    null, a strategy's parameter NaN or text, an interval infinite, an iteration's mixture
    longer than its population when it was played, an audit or the searcher's audit of an
    iteration there is not, their numbers edited, a pending step's strategy out of range."""
    edit, key = STATE_DAMAGES[how]
    out = tmp_path / "eq"
    path = damaged(solved, out, "p3/state.json", edit)
    if key is None:
        key = f"searched[0].agendas.{_first_searched_agenda(json.loads(path.read_text()))}" \
              ".search_gain"
    refused(capsys, out, path, key, "equilibrium", "--out", out, *TINY)


SUMMARY_DAMAGES = {
    "truncated": (lambda t: t[: len(t) // 2], "not readable JSON"),
    "a NaN": (lambda t: t.replace('"games": ', '"games": NaN, "x": ', 1),
              "NaN is not a number JSON allows"),
    "a list": (lambda t: "[]", "expected a table with a table of table sizes"),
    "a size of 9": (lambda t: t.replace('"3":', '"9":', 1), "players.9: expected a table"),
    "an empty size": (lambda t: json.dumps({"players": {**json.loads(t)["players"], "4": {}}}),
                      "players.4.agendas: missing"),
    "a key beside the sizes": (lambda t: '{"bogus": 1, ' + t.lstrip()[1:],
                               "bogus: unknown key"),
}


@pytest.mark.parametrize("how", SUMMARY_DAMAGES)
def test_a_damaged_summary_is_refused_before_the_search_and_keeps_its_sizes(
        capsys, tmp_path, solved, how):
    """OUT/summary.json, which every finished table size is merged into, damaged: one line
    naming it and the way out before any game; the sizes it holds are not replaced by a
    fresh file."""
    edit, says = SUMMARY_DAMAGES[how]
    out = tmp_path / "eq"
    shutil.copytree(solved, out)
    path = out / "summary.json"
    path.write_text(edit(path.read_text()))
    before = files(out)
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"fbsim: error: {path}: ") and says in err, err
    assert "run each table size it held again" in err, err
    assert files(out) == before


def test_a_file_in_a_table_sizes_place_is_refused_before_anything_is_written(
        capsys, tmp_path):
    out = tmp_path / "eq"
    out.mkdir()
    (out / "p3").write_text("x")
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / 'p3'}: a file is in the place of a folder" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["p3"]


def test_a_pending_audit_beyond_the_audits_asked_for_is_refused(capsys, tmp_path, solved):
    """(it was played: an audit the search, given --audits 0, would never start)"""
    out = tmp_path / "eq"

    def edit(d):
        d["audits"] = []
        d["pending"] = {"audit": 0, "seat": {}, "team": {}}

    path = damaged(solved, out, "p3/state.json", edit)
    tiny = [x if x != "1" or TINY[i - 1] != "--audits" else "0" for i, x in enumerate(TINY)]
    assert tiny[tiny.index("--audits") + 1] == "0"
    err = refused(capsys, out, path, "pending.audit", "equilibrium", "--out", out, *tiny)
    assert "give --audits 1 or more to finish it" in err


def test_a_file_of_the_users_own_in_a_fields_place_is_not_replaced(capsys, tmp_path, solved):
    out = tmp_path / "eq"
    shutil.copytree(solved, out)
    (out / "p3.toml").write_text("my own notes\n")
    before = files(out)
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / 'p3.toml'}: not a field file fbsim wrote" in err, err
    assert files(out) == before


def test_a_link_to_nothing_in_the_states_place_is_refused(capsys, tmp_path, solved):
    """(it was taken for no state: the search started over and replaced the link)"""
    out = tmp_path / "eq"
    shutil.copytree(solved, out)
    state = out / "p3" / "state.json"
    state.unlink()
    state.symlink_to(tmp_path / "nowhere.json")
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{state}: a link to nothing in the state's place" in err, err
    assert state.is_symlink() and not state.exists()


def test_the_tiny_search_resumes_as_it_was_undamaged(capsys, tmp_path, solved):
    """(The damages above are what is refused: the same folder undamaged resumes.)"""
    out = tmp_path / "eq"
    shutil.copytree(solved, out)
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 0, err
    assert files(out) == files(solved)


# a committed search whose searcher's departures were distilled six times
DISTILLED = ROOT / "results" / "equilibrium-distilled" / "p4" / "state.json"


def _first_change(d: dict) -> dict:
    return next(c for x in d["distillations"] for a in x["agendas"].values()
                for c in a["changes"])


DISTILLATION_DAMAGES = {
    "after no iteration": (lambda d: d["distillations"][0].update(after=0),
                           "distillations[0].after"),
    "not after the one before": (
        lambda d: d["distillations"][1].update(after=d["distillations"][0]["after"]),
        "distillations[1].after"),
    "of a field of another phase": (
        lambda d: d["distillations"][1].update(field_iteration=0),
        "distillations[1].field_iteration"),
    "a change of no band": (lambda d: _first_change(d).update(band="zz"), None),
    "its count of changes edited": (lambda d: d["distillations"][0].update(changed=999),
                                    "distillations[0].changed"),
    "the searcher's audit of no phase": (lambda d: d["searched"][0].update(phase=99),
                                         "searched[0].phase"),
}


@pytest.mark.parametrize("how", DISTILLATION_DAMAGES)
def test_a_damaged_distillation_is_refused_when_the_state_is_read(tmp_path, how):
    """A distillation's records (`State.distillations`) are checked as the search wrote
    them: each after iterations played and more than the one before, of a field of its own
    phase, its changes table cells there are, counted right."""
    doc = json.loads(DISTILLED.read_text())
    State.load(DISTILLED, doc["config"])  # (the committed state reads back)
    edit, key = DISTILLATION_DAMAGES[how]
    edit(doc)
    if key is None:
        key = next(f"distillations[{i}].agendas.{a}.changes[{j}].band"
                   for i, x in enumerate(doc["distillations"])
                   for a, r in x["agendas"].items()
                   for j, c in enumerate(r["changes"]) if c["band"] == "zz")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        State.load(path, doc["config"])
    assert f"{path}: {key}: " in str(e.value) and "--force" in str(e.value), str(e.value)


# ------------------------------------------------------------------ --distill


def test_distil_without_the_searchers_audit_is_refused_before_anything_is_written(
        capsys, tmp_path):
    """--distill distils the searcher's departures: with --searcher-games 0 it is refused in
    one line, exit 2, not ignored."""
    args = list(TINY)
    args[args.index("--searcher-games") + 1] = "0"
    out = tmp_path / "eq"
    code, _, err = run(capsys, "equilibrium", "--out", out, *args, "--distill", "3")
    assert code == 2 and err.count("\n") == 1, err
    assert "--distill 3" in err and "--searcher-games" in err, err
    assert not out.exists()  # (refused before the folder's lock)
    with pytest.raises(UsageError, match="--searcher-games"):
        run_equilibrium([3], tmp_path / "direct", budget=Budget(distill=3), searcher_games=0)
    assert not (tmp_path / "direct").exists()


def test_a_rules_search_spec_may_not_distil(tmp_path):
    """The rules search runs no searcher's audit: a budget that distils is refused with the
    spec, before any trial."""
    text = spec_text().replace("[budget.trial]\n", "[budget.trial]\ndistill = 1\n")
    with pytest.raises(SpecError, match=r"budget\.trial\.distill: expected 0"):
        rulebook_spec_from_dict(tomllib.loads(text), "spec")


# ------------------------------------------------------------------ trials.json


@pytest.fixture(scope="module")
def tuned(tmp_path_factory) -> Path:
    """A finished tiny rules search at 3 players: two trials (the rules unchanged, the
    spec's start), one finalist and the rules unchanged, re-solved and confirmed."""
    d = tmp_path_factory.mktemp("rulebook")
    (d / "spec.toml").write_text(spec_text(trials=2))
    code = main(["tune", "--equilibrium", "--target", str(d / "spec.toml"), "--out",
                 str(d / "out"), "-q"])
    assert code == 0
    return d


def _trial(d: dict, i: int) -> dict:
    return d["trials"][i]


TRIALS_DAMAGES = {
    "a loss as text": (lambda d: _trial(d, 0).update(loss="x"), "trials[0].loss"),
    "a loss NaN": (lambda d: _trial(d, 0).update(loss=NAN), "trials[0].loss"),
    "a negative loss": (lambda d: _trial(d, 1).update(loss=-5.0), "trials[1].loss"),
    "a loss not its table sizes'": (
        lambda d: _trial(d, 1).update(loss=_trial(d, 1)["loss"] / 2), "trials[1].loss"),
    "a param not the spec's": (lambda d: _trial(d, 1)["params"].update(zork=1),
                               "trials[1].params.zork"),
    "a param outside its range": (
        lambda d: _trial(d, 1)["params"].update({"dial.collapse": 9999}),
        "trials[1].params.dial.collapse"),
    "a fraction for a whole-number lever": (  # (the sampler would refuse it: a traceback)
        lambda d: _trial(d, 1)["params"].update({"dial.collapse": 594.5}),
        "trials[1].params.dial.collapse"),
    "a choice not the spec's": (
        lambda d: _trial(d, 1)["params"].update({"accusation.rounds": [1, 2]}),
        "trials[1].params.accusation.rounds"),
    "the first trial not the rules unchanged": (
        lambda d: _trial(d, 0)["params"].update({"dial.collapse": 700}),
        "trials[0].params.dial.collapse"),
    "a table size not the spec's": (lambda d: _trial(d, 0).update(sizes={"9": {}}),
                                    "trials[0].sizes.9"),
    "a table size missing": (lambda d: _trial(d, 0).update(sizes={}), "trials[0].sizes.3"),
    "a player's chance above 1": (
        lambda d: _trial(d, 0)["sizes"]["3"]["player_win_rate"].update(steward=1.5),
        "trials[0].sizes.3.player_win_rate.steward"),
    "a worst distance not its rates'": (
        lambda d: _trial(d, 0)["sizes"]["3"].update(worst=0.0), "trials[0].sizes.3.worst"),
    "a duplicate number": (lambda d: _trial(d, 1).update(number=0), "trials[1].number"),
    "a trial never played (no folder)": (
        lambda d: d["trials"].append(dict(_trial(d, 1), number=len(d["trials"]),
                                          folder=f"trials/{len(d['trials']):04d}")),
        "trials[2].folder"),
}


@pytest.mark.parametrize("how", TRIALS_DAMAGES)
def test_damaged_trials_are_refused_before_anything_is_written(capsys, tmp_path, tuned, how):
    """OUT/trials.json is checked whole when it is read, against the spec: types, finite
    numbers in their ranges (a loss from 0 to 1 plus one per band), the spec's params
    within their ranges (the first trial the rules unchanged), the spec's table sizes, the
    losses what the rates give, trials numbered in order; the finalists' folders are left
    as they were."""
    edit, key = TRIALS_DAMAGES[how]
    out = tmp_path / "out"
    path = damaged(tuned / "out", out, "trials.json", edit)
    refused(capsys, out, path, key, "tune", "--equilibrium", "--target", tuned / "spec.toml",
            "--out", out, "-q")


def _size(d: dict) -> dict:
    return d["sizes"]["3"]


CONFIRMED_DAMAGES = {
    "not JSON": (None, "final/00/confirmed.json: cannot be read"),
    "a player's chance as text": (
        lambda d: _size(d)["agendas"]["steward"].update(player_win_rate="x"),
        "sizes.3.agendas.steward.player_win_rate"),
    "an interval of one number": (
        lambda d: _size(d)["agendas"]["opportunist"].update(seat_gain_ci=[0.1]),
        "sizes.3.agendas.opportunist.seat_gain_ci"),
    "an interval reversed": (
        lambda d: _size(d)["agendas"]["steward"].update(
            player_win_ci=_size(d)["agendas"]["steward"]["player_win_ci"][::-1]),
        "sizes.3.agendas.steward.player_win_ci"),
    "a chance outside its interval": (
        lambda d: _size(d)["agendas"]["steward"].update(player_win_rate=1.0),
        "sizes.3.agendas.steward.player_win_rate"),
    "a gain NaN": (lambda d: _size(d)["agendas"]["accelerationist"].update(
        seat_deviation_gain=NAN), "sizes.3.agendas.accelerationist.seat_deviation_gain"),
    "an Agenda missing": (lambda d: _size(d)["agendas"].pop("steward"),
                          "sizes.3.agendas.steward"),
    "a table size not the spec's": (lambda d: d["sizes"].update({"9": {}}), "sizes.9"),
    "a loss not its rates'": (lambda d: _size(d).update(loss=0.0), "sizes.3.loss"),
    "meeting the target with reasons not to": (
        lambda d: _size(d).update(meets=True, why=["x"]), "sizes.3.meets"),
    "the finalist's loss not its sizes'": (lambda d: d.update(loss=d["loss"] / 2), "loss"),
    "games per range negative": (lambda d: d.update(confirm_games_per_range=-1),
                                 "confirm_games_per_range"),
}


@pytest.mark.parametrize("how", CONFIRMED_DAMAGES)
def test_a_damaged_confirmation_is_refused_before_anything_is_written(
        capsys, tmp_path, tuned, how):
    """A finalist's final/NN/confirmed.json (what saves re-playing its confirmation) is
    checked whole, by its schema and what ties its numbers, when the search starts: one
    line naming it, the key and the way out; nothing changed."""
    edit, key = CONFIRMED_DAMAGES[how]
    out = tmp_path / "out"
    name = "final/00/confirmed.json"
    if edit is None:
        shutil.copytree(tuned / "out", out)
        path = out / name
        path.write_text('{"sizes": ')
        before = files(out)
        code, _, err = run(capsys, "tune", "--equilibrium", "--target", tuned / "spec.toml",
                           "--out", out, "-q")
        assert code == 2 and err.count("\n") == 1 and key in err and "restore" in err, err
        assert files(out) == before
        return
    path = damaged(tuned / "out", out, name, edit)
    refused(capsys, out, path, key, "tune", "--equilibrium", "--target", tuned / "spec.toml",
            "--out", out, "-q")


def test_the_tiny_rules_search_resumes_as_it_was_undamaged(capsys, tmp_path, tuned):
    """(The damages above are what is refused: the same folder undamaged resumes.)"""
    out = tmp_path / "out"
    shutil.copytree(tuned / "out", out)
    code, _, err = run(capsys, "tune", "--equilibrium", "--target", tuned / "spec.toml",
                       "--out", out, "-q")
    assert code == 0, err
    for name in ("trials.json", "summary.json", "best_rules.toml", "final/00/params.json"):
        assert (out / name).read_bytes() == (tuned / "out" / name).read_bytes(), name
    import pandas as pd

    for name in ("trials.parquet", "finalists.parquet"):  # (their provenance has the time)
        again, first = pd.read_parquet(out / name), pd.read_parquet(tuned / "out" / name)
        assert list(again.columns) == list(first.columns), name  # (the spec's lever order)
        pd.testing.assert_frame_equal(again, first)


@pytest.mark.parametrize("link", ["nothing", "loop"])
def test_a_link_to_nothing_in_a_table_sizes_place_is_named_so(capsys, tmp_path, link):
    out = tmp_path / "eq"
    out.mkdir()
    if link == "loop":
        (out / "p3").symlink_to(out / "p3")
    else:
        (out / "p3").symlink_to(tmp_path / "missing")
    code, _, err = run(capsys, "equilibrium", "--out", out, *TINY)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / 'p3'}: a link to nothing is in the place of" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["p3"]
