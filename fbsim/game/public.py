"""Public information: what anyone at the table may compute from the rules vector and a
player's view (RULES.md section I). Shared by both engines and the bots (compiled, also valid
plain Python)."""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared

NO_THRESHOLD = 1 << 62  # above any Dial


@shared
def asset_field(R, kind, f):
    return R[L.asset_at(kind, f)]


@shared
def owned(V, seat, kind):
    return V[L.owned_at(seat, kind)]


@shared
def mine(V, field):
    """The deciding player's own private field (R-I2): `field` is a `V_MY_*` index, which
    holds one slot per seat (`fbsim.game.layout`)."""
    return V[field + V[L.V_SEAT]]


@shared
def memo(V):
    """The word the deciding player's bot kept for this game (`V_MY_MEMO`; NO_MEMO until it
    keeps one). A bot keeps only what it derives from its own view and parameters and what
    stays the same for the whole game, so a memo changes how often the bot computes it,
    never an answer: the reference engine, which builds a fresh view for every decision,
    starts every view at NO_MEMO (the engines' records agree game for game)."""
    return V[L.V_MY_MEMO + V[L.V_SEAT]]


@shared
def keep_memo(V, value):
    """Keep `value` as the deciding player's memo for the rest of the game (`memo`)."""
    V[L.V_MY_MEMO + V[L.V_SEAT]] = value


@shared
def my_burn_pay(R, V):
    """R-V3/R-A5: what one open BURN pays the deciding player."""
    if V[L.V_REVEALED_AGENDA + V[L.V_SEAT]] == L.ACCELERATIONIST:
        return R[L.R_BURN_PAY_REVEALED]
    return R[L.R_BURN_PAY]


@shared
def table_asset_ppm(R, V):
    """Ongoing ppm of every owned asset at the table (R-W2), public (the view holds it as
    V_TABLE_PPM)."""
    total = 0
    for s in range(shape.players(R)):
        for k in range(shape.n_kinds(R)):
            total += owned(V, s, k) * asset_field(R, k, L.A_PPM)
    return total


@shared
def flips(R, dial, threshold):
    """R-W3: whether the Dial at `dial` flips an unflipped token of this threshold: once it
    reaches it (>=, `tipping.flip_when = "reaching"`) or only once it is above it (>,
    "crossing")."""
    if R[L.R_FLIP_WHEN] == L.FLIP_CROSSING:
        return dial > threshold
    return dial >= threshold


@shared
def project_world(R, V):
    """The Dial after the remaining world turns if nobody commits another chip.

    Uses only public information: baselines, flipped tokens (flipping more as the
    projection crosses their thresholds, R-W3) and the ppm of owned assets.
    """
    dial = V[L.V_DIAL]
    n_tokens = shape.n_tokens(R)
    flipped = 0  # bit t: token t is flipped (no allocation: this runs in the kernel's loop)
    n_flipped = 0
    lowest = NO_THRESHOLD  # the lowest threshold of a token not flipped yet
    for t in range(n_tokens):
        if V[L.V_FLIPPED + t] == 1:
            flipped |= 1 << t
            n_flipped += 1
        elif R[L.R_TOKEN_THRESHOLD + t] < lowest:
            lowest = R[L.R_TOKEN_THRESHOLD + t]
    ppm = V[L.V_TABLE_PPM]
    for r in range(V[L.V_ROUND], shape.rounds(R)):  # world turns of rounds round+1 .. last
        dial += R[L.R_BASELINE + r] + R[L.R_BASELINE_OFFSET]
        dial += n_flipped * R[L.R_TOKEN_PENALTY] + ppm
        if flips(R, dial, lowest):  # some token flips: flip each one, find the next lowest
            lowest = NO_THRESHOLD
            for t in range(n_tokens):
                if (flipped >> t) & 1 == 0:
                    if flips(R, dial, R[L.R_TOKEN_THRESHOLD + t]):
                        flipped |= 1 << t
                        n_flipped += 1
                    elif R[L.R_TOKEN_THRESHOLD + t] < lowest:
                        lowest = R[L.R_TOKEN_THRESHOLD + t]
    return dial


@shared
def world_projection(R, V):
    """`project_world` of the deciding player's view, memoised in the view
    (`fbsim.game.layout.V_WORLD_PROJECTION`): the engines mark it STALE whenever the Dial,
    a token, the table's ppm or the round changes, and the first decision that asks computes
    it once for every decision after it. A pure function of public information (R-I1): the
    memo changes no answer, only how often it is computed."""
    p = V[L.V_WORLD_PROJECTION]
    if p == L.STALE:
        p = project_world(R, V)
        V[L.V_WORLD_PROJECTION] = p
    return p


@shared
def band_of(R, dial):
    """R-E2: the band of a Dial reading (thresholds from the rules vector)."""
    if dial >= R[L.R_COLLAPSE]:
        return L.COLLAPSE
    if dial >= R[L.R_EXTREME]:
        return L.EXTREME
    if dial >= R[L.R_SEVERE]:
        return L.SEVERE
    return L.WARMING
