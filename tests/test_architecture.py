"""The package's layout holds its architecture: no import cycles, no private names imported
across modules, no folder holding more than a quarter of the code.

Imports are read from the source (every `import` and `from ... import`, at module level or
inside functions: a deferred import is still a dependency). A package's `__init__` counts as
a module of its own; importing a submodule does not count as importing its parent package.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "fbsim"
MAX_FOLDER_SHARE = 0.25


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(mod: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(mods: dict[str, Path]):
    """(importer, imported module, names taken from it, line) for every fbsim import."""
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "fbsim":
                        yield mod, a.name, (), node.lineno
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, path, node)
                if target.split(".")[0] != "fbsim":
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in mods:  # `from pkg import submodule`
                        yield mod, sub, (), node.lineno
                    else:
                        yield mod, target, (a.name,), node.lineno


def graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    g: dict[str, set[str]] = defaultdict(set)
    for src, dst, _, _ in imports(mods):
        if dst in mods and dst != src:
            g[src].add(dst)
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(g) | {w for ws in g.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def private_imports(mods: dict[str, Path]) -> list[str]:
    """`from other import _name`, and `alias._name` on a module imported from fbsim."""
    bad = [f"{src}:{line} imports {dst}.{n}" for src, dst, names, line in imports(mods)
           for n in names if n.startswith("_") and not n.startswith("__") and dst != src]
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(mod, path, node)
                for a in node.names:
                    if f"{target}.{a.name}" in mods:
                        aliases[a.asname or a.name] = f"{target}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("fbsim") and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{mod}:{node.lineno} reads {aliases[node.value.id]}.{node.attr}")
    return bad


def folder_lines() -> dict[Path, int]:
    out: dict[Path, int] = defaultdict(int)
    for p in ROOT.rglob("*.py"):
        out[p.parent] += len(p.read_text().splitlines())
    return out


# ------------------------------------------------------------------------------ the checks


def test_no_import_cycles():
    found = cycles(graph(modules()))
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_private_names_across_modules():
    found = private_imports(modules())
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_no_folder_holds_more_than_a_quarter_of_the_code():
    lines = folder_lines()
    total = sum(lines.values())
    big = {str(d.relative_to(ROOT.parent)): n for d, n in lines.items()
           if n > MAX_FOLDER_SHARE * total}
    assert not big, f"folders over {MAX_FOLDER_SHARE:.0%} of {total} lines: {big}"


# ------------------------------------------------------------------ the checks can fail


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("source, expected", [
    ("from fbsim.game.layout import _hidden\n", 1),
    ("from fbsim.game import layout as L\nx = L._hidden\n", 1),
    ("from fbsim.game.layout import R_SIZE\n", 0),
])
def test_private_import_check_can_fail(tmp_path, monkeypatch, source, expected):
    pkg = tmp_path / "fbsim"
    (pkg / "game").mkdir(parents=True)
    for f in ("__init__.py", "game/__init__.py", "game/layout.py"):
        (pkg / f).write_text("")
    (pkg / "user.py").write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", pkg)
    assert len(private_imports(modules())) == expected


# R-I2: a bot reads its own private fields through `fbsim.game.public.mine`, never by indexing
# the view's private section (which, in the kernel, holds every seat's slot)
PRIVATE_NAMES = ("PRIVATE", "V_PRIVATE_START")


def private_indexing(source: str) -> list[int]:
    """Lines of `source` that index an array with a private field of the view (V_MY_*,
    PRIVATE, V_PRIVATE_START) other than through `mine`."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            names = {n.attr if isinstance(n, ast.Attribute) else n.id
                     for n in ast.walk(node.slice) if isinstance(n, (ast.Attribute, ast.Name))}
            if any(n.startswith("V_MY_") or n in PRIVATE_NAMES for n in names):
                bad.append(node.lineno)
    return bad


def test_R_I2_bots_read_their_private_fields_only_through_mine():
    files = sorted((ROOT / "policies").glob("*.py")) + [ROOT / "game" / "legal.py"]
    found = {f.name: private_indexing(f.read_text()) for f in files}
    assert not {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("source,expected", [
    ("x = V[L.V_MY_CAPITAL]", [1]),
    ("x = V[L.V_MY_CAPITAL + V[L.V_SEAT]]", [1]),
    ("x = V[L.PRIVATE[2] + 1]", [1]),
    ("x = V[L.V_PRIVATE_START + 3]", [1]),
    ("x = mine(V, L.V_MY_CAPITAL) + V[L.V_DIAL]", []),
])
def test_private_indexing_check_can_fail(source, expected):
    assert private_indexing(source) == expected


def test_every_bots_parameter_indices_follow_its_declarations():
    """A bot's compiled code reads its parameters at `P_<NAME>`: each such constant is the
    place of the parameter `<name>` among the bot's declared `Param`s (`param_index`), so that
    inserting a parameter cannot shift another's reads."""
    import importlib

    from fbsim.policies import registry

    checked = 0
    for spec in registry().values():
        module = importlib.import_module(spec.commit.py_func.__module__
                                         if hasattr(spec.commit, "py_func")
                                         else spec.commit.__module__)
        names = [p.name for p in spec.params]
        for const, value in vars(module).items():
            if const.startswith("P_") and isinstance(value, int) and getattr(
                    module, "PARAMS", None) is spec.params:
                assert names[value] == const[2:].lower(), (module.__name__, const, value)
                checked += 1
    assert checked >= 45


def test_the_kernel_and_the_game_generate_no_source():
    """One way to specialise the kernel: a build is a numba type (`fbsim.kernel.buildtype`);
    no module of the kernel or the game writes, splices or imports generated source."""
    for folder in ("kernel", "game"):
        for path in sorted((ROOT / folder).glob("*.py")):
            text = path.read_text()
            for marker in ("generated_module", "build:begin", "exec(", "compile("):
                assert marker not in text, (path.name, marker)


# Named state: the vectors' fields are declared once by name (`fbsim.game.layout.Fields`); a
# field of two indices is indexed through its one accessor (`asset_at`, `owned_at`,
# `points_at`), so no other code multiplies an index by a stride.
STRIDES = ("MAX_PLAYERS", "MAX_KINDS", "MAX_ROUNDS", "MAX_TOKENS", "MAX_MARKET", "ASSET_STRIDE",
           "P6")


def strided_indexing(source: str) -> list[int]:
    """Lines of `source` that index an array with a product involving a layout bound."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            for op in ast.walk(node.slice):
                if isinstance(op, ast.BinOp) and isinstance(op.op, ast.Mult):
                    names = {n.attr if isinstance(n, ast.Attribute) else n.id
                             for n in ast.walk(op) if isinstance(n, (ast.Attribute, ast.Name))}
                    if names & set(STRIDES):
                        bad.append(node.lineno)
                        break
    return bad


def test_no_code_computes_a_stride_into_a_layout_by_hand():
    found = {str(p.relative_to(ROOT)): strided_indexing(p.read_text())
             for p in sorted(ROOT.rglob("*.py")) if p != ROOT / "game" / "layout.py"}
    assert not {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("source,expected", [
    ("x = V[L.V_OWNED + s * L.MAX_KINDS + k]", [1]),
    ("x = R[L.R_ASSET + k * L.ASSET_STRIDE + f]", [1]),
    ("x = V[L.owned_at(s, k)] + W[S_BOT + s] + V[2 * i]", []),
])
def test_stride_check_can_fail(source, expected):
    assert strided_indexing(source) == expected
