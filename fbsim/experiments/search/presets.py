"""Where the searches of one Agenda's best response start: `fbsim exploit`'s presets."""

from __future__ import annotations

# where each Agenda's search starts: the tunable bot close to its default bot
PRESETS = {
    "steward": {"aim": 504, "tolerance": 0, "chips_early": 6, "chips_late": 6,
                "burn_floor": 0, "mask_burns": 1, "mask_cools": 0, "greed": 0,
                "buy_steer": 1, "payback": 9, "reserve": 0, "accuse": 1, "cornered": 1},
    "opportunist": {"aim": 529.5, "tolerance": 4, "chips_early": 3, "chips_late": 3,
                    "burn_floor": 0, "mask_burns": 1, "mask_cools": 0, "greed": 0,
                    "buy_steer": 1, "payback": 3, "reserve": 0, "accuse": 3, "cornered": 1},
    "accelerationist": {"aim": 700, "tolerance": 0, "chips_early": 0, "chips_late": 0,
                        "burn_floor": 3, "mask_burns": 1, "mask_cools": 0, "greed": 1,
                        "buy_steer": 1, "payback": 9, "reserve": 10, "accuse": 2,
                        "cornered": 2},
}
