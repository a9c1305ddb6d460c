"""R-V6: the market questions written without a branch per slot (`can_buy_any`,
`cheapest_slot`) answer as the plain slot-by-slot reading of the rule (`can_buy`,
`price_keeping`) for any market, Capital, free WORKS and asset table."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.game import layout as L
from fbsim.game.legal import can_buy, can_buy_any
from fbsim.game.public import asset_field
from fbsim.policies.common import cheapest_slot, price_keeping
from fbsim.rules import load_rules, rules_vector

KINDS = 5
BASE = rules_vector(load_rules())

assets = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(-3, 3)),
                  min_size=KINDS, max_size=KINDS)  # price, income, ppm of each kind
views = st.fixed_dictionaries({
    "size": st.integers(1, L.MAX_MARKET),
    "market": st.lists(st.integers(-1, KINDS - 1), min_size=L.MAX_MARKET,
                       max_size=L.MAX_MARKET),
    "capital": st.integers(-3, 20),
    "free_works": st.integers(0, 6),
    "labour": st.integers(1, 4),
    "seat": st.integers(0, 3),
})


def setting(table, view):
    R = BASE.copy()
    R[L.R_MARKET_SIZE] = view["size"]
    R[L.R_PURCHASE_LABOUR] = view["labour"]
    for k, (price, income, ppm) in enumerate(table):
        a = L.R_ASSET + k * L.ASSET_STRIDE
        R[a + L.A_PRICE], R[a + L.A_INCOME], R[a + L.A_PPM] = price, income, ppm
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_SEAT] = view["seat"]
    V[L.V_MARKET:L.V_MARKET + L.MAX_MARKET] = view["market"]
    V[L.V_MY_CAPITAL + view["seat"]] = view["capital"]
    V[L.V_MY_FREE_WORKS + view["seat"]] = view["free_works"]
    return R, V


def cheapest_by_the_rule(R, V, sign, reserve, min_income):
    best, best_price = -1, None
    for m in range(R[L.R_MARKET_SIZE]):
        price = price_keeping(R, V, m, reserve)
        if price < 0:
            continue
        kind = V[L.V_MARKET + m]
        ppm = asset_field(R, kind, L.A_PPM)
        if (np.sign(ppm) == sign and asset_field(R, kind, L.A_INCOME) >= min_income
                and (best_price is None or price < best_price)):
            best, best_price = m, price
    return best


@settings(deadline=None, max_examples=400)
@given(assets, views)
def test_R_V6_can_buy_any_is_can_buy_of_some_slot(table, view):
    R, V = setting(table, view)
    assert can_buy_any(R, V) == any(can_buy(R, V, m) for m in range(L.MAX_MARKET))


@settings(deadline=None, max_examples=400)
@given(assets, views, st.sampled_from([-1, 0, 1]), st.integers(-2, 12), st.integers(0, 2))
def test_R_V6_cheapest_slot_is_the_cheapest_that_qualifies(table, view, sign, reserve,
                                                           min_income):
    R, V = setting(table, view)
    got = cheapest_slot(R, V, np.int64(sign), np.int64(reserve), np.int64(min_income))
    assert got == cheapest_by_the_rule(R, V, sign, reserve, min_income)
