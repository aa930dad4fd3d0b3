"""Run the fuzz corpus through the real loader, one config at a time under a 1 s alarm of CPU time.

CPU time, not wall time: a hang (a loop, an expansion) burns CPU, while a machine busy with other work only
stretches the wall clock (seen: a 0.3 s config reported as a hang at a load average of 7 on 2 cores).

`python -m tests.config.fuzz_worker [SEED] [SIZE]` prints one JSON line per config: its index, the
outcome (ok, config_error, crash, hang), the CPU seconds it took and the message (the error or traceback).
"""

from __future__ import annotations

import json
import signal
import sys
import time
import traceback
from types import FrameType

from flakeproxy.config import parse_config
from flakeproxy.errors import ConfigError
from tests.config.fuzz_corpus import SEED, SIZE, corpus

LIMIT_S = 1.0


class Hang(BaseException):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def run_one(text: str) -> tuple[str, str]:
    signal.setitimer(signal.ITIMER_VIRTUAL, LIMIT_S)
    try:
        parse_config(text, "fuzz.yaml", environ={})
        return "ok", ""
    except ConfigError as e:
        return "config_error", str(e)
    except Hang:
        return "hang", ""
    except Exception:
        return "crash", traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else SEED
    size = int(sys.argv[2]) if len(sys.argv) > 2 else SIZE
    signal.signal(signal.SIGVTALRM, _alarm)
    for i, text in enumerate(corpus(seed, size)):
        start = time.process_time()
        outcome, message = run_one(text)
        print(json.dumps({"index": i, "outcome": outcome, "seconds": time.process_time() - start, "message": message}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
