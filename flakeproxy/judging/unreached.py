"""Why a scenario's faults decided nothing though the agent called their targets: its episodes made fewer matching
calls than after_calls lets through. Read from the journals (the targets each request matched, its URL) with the
proxy's own matching (Injector.matching), counted per episode as the proxy counts them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.proxy import target_specs
from flakeproxy.judging.coverage import OtherTools, Uncalled, never_called, other_tools
from flakeproxy.proxycore.injector import Injector
from flakeproxy.results import Episode
from flakeproxy.wire.call import Call, TargetSpec


@dataclass(frozen=True)
class Short:
    """A fault whose target the agent called, at most `most` times an episode, below its after_calls."""

    label: str
    after_calls: int
    most: int
    targets: tuple[str, ...]

    def detail(self) -> str:
        to = f" to {', '.join(self.targets)}" if self.targets else ""
        fix = f"{self.most}" + (" or less" if self.most > 1 else "")
        return (
            f"the agent made at most {self.most} matching call(s){to} per episode, but {self.label} has after_calls: "
            f"{self.after_calls}, which lets the first {self.after_calls - 1} of an episode through: lower after_calls "
            f"to {fix}"
        )


@dataclass(frozen=True)
class Held:
    """A fault that matched its target's calls often enough and never fired: held by its probability or its turns."""

    label: str
    matched: int
    probability: float
    turns: tuple[int, ...] | None

    def detail(self) -> str:
        head = f"{self.label} matched {self.matched} request(s)"
        if self.probability == 0:
            return f"{head}, but its probability is 0: it never fires (give it a probability above 0, or remove it)"
        if self.probability < 1:
            return (
                f"{head}, but its probability ({self.probability:g}) fired on none: by chance, as probability < 1 "
                "allows (more replicas, or a higher probability, make it fire)"
            )
        turns = ", ".join(map(str, self.turns or ()))
        return f"{head}, none of them on its turns ({turns})"


@dataclass(frozen=True)
class Unreached:
    """The faults that fell short of their after_calls, those held by their probability or turns, and the others,
    which matched no request at all."""

    short: tuple[Short, ...]
    unmatched: tuple[str, ...] = ()
    held: tuple[Held, ...] = ()

    def detail(self) -> str:
        rest = f"; {', '.join(self.unmatched)} matched no request: check targets" if self.unmatched else ""
        return "; ".join([*(s.detail() for s in self.short), *(h.detail() for h in self.held)]) + rest


def _call(entry: Mapping[str, Any], targets: Mapping[str, TargetSpec]) -> Call:
    """The request of a journal entry as the injector matched it (its body is not needed: the targets it matched
    are recorded)."""
    names = tuple(entry.get("targets") or ())
    api = next((targets[n].api for n in names if n in targets and targets[n].api), None)
    headers = {str(k).lower(): str(v) for k, v in (entry.get("request_headers") or {}).items()}
    url = str(entry.get("url") or "")
    return Call(str(entry.get("listener") or ""), str(entry.get("method") or ""), url, "", headers, b"", names, api)


def unreached(
    config: FlakeproxyConfig, scenario: Scenario, episodes: Sequence[Episode], sections: Collection[str] | None = None
) -> Unreached | None:
    """When no fault of the scenario (in `sections`; None: all) was decided, and some matched their target's calls
    but fewer times an episode than their after_calls, or often enough but their probability (< 1) or their turns
    held them: those, and the ones that matched nothing. None otherwise (no fault matched, or one that matched
    often enough never fired for a reason the journals do not show)."""
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    faults = [f for f in Injector.faults_of(scenario) if sections is None or f[0] in sections]
    keys = {(section, index) for section, index, _, _ in faults}
    if not mine or any((f.section, f.index) in keys for e in mine for f in e.faults(applied=None)):
        return None
    specs = target_specs(config.targets)
    most, called, total = _counts(Injector(specs), scenario, mine, specs)
    short, unmatched, held = [], [], []
    for section, index, fault, llm_side in faults:
        label, n = f"{section}[{index}] {fault.kind}", most[section, index]
        if not n:
            unmatched.append(label)
        elif n < fault.after_calls:
            on_side = sorted(t for t in called[section, index] if bool(specs[t].api) == llm_side)
            short.append(Short(label, fault.after_calls, n, tuple(on_side)))
        elif fault.probability < 1 or fault.turns is not None:
            turns = tuple(fault.turns) if fault.turns is not None else None
            held.append(Held(label, total[section, index], fault.probability, turns))
        else:
            return None  # it matched often enough and nothing the journals show held it
    return Unreached(tuple(short), tuple(unmatched), tuple(held)) if short or held else None


def _counts(
    injector: Injector, scenario: Scenario, episodes: Sequence[Episode], specs: Mapping[str, TargetSpec]
) -> tuple[Counter[tuple[str, int]], dict[tuple[str, int], set[str]], Counter[tuple[str, int]]]:
    """Per fault: the most requests of one episode it matched, the targets those requests matched, and the requests
    it matched in all."""
    most: Counter[tuple[str, int]] = Counter()
    total: Counter[tuple[str, int]] = Counter()
    called: dict[tuple[str, int], set[str]] = {}
    for episode in episodes:
        seen: Counter[tuple[str, int]] = Counter()
        for entry in episode.journal:
            call = _call(entry, specs)
            for section, index, _ in injector.matching(scenario, call):
                seen[section, index] += 1
                called.setdefault((section, index), set()).update(t for t in call.targets if t in specs)
        for key, n in seen.items():
            most[key] = max(most[key], n)
        total.update(seen)
    return most, called, total


def undecided(
    config: FlakeproxyConfig, scenario: Scenario, episodes: Sequence[Episode], sections: Collection[str] | None = None
) -> Uncalled | OtherTools | Unreached | None:
    """Why the scenario's faults decided nothing, when its journals show it: the agent never called their targets
    through the proxy (never_called), called other MCP tools than the ones they name (other_tools), or called them
    fewer times than after_calls lets through (unreached)."""
    return (
        never_called(config, scenario, episodes)
        or other_tools(config, scenario, episodes)
        or unreached(config, scenario, episodes, sections)
    )
