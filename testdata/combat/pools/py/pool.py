"""Python pool of the seed's `combat` program (morloc manual, MCP chapter).

The Python half: rollAdv (mid 3) and fighterDamage (mid 9). The R half,
intro (mid 14), is in ../r/pool.R.
"""

import random

import nexus


def roll_adv():
    """Roll two d20 and keep the larger (advantage): an Int in 1..20."""
    return max(random.randint(1, 20), random.randint(1, 20))


def fighter_damage(armor_class):
    """Deterministic damage against an enemy Armor Class.

    An average greatsword hit (2d6+5 = 12) against the baseline AC 15; every
    point of AC above 15 deflects one point and every point below adds one,
    never below 0. So fighterDamage(15) == 12, as in the manual's transcript.
    """
    return max(0, 27 - armor_class)


if __name__ == "__main__":
    nexus.serve({3: roll_adv, 9: fighter_damage})
