"""Legal moves: the rules a decision must keep (R-C1..R-C3, R-V6, R-A1), read from the rules
vector and the deciding player's view. Both engines check bots' decisions with these, and
decide with `accusable` who may be pointed at (the bots read it as V_ELIGIBLE)."""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.public import asset_field, mine, my_burn_pay


@shared
def commit_is_legal(R, V, works, cool, burn, mcool, mburn):
    """R-C1..R-C3 for the deciding player."""
    if works < 0 or cool < 0 or burn < 0 or works + cool + burn != R[L.R_AGENTS]:
        return False  # R-C1
    if mcool < 0 or mburn < 0 or mcool > cool or mburn > burn:
        return False  # R-C2
    if mcool + mburn > mine(V, L.V_MY_MASKS):
        return False  # R-C2
    open_burn = burn - mburn
    # R-C3: cooling is charged from Capital now plus open-burn pay only
    return cool * R[L.R_COOL_COST] <= mine(V, L.V_MY_CAPITAL) + open_burn * my_burn_pay(R, V)


@shared
def can_buy(R, V, slot):
    """R-V6: the card in `slot` is affordable with free WORKS and Capital now."""
    if slot < 0 or slot >= shape.market_size(R):
        return False
    kind = V[L.V_MARKET + slot]
    if kind < 0:
        return False
    if mine(V, L.V_MY_FREE_WORKS) < R[L.R_PURCHASE_LABOUR]:
        return False
    return mine(V, L.V_MY_CAPITAL) >= asset_field(R, kind, L.A_PRICE)


@shared
def accusable(R, revealed_agenda):
    """R-A1/R-A5: whether a rival whose revealed Agenda is `revealed_agenda` (-1: hidden) may
    be pointed at. A revealed Accelerationist never; a revealed Steward or Opportunist unless
    `accusation.revealed_accusable` is false. Both engines fill V_ELIGIBLE with this."""
    # written without a branch (the engines ask it of every seat at every Accusation)
    return (revealed_agenda < 0) | ((revealed_agenda != L.ACCELERATIONIST)
                                    & (R[L.R_REVEALED_ACCUSABLE] == 1))


@shared
def is_eligible(V, seat):
    return V[L.V_ELIGIBLE + seat] == 1


@shared
def can_buy_any(R, V):
    """R-V6: some card in the market is affordable (else taking wages is the only answer):
    `can_buy` of some slot, written without a branch per slot (which slots are affordable
    changes from one call to the next, so such a branch is mispredicted): the cheapest card
    in the market against the Capital."""
    if mine(V, L.V_MY_FREE_WORKS) < R[L.R_PURCHASE_LABOUR]:
        return False
    capital = mine(V, L.V_MY_CAPITAL)
    cheapest = capital + 1  # an empty slot's "price": more than the Capital
    for slot in range(shape.market_size(R)):
        kind = V[L.V_MARKET + slot]
        price = asset_field(R, kind if kind >= 0 else 0, L.A_PRICE)
        price = price if kind >= 0 else capital + 1
        cheapest = price if price < cheapest else cheapest
    return cheapest <= capital
