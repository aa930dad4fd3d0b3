"""The docker image's size: what flakeproxy adds to its base image (the budget), and the whole.

Run: .venv/bin/python bench/image_size.py [IMAGE]    (default localhost/flakeproxy:local; build it first with
`bash ../shared/tools/containers build`, or `docker build -f docker/Dockerfile -t flakeproxy:local .`)

The base is docker/Dockerfile's last FROM (python:3.13-slim): on these machines a local stand-in made from
Debian trixie, bigger than the real one, so the budget is on what our layers add (the wheel and its
dependencies, as pip installs them, bytecode included), which does not depend on the base. Exits 1 over budget.
It asks `podman`, else `docker`.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parent.parent / "docker" / "Dockerfile"
#: What flakeproxy's layers may add to the base image, in MB (1e6 bytes). Measured 2026-11-24: 137 MB.
BUDGET_ADDED_MB = 180


def engine() -> str:
    for name in ("podman", "docker"):
        if shutil.which(name):
            return name
    sys.exit("image_size: neither podman nor docker is installed")


def size(tool: str, image: str) -> int:
    out = subprocess.run([tool, "image", "inspect", image], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"image_size: no image {image} ({out.stderr.strip()}); build it first")
    return int(json.loads(out.stdout)[0]["Size"])


def base_image() -> str:
    return re.findall(r"^FROM\s+(\S+)", DOCKERFILE.read_text(), re.MULTILINE)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image", nargs="?", default="localhost/flakeproxy:local")
    args = parser.parse_args()
    tool = engine()
    whole, base = size(tool, args.image), size(tool, base_image())
    added = (whole - base) / 1e6
    verdict = "within" if added <= BUDGET_ADDED_MB else "OVER"
    print(f"image {args.image}: {whole / 1e6:.0f} MB")
    print(f"base {base_image()}: {base / 1e6:.0f} MB")
    print(f"added by flakeproxy: {added:.0f} MB ({verdict} the budget of {BUDGET_ADDED_MB} MB)")
    sys.exit(0 if verdict == "within" else 1)


if __name__ == "__main__":
    main()
