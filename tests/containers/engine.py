"""The container engine the `containers` tests drive: podman, for real (set up by ../shared/tools/containers).

Everything a test makes is named with PREFIX and this session's id, and removed by the fixture that made it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO

PREFIX = f"fpct-{os.getpid()}"
#: The machine's CA bundle, mounted into `podman build` so that pip in the build reaches the package registry.
BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
SETUP = "set one up with `bash scripts/test-containers` (root and apt-get; it runs ../shared/tools/containers)"


def why_no_engine() -> str | None:
    """None when podman runs containers here; else the one reason the container tests skip."""
    missing = [tool for tool in ("podman", "podman-compose") if shutil.which(tool) is None]
    if missing:
        return f"no container engine: {' and '.join(missing)} not installed; {SETUP}"
    info = subprocess.run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"], capture_output=True, text=True)
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["no output"])[-1]
        return f"no container engine: `podman info` failed ({last}); {SETUP}"
    return None


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert out.returncode == 0, f"podman {' '.join(args)[:300]}: exit {out.returncode}\n{out.stderr[-3000:]}"
    return out


def build(context: Path, tag: str, *extra: str, dockerfile: str = "docker/Dockerfile") -> None:
    mount = ["-v", f"{BUNDLE}:{BUNDLE}:ro"] if BUNDLE.exists() else []
    # --layers=false: no intermediate images left behind (the build stage's would stay, untagged)
    podman("build", "-q", "--layers=false", *mount, *extra, "-f", dockerfile, "-t", tag, str(context), timeout=600)


def clean_checkout(into: Path) -> Path:
    """The repository's files as a fresh clone (plus uncommitted work) would have them: tracked and untracked,
    nothing git ignores (.venv, build/, caches), so the image builds from what a user checks out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = REPO / name
        if source.is_file():  # a deleted, not yet committed file is still listed
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def logs(container: str) -> str:
    out = podman("logs", container, check=False)
    return out.stdout + out.stderr


def status(container: str) -> str:
    return podman("inspect", "--format", "{{.State.Status}}", container, check=False).stdout.strip()


def wait_log(container: str, text: str, deadline_s: float = 60) -> None:
    """Until the container's log shows text (its ready line); fails with the log if it exits or time runs out."""
    deadline = time.monotonic() + deadline_s
    while text not in logs(container):
        state = status(container)
        assert state == "running" and time.monotonic() < deadline, (
            f"{container} ({state}) never logged {text!r} in {deadline_s} s:\n{logs(container)[-3000:]}"
        )
        time.sleep(0.2)


def wait_exit(container: str, timeout_s: float = 300) -> int:
    """The container's exit code, once it has stopped."""
    out = podman("wait", container, timeout=timeout_s)
    return int(out.stdout.strip().splitlines()[-1])


def exec_in(container: str, *command: str) -> subprocess.CompletedProcess[str]:
    return podman("exec", container, *command, check=False, timeout=60)


def read_volume(image: str, volume: str, path: str) -> str:
    """A file on a named volume, read through a throwaway container of image."""
    return podman("run", "--rm", "-v", f"{volume}:/v:ro", "--entrypoint", "cat", image, f"/v/{path}").stdout


@dataclass
class Made:
    """What a test made in the engine, removed in reverse kind order (containers before their volumes)."""

    containers: list[str] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)

    def name(self, what: str) -> str:
        return f"{PREFIX}-{what}"

    def remove(self) -> None:
        if self.containers:  # -v: their anonymous volumes too (the image's VOLUME)
            podman("rm", "-f", "-v", "-t", "0", *self.containers, check=False)
        for pod in self.pods:
            podman("pod", "rm", "-f", "-t", "0", pod, check=False)
        if self.volumes:
            podman("volume", "rm", "-f", *self.volumes, check=False)
        if self.networks:
            podman("network", "rm", "-f", *self.networks, check=False)
        if self.images:
            podman("rmi", "-f", *self.images, check=False)


@contextmanager
def made() -> Iterator[Made]:
    things = Made()
    try:
        yield things
    finally:
        things.remove()


def project_leftovers(project: str) -> Made:
    """Everything podman-compose made for a project: its containers (by label), volumes and network."""
    label = f"label=io.podman.compose.project={project}"
    containers = podman("ps", "-a", "-q", "--filter", label).stdout.split()
    volumes = [v for v in podman("volume", "ls", "-q").stdout.split() if v.startswith(f"{project}_")]
    return Made(containers=containers, volumes=volumes, networks=[f"{project}_default"])
