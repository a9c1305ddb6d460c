"""Narrate a game from its event log, in plain words, step by step.

The narrator is omniscient: it shows what the table sees (open chips with owners, the Fog
pool's totals) and, marked "hidden", what only one player knows (masked chips' owners,
Capital, Fog claims).
"""

from __future__ import annotations

from collections.abc import Iterable

from fbsim.reference.record import GameRecord
from fbsim.rules import Rules, rules_hash


def _who(x) -> str:
    if x == "bank":
        return "the bank"
    if x == "pot":
        return "the Fog pot"
    return f"seat {x}"


def _signed(n: int) -> str:
    return f"+{n}" if n >= 0 else str(n)


def narrate(record: GameRecord, rules: Rules, title: str | None = None) -> str:
    return "\n".join(narrate_lines(record, rules, title)) + "\n"


def narrate_lines(record: GameRecord, rules: Rules, title: str | None = None) -> Iterable[str]:
    if record.events is None:
        raise ValueError("narration needs the event log (play with events=True)")
    names = rules.asset_names
    capital = [0] * record.players
    pot = 0
    head = title or f"Firebreak, {record.players} players, seed {record.seed}, game " \
                    f"{record.game}"
    yield f"{head} (rules {rules_hash(rules)})"
    step = None
    dial_parts: list[str] = []
    dial_from = [0]

    def flush_dial():
        nonlocal dial_parts
        line = f"    Dial {dial_from[0]} " + " ".join(dial_parts) + f" = {dial_now[0]} ppm"
        dial_parts = []
        return line

    dial_now = [0]

    headers = {"world": "World turn:", "commit": "Commit (secret, simultaneous):",
               "reveal": "Reveal and resolve:",
               "fog": "Fog claims (secret, paid in order from the first player):",
               "market": "Market turns (in order from the first player):",
               "accusation": "Accusation (everyone points at once):"}
    for e in record.events:
        d = e.data
        if e.kind != "dial" and dial_parts:
            yield flush_dial()
        if e.kind == "claim" and d["requested"] == 0:
            continue  # nothing asked, nothing to tell
        if e.kind == "round":
            step = None
            yield ""
            yield f"Round {e.round} (first player: seat {d['first_player']})"
            continue
        if e.step != step and e.step in headers:
            step = e.step
            yield "  " + headers[step]
        if e.kind == "setup":
            yield (f"Setup: the Dial reads {d['dial']} ppm. First player: seat "
                   f"{d['first_player']}.")
            yield "  Market: " + ", ".join(names[k] for k in d["market"]) + \
                  f" ({d['deck_left']} cards left in the deck)."
            for s, (a, b) in enumerate(zip(d["agendas"], d["bots"], strict=True)):
                yield f"  seat {s}: {a} (hidden), played by the {b} bot"
        elif e.kind == "transfer":
            src, dst, amt = d["src"], d["dst"], d["amount"]
            if isinstance(src, int):
                capital[src] -= amt
            if isinstance(dst, int):
                capital[dst] += amt
            if src == "pot":
                pot -= amt
            if dst == "pot":
                pot += amt
            if e.step == "setup":
                yield f"  seat {dst} takes {amt} Capital ({d['why']}, hidden)"
                continue
            note = ""
            if isinstance(dst, int):
                note = f" -> seat {dst} holds {capital[dst]}"
            elif isinstance(src, int):
                note = f" -> seat {src} holds {capital[src]}"
            if dst == "pot" or src == "pot":
                note += f"; the pot holds {pot}"
            yield f"    {_who(src)} pays {_who(dst)} {amt}: {d['why']}{note}"
        elif e.kind == "dial":
            if not dial_parts:
                dial_from[0] = d["dial"] - d["delta"]
            dial_now[0] = d["dial"]
            dial_parts.append(f"{_signed(d['delta'])} ({d['cause']})")
        elif e.kind == "flip":
            yield (f"    Tipping token {d['token']} flips at {d['dial']} ppm (threshold "
                   f"{d['threshold']}); its penalty applies from the next world turn")
        elif e.kind == "collapse":
            yield f"    The Dial reads {d['dial']} ppm: COLLAPSE. The game ends at once."
        elif e.kind == "commit":
            masked = []
            if d["masked_cool"]:
                masked.append(f"{d['masked_cool']} COOL masked")
            if d["masked_burn"]:
                masked.append(f"{d['masked_burn']} BURN masked")
            extra = f" ({', '.join(masked)})" if masked else ""
            yield (f"    seat {d['seat']}: {d['works']} WORKS, {d['cool']} COOL, "
                   f"{d['burn']} BURN{extra}")
        elif e.kind == "reveal" and e.step == "reveal":
            for s, (w, c, b) in enumerate(d["open"]):
                yield f"    seat {s} shows {w} WORKS, {c} COOL, {b} BURN"
            yield (f"    Fog pool: {d['fog_cool']} COOL, {d['fog_burn']} BURN "
                   "(no owners shown)")
        elif e.kind == "claim":
            yield (f"    seat {d['seat']} requests {d['requested']} and receives "
                   f"{d['received']} (the pot held {d['pot_before']})")
        elif e.kind == "buy":
            refill = d["refill"] or "nothing (deck empty)"
            yield (f"    seat {d['seat']} buys a {d['asset']} from slot {d['slot']} for "
                   f"{d['price']} and {d['labour']} WORKS; the market refills with {refill}")
        elif e.kind == "point":
            if d["target"] < 0:
                yield f"    seat {d['seat']} abstains"
            else:
                yield (f"    seat {d['seat']} points at seat {d['target']} (weight "
                       f"{d['weight']})")
        elif e.kind == "cornered":
            if d["seat"] < 0:
                yield "    Nobody is cornered (a tie, or no points)."
            else:
                yield (f"    seat {d['seat']} is cornered (weight {d['weight']}); staying "
                       f"hidden costs {d['cost']}")
        elif e.kind == "reveal" and e.step == "accusation":
            forced = " (cannot pay, must reveal)" if d["forced"] else ""
            yield f"    seat {d['seat']} reveals: {d['agenda']}{forced}"
        elif e.kind == "pay":
            yield f"    seat {d['seat']} pays {d['cost']} to stay hidden"
        elif e.kind == "legacy":
            if step != "end":
                step = "end"
                yield ""
                yield (f"End after round {record.rounds_played}: the Dial reads "
                       f"{record.final_dial} ppm ({record.band}).")
            yield (f"  seat {d['seat']} ({record.seats[d['seat']].agenda}): Legacy "
                   f"{d['total']} = {d['capital']} from Capital + {d['assets']} from assets "
                   f"{_signed(d['chips'])} from chips {_signed(d['agenda'])} Agenda bonus")
        elif e.kind == "collapse-result":
            yield ""
            yield (f"End in Collapse after round {record.rounds_played}: the Dial reads "
                   f"{record.final_dial} ppm.")
            for s in record.seats:
                yield f"  seat {s.seat} ({s.agenda}): {s.capital} Capital"
            if d["winner"] >= 0:
                yield (f"Winner: seat {d['winner']}, the richest qualified "
                       "Accelerationist.")
            else:
                yield "No Accelerationist holds enough Capital: everyone loses."
        elif e.kind == "survival-result":
            yield f"Winner: seat {d['winner']} ({record.seats[d['winner']].agenda})."
    if dial_parts:
        yield flush_dial()
