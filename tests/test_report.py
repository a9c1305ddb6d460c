"""`fbsim report` and `fbsim.report(...)`: the balance page, its Parquet table, --against
diffs (identical rules show no difference, a real change is significant), exploitability
matched by rules hash, byte-reproducible output, and one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fbsim.cli import main
from fbsim.experiments.report import model as BR
from fbsim.experiments.report.page import render, trajectory
from fbsim.experiments.run import runner
from fbsim.experiments.run.provenance import read_provenance
from fbsim.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]
EXPLOIT = ROOT / "results" / "exploit"


@pytest.fixture(scope="module")
def single():
    return BR.report(games=4000, players=[3, 5], exploit_dir=None)


def test_report_has_every_metric_per_table_size_with_intervals(single):
    df = single.metrics
    assert sorted(df["players"].unique()) == [3, 5]
    for n in (3, 5):
        rows = df[df["players"] == n].set_index("metric")
        assert rows.loc[[f"win_{a}" for a in ("steward", "opportunist", "accelerationist")]
                        + ["everyone_loses"], "value"].sum() == pytest.approx(1.0)
        assert rows.loc[[f"band_{b}" for b in ("warming", "severe", "extreme", "collapse")],
                        "value"].sum() == pytest.approx(1.0)
        assert rows.loc[[f"win_place_{p}" for p in range(n)], "value"].sum() + rows.loc[
            "everyone_loses", "value"] == pytest.approx(1.0)
        ok = rows["value"].notna()
        assert (rows.loc[ok, "ci_low"] <= rows.loc[ok, "value"] + 1e-12).all()
        assert (rows.loc[ok, "value"] <= rows.loc[ok, "ci_high"] + 1e-12).all()
        # fair shares: each Agenda's share of seats dealt, 1/n per place
        assert rows.loc[[f"win_{a}" for a in ("steward", "opportunist", "accelerationist")],
                        "fair_share"].sum() == pytest.approx(1.0)
        assert rows.loc["win_place_0", "fair_share"] == pytest.approx(1 / n)
    assert len(single.verdict) >= 3
    # a balance claim names its field first
    assert single.verdict[0].startswith("Measured against the default bots")
    assert re.match(r"3 players: \w+ wins \d+\.\d% \(fair share \d+\.\d%\)", single.verdict[1])
    assert "world collapses in" in single.verdict[1]


def test_trajectory_starts_at_the_setup_dial_and_ends_at_the_final_dial(single):
    t = single.tables[0]
    q = trajectory(t.counts, t.rules)
    assert q.shape == (5, t.rules.rounds + 1)
    assert (q[:, 0] == t.rules.dial.start).all()
    rows = single.metrics[single.metrics["players"] == 3].set_index("metric")
    # the last round's histogram is the final Dial's (R-E1)
    assert (t.counts["dial_round_hist"][-1] == t.counts["dial_hist"]).all()
    assert q[0, -1] <= rows.loc["final_dial", "value"] <= q[4, -1]
    assert (q[0] <= q[2]).all() and (q[2] <= q[4]).all()


def test_report_against_the_same_rules_finds_no_difference(tmp_path):
    same = tmp_path / "same.toml"
    same.write_text("masks = 2\n")
    rep = BR.report(rules=same, against=same, games=3000, players=[4], exploit_dir=None)
    df = rep.metrics
    assert df["identical"].all() and not df["significant"].any()
    assert "same result in every game" in rep.verdict[-1]
    # a rate that no game changed still has a real interval (about +-3.84/n), never [0, 0]
    win = df[df["metric"] == "win_steward"].iloc[0]
    assert win["changed_games"] == 0 and win["diff_ci_low"] < 0 < win["diff_ci_high"]


def test_a_bot_parameter_of_an_absent_bot_is_refused_before_any_game():
    # a bot parameter is not a rule, and no lineup entry plays tunable: it would change
    # nothing, every metric identical; refused, naming the key
    from fbsim.errors import UsageError

    with pytest.raises(UsageError, match=r"^bots\.tunable\.aim: no entry of the lineup"):
        BR.report(games=2000, players=[4], against_sets=["bots.tunable.aim=500"],
                  exploit_dir=None)


def test_a_bot_parameter_of_a_seated_bot_changes_the_lineup():
    rep = BR.report(games=2000, players=[4], against_sets=["bots.fog-grabber.greed=0"],
                    exploit_dir=None)
    p = rep.provenance
    assert p["rules_hash"] == p["old_rules_hash"]
    assert p["lineup_hash"] != p["old_lineup_hash"]
    assert p["old_lineup"].endswith("accelerationist=fog-grabber:greed=0")
    assert not rep.metrics["identical"].all()


def test_a_real_change_is_significant_and_paired():
    rep = BR.report(games=6000, players=[4], against_sets=["masks=1"], exploit_dir=None)
    rows = rep.metrics.set_index("metric")
    acc = rows.loc["win_accelerationist"]
    assert acc["significant"] and acc["diff_ci_low"] > 0
    assert acc["diff"] == pytest.approx(acc["value"] - acc["old_value"])
    # paired: the interval of the difference is narrower than two independent runs' would be
    half = (acc["diff_ci_high"] - acc["diff_ci_low"]) / 2
    indep = 1.96 * ((acc["value"] * (1 - acc["value"]) + acc["old_value"]
                     * (1 - acc["old_value"])) / 6000) ** 0.5
    assert half < indep / 1.5
    # Holm: adjusted p-values are never below the raw ones
    tested = rep.metrics.dropna(subset=["p_holm"])
    assert (tested["p_holm"] >= tested["p_value"]).all()
    # identical metrics (no game changed) leave the family
    assert rep.metrics.loc[rep.metrics["identical"], "p_holm"].isna().all()
    assert (rep.metrics.loc[rep.metrics["kind"] == "rate", "changed_games"] >= 0).all()
    html = render(rep)
    assert "significant" in html and "&rarr;" in html


def test_tables_do_not_depend_on_the_block_size(monkeypatch):
    a = BR.report(games=2500, players=[4], against_sets=["masks=1"], exploit_dir=None)
    monkeypatch.setattr(runner, "BLOCK", 700)
    b = BR.report(games=2500, players=[4], against_sets=["masks=1"], exploit_dir=None)
    pd.testing.assert_frame_equal(a.metrics, b.metrics)


def test_exploitability_is_matched_by_rules_hash():
    from fbsim.rules import load_rules

    default = [load_rules(sets=[f"players={n}"]) for n in (3, 4, 5, 6)]
    found = BR.find_exploit(EXPLOIT, default)
    assert found is not None and len(found) == 12
    assert set(found["players"]) == {3, 4, 5, 6}
    assert (found["best_rate"] > found["field_rate"]).all()
    changed = [load_rules(sets=[f"players={n}", "masks=3"]) for n in (3, 4, 5, 6)]
    assert BR.find_exploit(EXPLOIT, changed) is None
    assert BR.find_exploit(ROOT / "no-such-folder", default) is None


def test_the_largest_exploit_is_played_again_on_fresh_games():
    """The report's exploitability figure is the largest found gain re-measured on a fresh
    seed, not the largest of the confirmed figures (selection bias)."""
    rep = BR.report(games=3000, players=[4], exploit_dir=EXPLOIT)
    c = rep.exploit_check
    top = rep.exploit.loc[rep.exploit["diff"].idxmax()]
    assert (c["players"], c["agenda"]) == (4, top["agenda"]) and c["of"] == len(rep.exploit)
    assert c["found_diff"] == top["diff"] and c["games"] == 3000
    assert c["seed"] not in (0, 90_000)  # neither the report's games nor the confirmation's
    assert c["diff"] == pytest.approx(c["best_rate"] - c["field_rate"])
    assert c["diff_ci_low"] < c["diff"] < c["diff_ci_high"]
    assert c["diff_ci_low"] > 0  # the found best response still gains on new games
    assert "played again on 3,000 fresh games" in rep.verdict[-1]
    assert rep.provenance["largest_exploit_check"] == c
    # the same best response replayed with the field's own parameters gains nothing
    from fbsim.experiments.search.exploit import PRESETS, recheck_gain

    rules = rep.tables[0].rules
    same = recheck_gain(rules, "steward", None, PRESETS["steward"], 2000, 5)
    assert abs(same["diff"]) < abs(c["diff"])


def test_a_largest_exploit_that_cannot_be_played_again_is_said_so(tmp_path):
    """A best response whose field file is gone: the report still comes out, and says the
    largest gain was not checked (and why) instead of quoting it as measured."""
    import shutil

    src = EXPLOIT / "opportunist-p5"
    folder = tmp_path / "exploit"
    shutil.copytree(src, folder / "opportunist-p5")
    from fbsim.experiments.run.provenance import read_provenance, write_table

    search = folder / "opportunist-p5" / "search.parquet"
    prov = read_provenance(search)
    from fbsim.lineup import Lineup, lineup_hash

    # searched against a field file that played the default bots and is gone since
    write_table(pd.read_parquet(search), search, {**prov, "field": str(tmp_path / "gone.toml"),
                                                  "field_lineup_hash": lineup_hash(Lineup())})
    rep = BR.report(games=500, players=[5], exploit_dir=folder)
    assert "gone.toml" in rep.exploit_check["unchecked"]
    assert "could not be played again" in rep.verdict[-1]
    assert "played again on" not in render(rep)


def test_best_responses_against_another_field_are_not_shown(tmp_path):
    """A best response is shown only beside the field it was searched against: one found
    against the default bots says nothing of an equilibrium field, and the other way round."""
    import shutil

    folder = tmp_path / "exploit"
    shutil.copytree(EXPLOIT / "opportunist-p5", folder / "opportunist-p5")
    field = "results/equilibrium/p{players}.toml"
    assert BR.find_exploit(folder, [load_rules(players=5)]) is not None
    from fbsim.lineup import Lineup, parse_lineup

    assert BR.find_exploit(folder, [load_rules(players=5)], {5: Lineup()}) is not None
    assert BR.find_exploit(folder, [load_rules(players=5)],
                           {5: parse_lineup(field, players=5)}) is None
    rep = BR.report(games=500, players=[5], exploit_dir=folder, lineup=field)
    assert rep.exploit is None


@pytest.mark.slow  # (5-11 s)
def test_cli_writes_a_self_contained_page_and_its_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = tmp_path / "r.html"
    args = ["report", "--games", "3000", "--players", "3,4", "--out", str(out), "--quiet",
            "--exploit", str(EXPLOIT)]
    assert main(args) == 0
    text = out.read_text()
    said = capsys.readouterr().out
    assert said.startswith("Measured against the default bots: ") and "wrote" in said
    assert "\n3 players: " in said
    assert text.startswith("<!DOCTYPE html>") and "<title>Firebreak balance report" in text
    assert "played by the default bots</title>" in text
    imgs = re.findall(r'<img src="([^"]+)"', text)
    assert len(imgs) >= 7 and all(s.startswith("data:image/png;base64,") for s in imgs)
    assert not re.search(r'(src|href)="(https?:|//|file:)', text)  # nothing to fetch
    assert "Best responses found by" in text  # the committed exploit results match
    table = pd.read_parquet(out.with_suffix(".parquet"))
    assert set(table["players"]) == {3, 4}
    prov = read_provenance(out.with_suffix(".parquet"))
    assert prov["kind"] == "balance report" and prov["games"] == 3000
    # the page names its run as the table's provenance does (a reader can check the pair)
    assert f"{prov['time']}." in text and prov["rules_hash"]["3"] in text
    # the same inputs give the same bytes
    first = out.read_bytes()
    assert main(args) == 0
    assert out.read_bytes() == first


def test_cli_against_writes_a_diff_page(tmp_path, capsys):
    old = tmp_path / "old.toml"
    old.write_text("masks = 1\n")
    out = tmp_path / "diff.html"
    assert main(["report", "--against", str(old), "--games", "3000", "--players", "4",
                 "--out", str(out), "--quiet", "--exploit", "none"]) == 0
    text = out.read_text()
    assert "What changed" in text and "Holm" in text
    assert "No <code>fbsim exploit</code> result was found" in text
    df = pd.read_parquet(out.with_suffix(".parquet"))
    assert {"old_value", "diff", "p_holm", "significant"} <= set(df.columns)


@pytest.mark.parametrize("args, message", [
    (["--against", "missing.toml"], "--against missing.toml: no such file"),
    (["--players", "2..4"], "--players: table sizes are 3 to 6, got 2"),
    (["--games", "1"], "--games: at least 2 games"),
    (["--set", "masx=3"], "masx: unknown key"),
    (["--against-set", "masks=-1"], "masks"),
    (["--out", "report.txt"], "expected an .html file"),
    (["--out", "no/such/dir/r.html"], "does not exist"),
])
def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, args,
                                                      message):
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--games", "100", "--quiet", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fbsim: error: ") and message in err and "\n" not in err
    assert not list(tmp_path.glob("*.html")) and not list(tmp_path.glob("*.parquet"))


def test_an_interrupted_report_resumes_the_table_sizes_it_finished(tmp_path, monkeypatch):
    keep = tmp_path / "parts"
    want = BR.report(games=1500, players=[3, 4], against_sets=["masks=1"], exploit_dir=None)
    real, calls = runner.start, []

    def stop_at_4(arm, *args):
        calls.append(arm.rules.players)
        if arm.rules.players == 4:
            raise KeyboardInterrupt
        return real(arm, *args)

    monkeypatch.setattr(runner, "start", stop_at_4)
    with pytest.raises(KeyboardInterrupt):
        BR.report(games=1500, players=[3, 4], against_sets=["masks=1"], exploit_dir=None,
                  resume=keep)
    assert len(list(keep.glob("p3-*.npz"))) == 1 and not list(keep.glob("p4-*"))
    monkeypatch.setattr(runner, "start", lambda arm, *a: (calls.append(arm.rules.players),
                                                         real(arm, *a))[1])
    calls.clear()
    said = []
    got = BR.report(games=1500, players=[3, 4], against_sets=["masks=1"], exploit_dir=None,
                    resume=keep, echo=said.append)
    assert set(calls) == {4}  # the 3-player table was not played again
    assert said == ["resuming: 1 of 2 table sizes already played"]
    pd.testing.assert_frame_equal(got.metrics, want.metrics)
    for a, b in zip(got.tables, want.tables, strict=True):
        for k in a.counts:
            assert np.array_equal(a.counts[k], b.counts[k]), k
    # other inputs do not reuse it
    calls.clear()
    BR.report(games=1500, players=[3], exploit_dir=None, resume=keep)
    assert calls == [3]
    BR.clear_resume(keep)
    assert not keep.exists()
