"""Files a config names are read safely (issue 21 items 9, 10 and the 20 MB config string of item 11).

- `replays.sources` takes regular files only, bounded in size, and never echoes what a file holds: /dev/zero gave
  a MemoryError traceback, a FIFO hung `validate` over 20 s, and /etc/shadow's first line was echoed in the error.
- `flakeproxy ca --out <ca_dir>/mitmproxy-ca.pem` wrote the certificate over the CA's private key, mode 0644,
  without a word; now it refuses, through a symlink too.
- A config of 20 MB took 8-10 s to parse; now it is refused at once for its size.
Each case is timed against a baseline: `validate` of the same config with a good session file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

SECRET_LINE = "root:$6$PLANTED-hash-0d5e$:19000:0:99999:7:::"
CONFIG = {
    "version": "2.0",
    "agent": {"type": "http", "endpoint": "http://127.0.0.1:9/chat", "response_path": "$.reply"},
    "golden_prompts": ["hi"],
    "proxy": {"listeners": [{"name": "tools", "listen": "127.0.0.1:0", "upstream": "http://127.0.0.1:9"}]},
}


def validate(config: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out, time.monotonic() - start


def with_sources(tmp: Path, source: str) -> Path:
    config = tmp / "flakeproxy.yaml"
    config.write_text(yaml.safe_dump({**CONFIG, "replays": {"sources": [source]}}))
    return config


@pytest.fixture
def baseline(tmp_path: Path) -> float:
    (tmp_path / "good.yaml").write_text("id: good\ninput: hi\n")
    out, took = validate(with_sources(tmp_path, "good.yaml"))
    assert out.returncode == 0, out.stderr
    return took


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "shadow-like", "huge"])
def test_a_hostile_session_source_is_one_quick_line_that_echoes_nothing(
    tmp_path: Path, baseline: float, kind: str
) -> None:
    if kind == "dev-zero":
        source, says = "/dev/zero", "/dev/zero: is a character device, not a session file; name a regular file"
    elif kind == "fifo":
        source, says = str(tmp_path / "pipe.yaml"), "pipe.yaml: is a FIFO (named pipe), not a session file"
        os.mkfifo(source)
    elif kind == "shadow-like":
        source, says = str(tmp_path / "shadow"), "line 1: (top level): an unknown key; valid keys: id, input,"
        Path(source).write_text(f"{SECRET_LINE}\ndaemon:*:19000:0:99999:7:::\n")
        os.chmod(source, 0o600)
    else:
        source, says = str(tmp_path / "huge.yaml"), "huge.yaml: is 65.0 MiB; a session file is at most 64.0 MiB"
        with open(source, "wb") as f:
            f.truncate(65 * 1024 * 1024)
    out, took = validate(with_sources(tmp_path, source))
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and says in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "PLANTED" not in out.stderr and "daemon" not in out.stderr
    assert took < 3 * baseline + 1, f"{took:.1f} s (a good session file: {baseline:.1f} s)"


@pytest.mark.timeout(120)
def test_a_twenty_megabyte_config_is_refused_at_once(tmp_path: Path, baseline: float) -> None:
    config = tmp_path / "big.yaml"
    # written as text: yaml.safe_dump of a 20 MB string alone took most of this test's 100 s
    rest = {k: v for k, v in CONFIG.items() if k != "golden_prompts"}
    config.write_text(yaml.safe_dump(rest) + 'golden_prompts: ["' + "x" * 20_000_000 + '"]\n')
    out, took = validate(config)
    assert out.returncode == 2 and out.stderr == f"error: {config}: is 19.1 MiB; a config is at most 1.0 MiB\n"
    assert took < 3 * baseline + 1, f"{took:.1f} s (a small config: {baseline:.1f} s)"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["the key file", "a symlink to it", "the certificate file"])
def test_ca_out_refuses_the_cas_own_files(tmp_path: Path, how: str) -> None:
    ca_dir = tmp_path / "ca"
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(yaml.safe_dump({"version": "2.0", "proxy": {"ca_dir": str(ca_dir)}}))
    ca = [sys.executable, "-m", "flakeproxy", "ca", "-c", str(config)]
    subprocess.run([*ca, "--path"], capture_output=True, check=True, timeout=60)  # makes the CA
    key = ca_dir / "mitmproxy-ca.pem"
    before = key.read_bytes()
    target = {"the key file": key, "the certificate file": ca_dir / "mitmproxy-ca-cert.pem"}.get(how)
    if target is None:
        target = tmp_path / "ca.pem"
        target.symlink_to(key)
    out = subprocess.run([*ca, "--bundle", "--out", str(target)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.startswith(f"error: --out {target} is the CA's own "), out.stderr
    assert key.read_bytes() == before and (key.stat().st_mode & 0o777) == 0o600, "the key is untouched"
    fine = subprocess.run([*ca, "--out", str(ca_dir / "flakeproxy-ca.pem")], capture_output=True, timeout=60)
    assert fine.returncode == 0 and (ca_dir / "flakeproxy-ca.pem").read_text().startswith("-----BEGIN CERTIFICATE")
