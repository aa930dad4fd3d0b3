"""Whether a decided fault changed what the agent received: noted part by part as an action is applied.

A fault is *applied* only when something the agent got differs from what it would have got without
it: a reply made by the proxy, a closed connection, a delay served, a request or response body whose
bytes changed, a stream whose output differs from its input. Anything else is *not applied*, with
the reason. The proxy's addon and the python adapter apply an action through the same phases
(flakeproxy.wire.applying), which note here, so both mean the same by "applied".
"""

from __future__ import annotations

from typing import Any

from flakeproxy.wire.action import StreamTransform
from flakeproxy.wire.json_edit import same_content

#: How every reason that puts a fault's not applying down to its upstream begins (blames_upstream).
UPSTREAM = "the upstream "


#: How the reason begins when the agent's own request left a stream fault nothing to act on.
NOT_STREAMED = "the agent asked for no stream"


def blames_upstream(reason: str) -> bool:
    """Whether a not-applied reason is the upstream's doing (it failed, or answered with an error), not the
    config's: no target or fault setting would have made the fault apply."""
    return reason.startswith(UPSTREAM)


def not_the_targets(reason: str) -> bool:
    """Whether a not-applied reason lies beyond the targets: the upstream's doing, or the agent asking for no
    stream (a trial's target already said stream: true, and the run said "check targets")."""
    return blames_upstream(reason) or reason.startswith(NOT_STREAMED)


class Coverage:
    """What one decided fault did; `record()` is the JSON the journal adds to the fault.

    While a stream is still open `applied` may be False with no reason yet; `finish()` makes it final.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.effects: dict[str, str] = {}  # part of the exchange -> what changed in it
        self.reason: str | None = None
        self.final = False
        self.error_status: int | None = None  # the upstream's own status, when it answered with an error

    @property
    def applied(self) -> bool:
        return bool(self.effects)

    def changed(self, part: str, effect: str) -> None:
        self.effects[part] = effect

    def unchanged(self, reason: str) -> None:
        """Why a part of the action did not apply (the first reason is kept)."""
        self.reason = self.reason or reason

    def delayed(self, delay_ms: int) -> None:
        if delay_ms > 0:
            self.changed("delay", f"delayed {delay_ms} ms")

    def replied(self, status: int) -> None:
        self.changed("reply", f"replied {status}")

    def closed(self) -> None:
        self.changed("close", "connection closed")

    def rewrote(self, part: str, before: bytes, after: bytes) -> bool:
        """A buffered body went through a rewrite (`part`: "request" or "response"); True if it changed,
        and only then should the rewritten body be sent."""
        if same_content(before, after):
            self.nothing_to_rewrite("answer" if part == "response" else "request")
            return False
        self.changed(part, f"{part} body rewritten ({len(before)} -> {len(after)} bytes)")
        return True

    def answered(self, status: int) -> None:
        """The upstream's response began with `status`: an error (>= 400) is why a rewrite or a stream fault
        finds nothing to act on, whatever the config says."""
        self.error_status = status if status >= 400 else None

    def nothing_to_rewrite(self, where: str = "answer") -> None:
        if where == "answer" and self.error_status is not None:
            self.unchanged(self._error(f"an answer {self.kind} could rewrite"))
        else:
            self.unchanged(f"the fault changed nothing in the {where} ({self.kind}: nothing to rewrite)")

    def not_streamed(self) -> None:
        if self.error_status is not None:
            self.unchanged(self._error(f"a stream {self.kind} could act on"))
        else:
            self.unchanged(f"{NOT_STREAMED}: the answer came whole, and {self.kind} acts on streamed answers only")

    def _error(self, instead: str) -> str:
        return f"{UPSTREAM}answered {self.error_status} (an error), not {instead}"

    def streamed_whole(self) -> None:
        self.unchanged(f"the answer was streamed; {self.kind} rewrites only answers that are not streamed")

    def upstream_failed(self, error: str) -> None:
        if not self.applied:
            self.unchanged(f"{UPSTREAM}failed before the fault could apply: {error}")

    def finish(self) -> None:
        self.final = True

    @property
    def settled(self) -> bool:
        """Decided for good: applied (that cannot be undone) or the exchange is over."""
        return self.applied or self.final

    def record(self) -> dict[str, Any]:
        """The coverage fields of a FaultRecord (flakeproxy.wire.record)."""
        applied = self.applied
        reason = None if applied else self.reason
        if not applied and reason is None:
            reason = (
                f"the fault changed nothing ({self.kind}: nothing to do on this call)"
                if self.final
                else f"the exchange was still open when the episode ended, so whether {self.kind} reached the agent "
                "is unknown"
            )
        return {
            "applied": applied,
            "effect": ", ".join(self.effects.values()) or None,
            "not_applied_reason": reason,
            "settled": self.settled,
        }


class WatchedStream:
    """Feeds a StreamTransform and notes, as soon as it happens, when its output stops being its input.

    The output of an untouched stream is a prefix of its input (events are held back until complete),
    so only the input not yet given back is kept. A transform that is `done` before it consumed all
    the input has cut the stream.
    """

    def __init__(self, transform: StreamTransform, coverage: Coverage) -> None:
        self.transform, self.coverage = transform, coverage
        self._pending = bytearray()
        self._received = 0
        self._rewritten = False
        self._cut = False

    @property
    def done(self) -> bool:
        return self.transform.done

    @property
    def ended_by(self) -> str:
        return self.transform.ended_by

    @property
    def cut(self) -> bool:
        """The agent's stream ended before the upstream's (False for a transform that stopped at the stream's own
        end: nothing was cut)."""
        return self._cut

    def feed(self, chunk: bytes) -> bytes:
        self._received += len(chunk)
        out = b"" if self.transform.done else self.transform.feed(chunk)
        self._compare(chunk, out)
        self._check_cut(early=self.transform.cut)
        return out

    def finish(self) -> bytes:
        """The held-back rest at the end of the input (b"" once the transform is done)."""
        out = b"" if self.transform.done else self.transform.finish()
        self._compare(b"", out)
        self._check_cut(ended=True)
        if not (self._rewritten or self._cut):
            self.coverage.nothing_to_rewrite()
        return out

    def _compare(self, chunk: bytes, out: bytes) -> None:
        if self._rewritten or self._cut:  # decided: nothing more to hold (the upstream may go on for long)
            return
        self._pending += chunk
        if self._pending.startswith(out):
            del self._pending[: len(out)]
        else:
            self._rewritten = True
            self._pending.clear()
            self._note()

    def _check_cut(self, ended: bool = False, early: bool = False) -> None:
        """Cut: the transform ended the stream while the upstream was still sending (`early`: decided now, at the
        moment the agent's stream ends, whatever the upstream sends later), or input the transform never
        consumed (it stopped, or the stream ended mid-event)."""
        if self._cut or not (self.transform.done or ended):
            return
        if early or self._received > self.transform.consumed:
            self._cut = True
            self._pending.clear()
            self._note()

    def _note(self) -> None:
        parts = ["stream rewritten"] if self._rewritten else []
        if self._cut:
            parts.append(f"stream ended after {self.transform.events} events")
        self.coverage.changed("stream", ", ".join(parts))
