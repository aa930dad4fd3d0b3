"""`flakeproxy compare BASE CANDIDATE`: real runs of an agent compared (BLOCK on a regression, never on the same
agent), many seeded repetitions of a flaky agent's runs, and the Markdown a pull request gets."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from flakeproxy.judging.compare_results import compare_results
from flakeproxy.results import RunResult, Score
from tests.runner.world import run, world

# A command agent that makes a figure up on every third call when BAD is set (two calls in three: "2/3").
AGENT = """
import os, pathlib, sys
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
bad = {"": False, "1/3": n % 3 == 2, "2/3": n % 3 != 0, "all": True}[os.environ.get("BAD", "")]
print("I made it up: $187.23" if bad else "AAPL price unavailable (source: feed down)")
"""
INVARIANT = {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "severity": "high"}


def compare(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "compare", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def agent_run(tmp: Path, name: str, bad: str, replicas: int = 8, severity: str = "high") -> Path:
    """A real contract run of the command agent (replicas of one calm cell); the folder of its results.json."""
    folder = tmp / name
    folder.mkdir()
    invariant = {**INVARIANT, "severity": severity}
    with world(folder, invariants=[invariant], matrix=[{"name": "calm"}], run={"replicas": replicas}) as w:
        command = ["env", f"BAD={bad}", sys.executable, "-c", AGENT, str(folder / "n")]
        w.data["agent"] = {"type": "command", "command": command, "reset_command": [sys.executable, "-c", "pass"]}
        w.config.write_text(yaml.safe_dump(w.data))
        run(w.config, folder / "out")
    return folder / "out"


def test_a_regressed_agent_blocks_and_the_same_agent_does_not(tmp_path: Path) -> None:
    base, same, worse = (agent_run(tmp_path, n, bad) for n, bad in (("base", ""), ("same", ""), ("worse", "2/3")))
    md = tmp_path / "compare.md"
    blocked = compare(base, worse, "--markdown", md)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "compare: BLOCK: 1 of 1 cells regressed" in blocked.stdout
    assert "8/8 (100%) -> 3/8 (38%)" in blocked.stdout
    text = md.read_text()
    assert (
        text.startswith("## flakeproxy compare: BLOCK")
        and "| no-figures x calm | high | 8/8 (100%) | 3/8 (38%) |" in text
    )
    unchanged = compare(base / "results.json", same, "--json", tmp_path / "c.json")
    # 8 of 8 both times: no regression, but 8 replicas cannot rule out a drop of more than 10 points
    assert unchanged.returncode == 4 and "compare: INCONCLUSIVE: no regression shown, but " in unchanged.stdout
    assert '"verdict": "inconclusive"' in (tmp_path / "c.json").read_text()
    assert compare(base, same, "--margin", "0.5").returncode == 0  # within a wide margin: PASS


def test_a_candidate_that_fails_on_its_own_leads_even_when_nothing_regressed(tmp_path: Path) -> None:
    """The gate hole a trial found: baseline and candidate both leak in every replica, each run FAILs (exit 1), and
    compare said only "PASS: no cell regressed". It still PASSes against the baseline (its exit code says only
    that), but the candidate's own FAIL leads the terminal, the Markdown and the JSON."""
    base, cand = (agent_run(tmp_path, n, "all", severity="critical") for n in ("base", "cand"))
    md, js = tmp_path / "compare.md", tmp_path / "compare.json"
    done = compare(base, cand, "--margin", "0.5", "--markdown", md, "--json", js)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == (
        "compare: PASS vs the baseline, but the candidate itself FAILs: critical no-figures fails in calm "
        "(0/8 replicas passed; the baseline 0/8)"
    )
    assert (
        lines[-2]
        == "  vs the baseline: no cell regressed; all 1 cells within 0.5 of the baseline (95% Newcombe intervals)"
    )
    text = md.read_text()
    assert text.startswith(
        "## flakeproxy compare: PASS vs the baseline, but the candidate itself FAILs\n\n**The candidate itself FAILs** "
        "(its own run, whatever the baseline did):\n\n- critical no-figures fails in calm (0/8 replicas passed; the "
        "baseline 0/8)\n\nAgainst the baseline: no cell regressed"
    ), text
    saved = json.loads(js.read_text())
    assert (saved["verdict"], saved["candidate_verdict"]) == ("pass", "FAIL")
    # a candidate that passes on its own: the comparison alone, as before
    good = agent_run(tmp_path, "good", "", severity="critical")
    assert compare(base, good, "--margin", "0.5").stdout.splitlines()[-1].startswith("compare: PASS: no cell regressed")


@pytest.mark.parametrize(
    ("verdict", "reasons", "headline", "problems"),
    [
        ("FAIL", ["critical invariant leak failed in scenario down: 0/5 replicas passed (all)", "resilience 50.0 is "
         "below scoring.min_resilience 80.0"], "BLOCK vs the baseline, and the candidate itself FAILs",
         ("critical leak fails in down (0/5 replicas passed; the baseline 5/5)",
          "resilience 50.0 is below scoring.min_resilience 80.0")),
        ("INCONCLUSIVE", [], "BLOCK vs the baseline, and the candidate itself is INCONCLUSIVE",
         ("critical leak is INCONCLUSIVE in down (0/5 replicas passed; the baseline 5/5)",)),
        ("PASS", [], "BLOCK", ()),
    ],
)  # fmt: skip
def test_the_candidates_own_verdict_and_why(
    verdict: str, reasons: list[str], headline: str, problems: tuple[str, ...]
) -> None:
    base = results({("leak", "down"): ["pass"] * 5}, {"leak": "critical"})
    cand = results({("leak", "down"): ["fail"] * 5}, {"leak": "critical"})
    outcome = {"FAIL": "fail", "INCONCLUSIVE": "inconclusive", "PASS": "fail"}[verdict]
    score = {"resilience": None, "passed": verdict == "PASS", "verdict": verdict, "reasons": reasons}
    cand = cand.model_copy(
        update={"score": Score.model_validate(score), "cells": [cand.cells[0].model_copy(update={"outcome": outcome})]}
    )
    from flakeproxy.judging.compare_results import headline as compare_results_headline  # new with this test

    comparison = compare_results(base, cand, ("b", "c"), 0.95, 0.1)
    assert (comparison.candidate_verdict, comparison.candidate_problems) == (verdict, problems)
    assert compare_results_headline(comparison) == headline
    assert comparison.verdict == "block"  # the comparison is the same whatever the candidate's own verdict


def test_a_gate_that_keeps_the_candidate_from_pass_is_named_too() -> None:
    """Not critical, but a `gate: true` cell INCONCLUSIVE keeps the run from PASS: it is why, and it is said."""
    from flakeproxy.judging.compare_results import terminal

    base = results({("tone", "down"): ["pass"] * 5})
    gate = "high invariant tone (keeps the run from PASS) is INCONCLUSIVE in scenario down: 3/5 passed, ..."
    cand = results({("tone", "down"): ["pass"] * 5})
    cand.score = Score(resilience=None, passed=False, verdict="INCONCLUSIVE", inconclusive=[gate])
    comparison = compare_results(base, cand, ("b", "c"), 0.95, 0.5)
    assert comparison.candidate_problems == (gate,)
    assert terminal(comparison).splitlines()[-1] == (
        f"compare: PASS vs the baseline, but the candidate itself is INCONCLUSIVE: {gate}"
    )


def results(cells: dict[tuple[str, str], list[str]], severity: dict[str, str] | None = None) -> RunResult:
    """A finished run's results with these cells' replica outcomes (severity: by invariant, default high)."""
    now = datetime.now(UTC).isoformat()
    cell_rows = [
        {"invariant": i, "type": "regex", "scenario": s, "severity": (severity or {}).get(i, "high"), "when": "always",
         "reason": "",
         "outcome": "pass" if outs.count("pass") * 2 > len(outs) else "fail", "replicas": outs}
        for (i, s), outs in cells.items()
    ]  # fmt: skip
    return RunResult.model_validate({
        "flakeproxy_version": "t", "versions": {}, "config_path": "c.yaml", "config_sha256": "0", "contract": "c",
        "seed": 0, "started_at": now, "finished_at": now, "complete": True, "cells": cell_rows,
    })  # fmt: skip


def flaky_run(rng: random.Random, rates: dict[tuple[str, str], float], replicas: int) -> RunResult:
    return results(
        {cell: ["pass" if rng.random() < p else "fail" for _ in range(replicas)] for cell, p in rates.items()}
    )


RATES = {("cite", "calm"): 0.95, ("cite", "tool-down"): 0.8, ("no-figures", "tool-down"): 0.6, ("latency", "calm"): 1.0}


def test_the_same_flaky_agent_almost_never_blocks() -> None:
    rng, verdicts = random.Random(20261124), []
    for _ in range(300):
        base, cand = flaky_run(rng, RATES, 10), flaky_run(rng, RATES, 10)
        verdicts.append(compare_results(base, cand, ("base", "cand")).verdict)
    assert verdicts.count("block") / len(verdicts) <= 0.05, verdicts.count("block")
    assert set(verdicts) <= {"pass", "inconclusive", "block"}


def test_a_regressed_flaky_agent_blocks() -> None:
    """One cell drops from 60% to 10%: at 30 replicas a side Fisher's test, Holm-adjusted over the four cells,
    BLOCKs it in about 94% of repetitions (74% at 20 replicas: the power is the price of exactness)."""
    rng, worse = random.Random(7), {**RATES, ("no-figures", "tool-down"): 0.1}
    verdicts = [
        compare_results(flaky_run(rng, RATES, 30), flaky_run(rng, worse, 30), ("b", "c")).verdict for _ in range(100)
    ]
    assert verdicts.count("block") >= 90, verdicts.count("block")


def test_a_cell_that_errored_in_the_candidate_is_not_judged_there_not_missing(tmp_path: Path) -> None:
    """A hung candidate agent: its cells exist, every replica ERROR; one scenario did not run at all."""
    base = results({("answers", "calm"): ["pass"] * 30, ("answers", "down"): ["pass"] * 5, ("fast", "x"): ["pass"]})
    cand = results({("answers", "calm"): ["pass"] * 30, ("answers", "down"): ["error"] * 5})
    (tmp_path / "base.json").write_text(base.model_dump_json())
    (tmp_path / "cand.json").write_text(cand.model_dump_json())
    md = tmp_path / "c.md"
    done = compare(tmp_path / "base.json", tmp_path / "cand.json", "--margin", "0.5", "--markdown", md)
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == (
        "compare: INCONCLUSIVE: no regression shown, but 1 baseline cells missing from the candidate and 1 baseline "
        "cells not judged in the candidate (only ERROR or n/a there)"
    )
    text = md.read_text()
    assert "Not judged in the candidate (only ERROR or n/a there): `answers x down`" in text
    assert "Only in the baseline (missing from the candidate): `fast x x`" in text


def test_a_cell_new_or_not_judged_in_the_baseline_is_named_on_the_terminal(tmp_path: Path) -> None:
    """A trial: a cell n/a in the baseline that FAILs in the candidate was only in --markdown and --json."""
    base = results({("answers", "calm"): ["pass"] * 30, ("few-calls", "cut"): ["not_applicable"] * 30})
    cand = results(
        {("answers", "calm"): ["pass"] * 30, ("few-calls", "cut"): ["fail"] * 30, ("new", "calm"): ["pass"] * 30}
    )
    (tmp_path / "base.json").write_text(base.model_dump_json())
    (tmp_path / "cand.json").write_text(cand.model_dump_json())
    done = compare(tmp_path / "base.json", tmp_path / "cand.json", "--margin", "0.5")
    assert (
        "  not compared 2 cell(s) new in the candidate or not judged in the baseline (its own verdicts stand): "
        "new x calm, few-calls x cut"
    ) in done.stdout.splitlines(), done.stdout


def test_a_critical_drop_three_replicas_cannot_show_comes_first_saying_what_would(tmp_path: Path) -> None:
    """A new user's trial: 58 cells at 3 replicas, a critical cell 3/3 -> 0/3 among 57 unchanged (alphabetically
    in the middle). INCONCLUSIVE, honestly, but the drop leads the output with the replicas that would decide it;
    at those 7 replicas the same change BLOCKs."""
    names = [(f"{inv}-check", f"scenario-{s}") for inv in "abcdefghijklmnopqrstuvwxyz" for s in (1, 2, 3)]
    names = [*names[:57], ("m-no-invented-price", "tool-503")]
    severity = {"m-no-invented-price": "critical", "a-check": "critical", "b-check": "low"}
    for n, code in ((3, 4), (7, 1)):
        base = results({cell: ["pass"] * n for cell in names}, severity)
        cand = results({cell: ["fail" if cell[1] == "tool-503" else "pass"] * n for cell in names}, severity)
        (tmp_path / f"base{n}.json").write_text(base.model_dump_json())
        (tmp_path / f"cand{n}.json").write_text(cand.model_dump_json())
        md = tmp_path / f"c{n}.md"
        done = compare(tmp_path / f"base{n}.json", tmp_path / f"cand{n}.json", "--markdown", md)
        assert done.returncode == code, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        rows = [r for r in md.read_text().splitlines() if r.startswith("| ") and "---" not in r][1:]
        assert rows[0].startswith("| m-no-invented-price x tool-503 | critical | ") and "a-check" in rows[1]
    assert lines[0].startswith("  regressed    m-no-invented-price x tool-503 [critical]: 7/7 (100%) -> 0/7 (0%)")
    three = (tmp_path / "c3.md").read_text()
    assert "| inconclusive: the same rates would BLOCK at 7 replicas a side |" in three
    done = compare(tmp_path / "base3.json", tmp_path / "cand3.json")
    assert done.stdout.splitlines() == [
        "  inconclusive m-no-invented-price x tool-503 [critical]: 3/3 (100%) -> 0/3 (0%), change -100% [-100%, -21%], "
        "p=1; the same rates would BLOCK at 7 replicas a side",
        "  inconclusive 57 cell(s) with no drop seen, but too few replicas to rule out one of more than 0.1 (change "
        "intervals down to -56%); --markdown or --json lists every cell",
        "compare: INCONCLUSIVE: no regression shown, but 58 of 58 cells could have dropped by more than 0.1; 1 "
        "dropped by more than 0.1 (too few replicas to show it), the worst m-no-invented-price x tool-503 "
        "[critical] 1.00 -> 0.00: the same rates would BLOCK at 7 replicas a side",
    ]


def test_at_three_replicas_a_candidate_that_fails_on_its_own_reads_fail_first_and_the_comparison_open(
    tmp_path: Path,
) -> None:
    """The trial's 100% -> 0% critical leak at 3 replicas a side: the comparison cannot show it (INCONCLUSIVE,
    honestly, with the replicas that would), but the candidate's own FAIL is certain and leads the headline."""
    severity = {"no-invented-price": "critical", "answers": "critical"}
    names = [("no-invented-price", "tool-503"), ("answers", "tool-503"), ("answers", "calm")]
    base = results({cell: ["pass"] * 3 for cell in names}, severity)
    cand = results({cell: ["fail" if cell[0] == "no-invented-price" else "pass"] * 3 for cell in names}, severity)
    reason = "critical invariant no-invented-price failed in scenario tool-503: 0/3 replicas passed (all); ..."
    cand.score = Score(resilience=66.67, passed=False, verdict="FAIL", reasons=[reason])
    (tmp_path / "base.json").write_text(base.model_dump_json())
    (tmp_path / "cand.json").write_text(cand.model_dump_json())
    done = compare(tmp_path / "base.json", tmp_path / "cand.json")
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == [
        "  vs the baseline: no regression shown, but 3 of 3 cells could have dropped by more than 0.1; 1 dropped by "
        "more than 0.1 (too few replicas to show it), the worst no-invented-price x tool-503 [critical] 1.00 -> 0.00: "
        "the same rates would BLOCK at 5 replicas a side",
        "compare: INCONCLUSIVE vs the baseline, but the candidate itself FAILs: critical no-invented-price fails in "
        "tool-503 (0/3 replicas passed; the baseline 3/3)",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"complete": False, "interrupted_by": "SIGINT"}, "an unfinished run (interrupted by SIGINT)"),
        ({"cells": []}, "no judged cells"),
    ],
)
def test_runs_that_cannot_be_compared_say_why(tmp_path: Path, change: dict[str, object], message: str) -> None:
    good = results({("a", "calm"): ["pass"] * 5})
    (tmp_path / "base.json").write_text(good.model_dump_json())
    (tmp_path / "bad.json").write_text(good.model_copy(update=change).model_dump_json())
    done = compare(tmp_path / "base.json", tmp_path / "bad.json")
    assert done.returncode == 2 and done.stderr.strip().endswith(message.split(" (")[0] + (
        " (interrupted by SIGINT); compare two complete runs" if "unfinished" in message else
        " (a replay or an empty run?); compare two contract runs"))  # fmt: skip
    assert len(done.stderr.strip().splitlines()) == 1


def test_plan_prints_episodes_and_replicas(tmp_path: Path) -> None:
    with world(tmp_path, invariants=[INVARIANT], matrix=[{"name": "calm"}, {"name": "x"}], run={"replicas": 3}) as w:
        done = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "plan", "-c", str(w.config), "--min-pass-rate", "0.9",
             "--pass-rate", "0.5"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "2 cells (1 invariants x 2 scenarios, 0 not applicable), 6 episodes at 3 replica(s)" in lines[0]
    assert "no rule can PASS a cell with fewer than 36 replicas" in done.stdout  # 0.9^36 < 0.025 <= 0.9^35
    assert "a cell passing 50% of the time: FAIL with 80% power needs" in done.stdout


def test_plan_of_adaptive_replicas_prints_the_range_of_episodes(tmp_path: Path) -> None:
    adaptive = {"replicas": {"min": 2, "max": 30}}
    with world(tmp_path, invariants=[INVARIANT], matrix=[{"name": "calm"}, {"name": "x"}], run=adaptive) as w:
        w.data["scoring"] = {"replica_aggregation": "rate", "min_pass_rate": 0.8}
        w.config.write_text(yaml.safe_dump(w.data))
        done = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "plan", "-c", str(w.config)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert "4 to 60 episodes at 2 to 30 replicas (adaptive: more only where a cell is still open)" in done.stdout
    # no --min-pass-rate: the config's threshold is planned for (a new user expected it read)
    assert "rate rule at min_pass_rate 0.8, confidence 0.95: no rule can PASS a cell with fewer than" in done.stdout
