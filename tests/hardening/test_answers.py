"""Results and reports are written whatever the agent answers, and no secret of the episode is kept in the
answer (issue 21 items 4 and 8).

- An answer holding a lone surrogate (`{"reply": "\\ud800"}`) crashed `contract run` with a serialization
  traceback, exit 1 (read as "contract failed"), no results.json, no reports, and the proxy child left on its
  ports so that the next run exited 3. Now it is written escaped everywhere, and the run ends as its contract
  says; twice in a row.
- An agent that repeats its Authorization value in its answer had it written in clear to results.json, the
  reports and the recorded session files, while the same value was redacted in the same episode's journal.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from flakeproxy.reports import DEFAULT_FORMATS, FILES
from tests.hardening.runs import KEY, contract_run, listening, run_world

REPORTS = [FILES[f] for f in DEFAULT_FORMATS]


@pytest.mark.timeout(120)
def test_a_lone_surrogate_in_the_answer_is_written_escaped_and_the_run_ends_cleanly(tmp_path: Path) -> None:
    answer = b'{"reply": "According to the source: \\ud800 and \\udfff\\u0000."}'
    with run_world(tmp_path, answer) as world:
        for attempt in (1, 2):  # the second run finds the ports free again
            out = contract_run(world)
            assert out.returncode == 0, (attempt, out.stderr[-2000:])
            assert "Traceback" not in out.stderr and not listening(world.admin)
    results = json.loads((world.out / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is True
    assert {e["answer"] for e in results["episodes"]} == {"According to the source: \\ud800 and \\udfff\x00."}
    assert "\\ud800" in (world.out / "report.html").read_text(encoding="utf-8")  # the answer, shown escaped
    ElementTree.parse(world.out / "junit.xml")
    assert (world.out / "summary.md").read_text(encoding="utf-8").startswith("## ")


@pytest.mark.timeout(120)
def test_a_secret_the_agent_repeats_is_redacted_in_every_artifact(tmp_path: Path) -> None:
    answer = json.dumps({"reply": f"Done, per the source. For the record my key is Bearer {KEY} ({KEY})."}).encode()
    with run_world(tmp_path, answer) as world:
        out = contract_run(world, "--record", str(tmp_path / "sessions"))
    assert out.returncode == 0, out.stderr[-2000:]
    files = [world.out / "results.json", *(world.out / name for name in REPORTS), *(tmp_path / "sessions").glob("*")]
    texts = {path.name: path.read_text(encoding="utf-8") for path in files}
    assert len(texts) == 1 + len(REPORTS) + 4, sorted(texts)  # 2 prompts x 2 scenarios recorded
    results = json.loads(texts["results.json"])
    episode = results["episodes"][0]
    assert episode["answer"] == "Done, per the source. For the record my key is [redacted] ([redacted])."
    assert episode["journal"][0]["request_headers"]["authorization"] == "[redacted]"
    leaks = {name: text.count(KEY) for name, text in texts.items() if KEY in text}
    assert leaks == {}
