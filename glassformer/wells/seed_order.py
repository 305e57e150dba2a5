"""Which seeds a run draws from: the list every multi-seed command uses, and the blocks of members.

The first seed is 42, the seed of the chapter's published demonstrations; then 0, 1, 2, ...
(skipping 42), so that ``--seeds 3`` repeats the published run and adds two more.
"""

from __future__ import annotations

from ..errors import InputError

__all__ = ["member_seed_blocks", "seed_list"]


def seed_list(n: int, first: int = 42) -> list:
    """``n`` seeds: ``first`` (the demos' published seed), then 0, 1, 2, ... (skipping ``first``).

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    if int(n) < 1:
        raise InputError(f"--seeds must be >= 1, got {n}")
    rest = [s for s in range(int(n) + 1) if s != first]
    return [int(first)] + rest[:int(n) - 1]


def member_seed_blocks(seeds, members: int) -> dict:
    """seed -> the seeds of its transformer's members: consecutive, disjoint blocks of :func:`seed_list`
    starting at the first seed.

    With one member each seed is its own block.  With ``members`` M, the k-th seed's members are
    seeds ``k M .. k M + M - 1`` of the list ``seeds[0]``, 0, 1, 2, ..., so the first seed's members are
    ``glassformer train --members M``'s and ``--ensemble M``'s (42, 0, 1, ... by default) and no member
    is shared between two seeds.
    """
    seeds = [int(s) for s in seeds]
    if members <= 1:
        return {s: [s] for s in seeds}
    pool = seed_list(len(seeds) * int(members), first=seeds[0])
    return {s: pool[k * members:(k + 1) * members] for k, s in enumerate(seeds)}
