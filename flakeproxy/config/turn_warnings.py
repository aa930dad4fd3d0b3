"""Warnings about what a check on a conversation will not see (`flakeproxy validate`): a check for what must never
appear in an answer (excludes_pattern, excludes_pii, prompt_leak: `forbids_content`) left on the default
`turn: last` judges the last turn only, so a leak in an earlier turn is never seen."""

from __future__ import annotations

from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.yamlsource import format_path


def leaks_before_the_last_turn(config: FlakeproxyConfig) -> list[str]:
    """One line per such check whose prompts (its probes, else the golden prompts) hold a conversation."""
    out = []
    for i, invariant in enumerate(config.contract.invariants if config.contract else []):
        if not invariant.forbids_content or "turn" in invariant.model_fields_set:  # `turn: last` written: chosen
            continue
        prompts = invariant.probes or config.golden_prompts
        conversations = [p for p in prompts if not isinstance(p, str) and len(p.turns) > 1]
        if conversations:
            first = conversations[0]
            out.append(
                f"{format_path(('contract', 'invariants', i))} ({invariant.id}): {getattr(invariant, 'type', '?')} "
                f"judges only the last turn of conversation {first.key!r} (turn: last, the default), so a leak in "
                "an earlier turn is never seen; set turn: all (or write turn: last to keep the last only)"
            )
    return out
