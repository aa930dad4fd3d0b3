"""The anchor's config forms (Flakestorm 2.0) that flakeproxy reads unchanged.

Flakestorm writes its top-level run `invariants:` as a list whose entries have no `id` (only contract
invariants name themselves), and its pillar weights flat under `scoring:` (`scoring: {mutation: 0.2, chaos:
0.35, contract: 0.35, replay: 0.1}`) where flakeproxy says `scoring.weights`. Both are turned into
flakeproxy's own form before validation, so every other rule (unknown keys, sums, types) still applies.
"""

from __future__ import annotations

from typing import Any

#: The pillar weights, as the anchor writes them directly under `scoring:`.
PILLARS = ("mutation", "chaos", "contract", "replay")


def name_run_invariants(value: Any) -> Any:
    """Give each top-level invariant written without `id` its type as id: `latency`, `valid_json`; the
    second of a type is `contains-2`, the third `contains-3`, and no generated id takes one written
    elsewhere in the list. Entries with an `id`, and anything that is not such a list, are left as they are."""
    if not isinstance(value, list):
        return value
    taken = {item["id"] for item in value if isinstance(item, dict) and isinstance(item.get("id"), str)}
    named = []
    for item in value:
        if isinstance(item, dict) and "id" not in item and isinstance(item.get("type"), str):
            name, n = item["type"], 1
            while name in taken:
                n += 1
                name = f"{item['type']}-{n}"
            taken.add(name)
            item = {"id": name, **item}
        named.append(item)
    return named


def flat_weights(value: Any) -> Any:
    """`scoring: {mutation: .., chaos: .., contract: .., replay: ..}` as `scoring: {weights: {...}}`; the
    missing ones take their defaults, and together they must still sum to 1.0. Written both ways, it is an
    error: the two could disagree."""
    if not isinstance(value, dict):
        return value
    flat = {key: value[key] for key in PILLARS if key in value}
    if not flat:
        return value
    if "weights" in value:
        raise ValueError(
            f"pillar weights are given twice, flat ({', '.join(flat)}) and under weights:; keep one, "
            "e.g. weights: {mutation: 0.20, chaos: 0.35, contract: 0.35, replay: 0.10}"
        )
    return {**{k: v for k, v in value.items() if k not in PILLARS}, "weights": flat}
