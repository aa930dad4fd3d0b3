"""`flakeproxy proxy` in a process of its own (so its memory can be read), started from a config dict."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.proxy import Control


@dataclass
class Child:
    pid: int
    control: Control

    def peak_rss_mib(self) -> float:
        """The process's peak resident memory so far (VmHWM), in MiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise AssertionError(f"no VmHWM for pid {self.pid}")


@contextmanager
def proxy_process(config: dict[str, Any], folder: Path) -> Iterator[Child]:
    path = folder / "proxy.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    command = [sys.executable, "-m", "flakeproxy", "proxy", "-c", str(path)]
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None and child.stderr is not None
            line = child.stdout.readline()  # one ready line, or nothing when it exits
            assert line.startswith("flakeproxy proxy ready"), (line, child.poll() is not None and child.stderr.read())
            yield Child(child.pid, Control(f"http://{config['proxy']['admin']}"))
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGTERM)
            child.wait(15)
