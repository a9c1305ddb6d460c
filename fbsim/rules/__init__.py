"""The rules configuration: every number and table of RULES.md.

- `schema`: the frozen dataclasses (`Rules()` is the rulebook as written, with the D1-D9
  defaults) and `rules_hash`, which identifies the effective rules in every output;
- `load`: `load_rules(file, sets)` reads a partial TOML file and `--set path=value`
  overrides on top of the defaults and validates everything before anything runs;
- `toml`: `rules_to_toml` prints the effective rules with a comment per key;
- `vector`: `rules_vector` packs them for one table size into the int64 vector that the bots
  and the kernel read (layout in `fbsim.game.layout`).
"""

from fbsim.rules.load import load_rules, nest, parse_set, rules_from_toml, validate_dict
from fbsim.rules.schema import (
    RULES_VERSION,
    Accusation,
    Agendas,
    Asset,
    Baseline,
    Deck,
    Decks,
    Dial,
    Fog,
    Jobs,
    Market,
    Rules,
    Scoring,
    Tipping,
    rules_hash,
    to_dict,
)
from fbsim.rules.toml import rules_to_toml
from fbsim.rules.vector import VECTOR_SPECIAL, rules_vector

__all__ = [
    "Rules", "Asset", "Deck", "Decks", "Dial", "Tipping", "Baseline", "Jobs", "Fog", "Market",
    "Accusation", "Scoring", "Agendas", "load_rules", "rules_from_toml", "validate_dict",
    "rules_to_toml", "rules_hash", "rules_vector", "VECTOR_SPECIAL", "to_dict", "parse_set",
    "nest", "RULES_VERSION",
]
