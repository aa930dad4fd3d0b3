"""Shared test helpers, and how the suite runs: garbage collected after every test (frozen once), the proxy of a
contract run in-process, and pytest-xdist's groups."""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.demo import DemoRun, demo_run

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").rglob("*.yaml"))
IN_PROCESS = "FLAKEPROXY_IN_PROCESS_PROXY"  # runner/proxy_child.py's switch

#: folders whose tests share a session fixture (the demo's results): one xdist group, so it runs once
ONE_GROUP = ("reports", "docker")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what is alive once the tests are collected (modules, mitmproxy, the items): the per-test
    gc.collect() below then walks only what tests made (~0.01 s a test instead of ~0.3-0.75 s)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_garbage() -> Iterator[None]:
    """Collect garbage after every test, so a leaked socket or transport fails the test that leaked it (warnings
    are errors, an unraisable exception among them) instead of whichever test the collector happens to run in."""
    yield
    gc.collect()


#: Seconds the slowest groups take (2 workers, a quiet 2-core machine, warm caches; 2026-11-24). The scheduler hands
#: out groups in collection order, so these go first and no worker starts a long group when the rest are done
#: (xdist's own reordering, by count of tests, put the two-test Phoenix group last). Any other group counts
#: SECONDS_PER_TEST a test. Refresh from `pytest --junitxml` when a group grows; a stale entry costs time, not
#: correctness.
HEAVY_GROUPS = {
    "fidelity/test_fidelity.py": 66,
    "reports": 56,
    "frameworks/test_trace_attribution.py": 30,
    "test_examples_run.py": 25,
    "telemetry/test_phoenix.py": 25,
    "docker": 24,
    "runner/test_stream_delivery.py": 20,
    "runner/test_slots.py": 16,
    "config/test_fuzz.py": 12,
    "addons/test_sdk_llm.py": 11,
    "hardening/test_hostile_files.py": 10,
    "frameworks/test_llamaindex_agent.py": 10,  # two agent processes importing LlamaIndex (2026-11-28)
    "runner/test_agents.py": 10,
}
SECONDS_PER_TEST = 0.15


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """For `--dist loadgroup`: a test file is one group (its module fixtures start servers once), and a folder of
    ONE_GROUP is one; a test that names its own xdist_group keeps it. The groups are ordered longest first."""
    groups: dict[pytest.Item, str] = {}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            path = item.path.relative_to(REPO / "tests")
            group = path.parts[0] if path.parts[0] in ONE_GROUP else str(path)
            item.add_marker(pytest.mark.xdist_group(group))
        groups[item] = _group_of(item)
        if config.getoption("loadgroup", False):  # set on xdist workers only
            _name_the_group(item)
    counts = Counter(groups.values())
    items.sort(key=lambda i: -HEAVY_GROUPS.get(groups[i], counts[groups[i]] * SECONDS_PER_TEST))


def _group_of(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    assert mark is not None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def _name_the_group(item: pytest.Item) -> None:
    """What pytest-xdist (3.8) does for loadgroup, done where it no longer can: it suffixes each node id with
    `@group` (the scheduler groups by that suffix) by setting `item._nodeid`, which pytest 9.2 stopped reading (the
    id is `item._id` now): without this, every test was scheduled on its own and each file's module fixtures, the
    shared demo among them, ran on both workers. Older pytest keeps `_nodeid`, and xdist does it there."""
    if hasattr(item, "_nodeid") or not hasattr(item, "_id") or "@" in item.nodeid:
        return
    from _pytest.nodeid import coerce_node_id  # pytest >= 9.2

    group = "_".join(
        sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        )
    )
    item._id = coerce_node_id(f"{item.nodeid}@{group}")


def pytest_configure(config: pytest.Config) -> None:
    """Contract runs start their proxy in a thread of the runner's process (runner/local.py): the same proxy on real
    sockets without the child's 2 s of imports. Set here, before any fixture, so that session and module fixtures'
    runs get it too; FLAKEPROXY_IN_PROCESS_PROXY=0 in the environment runs every proxy as the child."""
    os.environ.setdefault(IN_PROCESS, "1")


@pytest.fixture(autouse=True)
def _proxy_child(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked proxy_child (or containers: run as users run it) gets the real child process."""
    if any(request.node.get_closest_marker(name) for name in ("proxy_child", "containers")):
        monkeypatch.delenv(IN_PROCESS, raising=False)


@pytest.fixture(scope="session")
def demo_command(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`flakeproxy demo`, run once per test run and shared (tests/support/demo.py)."""
    return demo_run(tmp_path_factory)
