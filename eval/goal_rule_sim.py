#!/usr/bin/env python3
"""How often the refinement loop's goal rule passes a tree of a given true hit rate
(docs/codeine.md, "Refinement", decisions): rounds of 100 aimed inputs drawn as
binomial draws, goal 90 %, 4,000 trials per rate (seed 1).

- before: a round at the goal, then one confirming round; passes if the two pooled
  are at the goal (a point estimate);
- now: a round at the goal, then up to three more while the pooled share stays at the
  goal; passes when the one-sided 95 % Wilson lower bound of the pooled rounds is at
  the goal (thicket_codeine::refine::Evidence::trusts).

Prints per true rate: the share of trees whose first round reaches the goal (becomes a
candidate), and the share of candidates each rule passes.
Usage: python3 eval/goal_rule_sim.py
"""
import math
import random

GOAL, BATCH, TRIAL_ROUNDS, Z = 0.9, 100, 4, 1.644853626951472


def lower_bound(hits, n):
    p = hits / n
    return (p + Z * Z / (2 * n) - Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))) / (1 + Z * Z / n)


def round_hits(rate, rng):
    return sum(rng.random() < rate for _ in range(BATCH))


def passes(rate, rng, bound):
    """None: no candidate; else whether the rule ends the loop on this tree."""
    hits = round_hits(rate, rng)
    if hits < GOAL * BATCH:
        return None
    n = BATCH
    if not bound:
        return hits + round_hits(rate, rng) >= GOAL * 2 * BATCH
    for _ in range(TRIAL_ROUNDS - 1):
        hits, n = hits + round_hits(rate, rng), n + BATCH
        if lower_bound(hits, n) >= GOAL:
            return True
        if hits < GOAL * n:
            return False
    return False


def main():
    rng = random.Random(1)
    print("| true rate | candidates | passed, before | passed, now |")
    print("|---|---|---|---|")
    for rate in [0.86, 0.88, 0.90, 0.92, 0.93, 0.95, 0.97]:
        now = [passes(rate, rng, True) for _ in range(4000)]
        before = [passes(rate, rng, False) for _ in range(4000)]
        now = [p for p in now if p is not None]
        before = [p for p in before if p is not None]
        print(f"| {rate:.0%} | {len(now) / 4000:.0%} | {sum(before) / len(before):.1%} "
              f"| {sum(now) / len(now):.1%} |")


if __name__ == "__main__":
    main()
