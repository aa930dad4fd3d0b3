"""How `mutations.count` is spread over the types: exactly count mutations per golden prompt.

Each type that can run gets count // n mutations (n: how many types can run; the LLM-written ones only
with a `model:`), and count % n of them one more, drawn by a `random.Random` seeded from (run.seed, the
golden prompt's index): the same seed draws the same types, and the prompts do not all favour the same
ones. With count below n, some types get none for a prompt.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence


def spread(count: int, types: Sequence[str], seed: int, prompt_index: int) -> dict[str, int]:
    """How many mutations of each type (in the order of `types`) one golden prompt gets; they sum to count."""
    if not types:
        return {}
    base, extra = divmod(count, len(types))
    digest = hashlib.sha256(f"{seed}|mutation-spread|{prompt_index}".encode()).digest()
    lucky = set(random.Random(int.from_bytes(digest[:8], "big")).sample(types, extra))
    return {kind: base + (kind in lucky) for kind in types}
