"""Writing rules as TOML: the effective rules with a comment per key (round-trips exactly
through `fbsim.rules.load`), or compact for tables' provenance."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from fbsim.rules.schema import RULES_VERSION, Rules, rules_hash


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(v)


def _toml_key(k: str) -> str:
    return k if all(c.isalnum() or c in "-_" for c in k) else json.dumps(k)


def rules_to_toml(rules: Rules, comments: bool = True) -> str:
    """The effective rules as TOML, with a short comment per key (round-trips exactly);
    `comments=False` gives the compact form stored in tables' provenance."""
    lines = [f"# Firebreak rules for fbsim (rules version {RULES_VERSION}, hash "
             f"{rules_hash(rules)})", "# Rule IDs refer to RULES.md.", ""]

    def scalars(obj, prefix=""):
        width = max((len(f.name) for f in fields(obj)), default=0)
        for f in fields(obj):
            v = getattr(obj, f.name)
            if is_dataclass(v) or isinstance(v, dict):
                continue
            text = f"{_toml_key(f.name)} = {_toml_value(v)}"
            lines.append(f"{text:<{max(width + 14, len(text) + 1)}} # {f.metadata['help']}")

    scalars(rules)
    for f in fields(rules):
        v = getattr(rules, f.name)
        if is_dataclass(v):
            nested = [g for g in fields(v) if is_dataclass(getattr(v, g.name))]
            if nested:
                for g in nested:
                    lines += ["", f"[{f.name}.{g.name}]  # {g.metadata['help']}"]
                    scalars(getattr(v, g.name))
            else:
                lines += ["", f"[{f.name}]"]
                scalars(v)
        elif f.name == "assets":
            for name, a in v.items():
                lines += ["", f"[assets.{_toml_key(name)}]  # D3"]
                scalars(a)
    if not comments:
        lines = [ln.split(" # ", 1)[0].rstrip() if " # " in ln else ln for ln in lines
                 if not ln.startswith("#")]
        lines = [ln.split("  # ", 1)[0] for ln in lines if ln]
    return "\n".join(lines) + "\n"
