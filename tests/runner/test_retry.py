"""runner/retry.py: the runner's waits (the proxy's control API, an agent's reset endpoint) try a step again with
exponential back-off while it fails in the one way named, and give up as told."""

from __future__ import annotations

import time

import pytest

from flakeproxy.runner.retry import retrying


class Flaky:
    """Fails `times` times with `error`, then answers; records when each try began."""

    def __init__(self, times: int, error: BaseException) -> None:
        self.times, self.error, self.tries = times, error, list[float]()

    async def __call__(self) -> str:
        self.tries.append(time.monotonic())
        if len(self.tries) <= self.times:
            raise self.error
        return "answered"


async def test_a_step_that_heals_is_tried_until_it_answers_with_doubling_waits() -> None:
    step = Flaky(3, ConnectionError("refused"))
    assert await retrying(step, ConnectionError, first_s=0.02, max_s=1, attempts=5) == "answered"
    gaps = [b - a for a, b in zip(step.tries, step.tries[1:], strict=False)]
    assert len(step.tries) == 4
    assert [round(g, 2) >= w for g, w in zip(gaps, [0.02, 0.04, 0.08], strict=True)] == [True] * 3, gaps


async def test_attempts_bound_the_tries_and_the_last_error_is_raised() -> None:
    step = Flaky(10, ConnectionError("refused"))
    with pytest.raises(ConnectionError, match="refused"):
        await retrying(step, ConnectionError, first_s=0.001, max_s=0.001, attempts=3)
    assert len(step.tries) == 3


async def test_within_s_bounds_the_time_and_before_sleep_is_told_each_wait() -> None:
    step, told = Flaky(1000, TimeoutError("not ready")), list[tuple[float, str]]()

    def tell(since: float, error: BaseException) -> None:
        told.append((since, str(error)))

    began = time.monotonic()
    with pytest.raises(TimeoutError):
        await retrying(step, TimeoutError, first_s=0.01, max_s=0.05, within_s=0.3, before_sleep=tell)
    took = time.monotonic() - began
    assert 0.3 <= took < 1.0, took
    assert told and all(why == "not ready" for _, why in told)
    assert [s for s, _ in told] == sorted(s for s, _ in told) and told[-1][0] < 0.3
    assert len(told) == len(step.tries) - 1, "told before each wait, not after the last try"


async def test_another_error_is_raised_at_once() -> None:
    step = Flaky(5, ValueError("a bug"))
    with pytest.raises(ValueError, match="a bug"):
        await retrying(step, ConnectionError, first_s=0.01, max_s=0.01, attempts=5)
    assert len(step.tries) == 1
