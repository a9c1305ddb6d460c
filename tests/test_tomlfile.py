"""Every TOML file fbsim reads (rules, lineup, sweep spec, script) fails on a bad file with
one line naming the file and what is wrong, and a non-zero exit: bytes that are not UTF-8,
text that is not TOML (and, in `read_toml` itself, a folder)."""

from __future__ import annotations

import pytest

from fbsim.cli import main
from fbsim.errors import UsageError
from fbsim.tomlfile import read_toml


def test_read_toml_names_what_is_wrong(tmp_path):
    def fail(message):
        raise UsageError(message)

    (tmp_path / "ok.toml").write_text("a = 1\n")
    assert read_toml(tmp_path / "ok.toml", fail) == {"a": 1}
    for path, message in [(tmp_path, "it is a folder"), (tmp_path / "missing.toml",
                                                         "cannot read"),
                          *bad_files(tmp_path)]:
        with pytest.raises(UsageError, match=message):
            read_toml(path, fail)


def bad_files(tmp_path):
    latin = tmp_path / "latin1.toml"
    latin.write_bytes("masks = 2 # caf\xe9\n".encode("latin-1"))
    broken = tmp_path / "broken.toml"
    broken.write_text("masks = [1, 2\n")
    return [(latin, "not UTF-8 text"), (broken, "not valid TOML")]


@pytest.mark.parametrize("command", [
    ["rules", "--rules"],
    ["replay", "--lineup"],
    ["sweep", "--games", "10", "--out", "{out}"],
    ["replay", "--script"],
])
def test_a_bad_toml_file_is_one_line_and_a_nonzero_exit(capsys, tmp_path, command):
    for path, message in bad_files(tmp_path):
        args = [a.replace("{out}", str(tmp_path / "out")) for a in command] + [str(path)]
        if command[0] == "sweep":
            args = ["sweep", str(path)] + args[1:-1]
        code = main(args)
        err = capsys.readouterr().err.strip()
        assert code != 0, args
        assert err.startswith("fbsim: error: ") and "\n" not in err, err
        assert message in err and path.name in err, err
