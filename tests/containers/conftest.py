"""Fixtures of the `containers` tests: the engine (or one reason to skip), the image built from a clean
checkout, and a stand-in for a user's agent image. Run them with `pytest -m containers`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containers.engine import PREFIX, build, clean_checkout, podman, why_no_engine

WORLD = Path(__file__).resolve().parent / "world"


@pytest.fixture(scope="session")
def engine() -> None:
    reason = why_no_engine()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clean_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="session")
def image(engine: None, checkout: Path) -> Iterator[str]:
    """docker/Dockerfile built from a clean checkout, in the engine's default (OCI) format."""
    tag = f"localhost/{PREFIX}-flakeproxy:oci"
    build(checkout, tag)
    yield tag
    podman("rmi", "-f", tag, check=False)


@pytest.fixture(scope="session")
def docker_image(engine: None, checkout: Path) -> Iterator[str]:
    """The same image in docker format (`--format docker`), the one in which HEALTHCHECK is kept."""
    tag = f"localhost/{PREFIX}-flakeproxy:docker"
    build(checkout, tag, "--format", "docker")
    yield tag
    podman("rmi", "-f", tag, check=False)


@pytest.fixture(scope="session")
def agent_image(image: str) -> Iterator[str]:
    """A stand-in for a user's agent image (world/agent.Containerfile): the demo agent, its URLs from the
    environment a Kubernetes manifest gives it, else baked in (https://api.openai.com, ...)."""
    tag = f"localhost/{PREFIX}-agent:test"
    build(WORLD, tag, "--build-arg", f"BASE={image}", dockerfile=str(WORLD / "agent.Containerfile"))
    yield tag
    podman("rmi", "-f", tag, check=False)
