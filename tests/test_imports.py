"""Start-up cost (issue 23): what a fresh interpreter imports for `import flakeproxy`, `flakeproxy --help` and the
proxy. Each check runs in its own interpreter, since this one has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from flakeproxy.cli.main import COMMANDS, LazyGroup, cli, short_help
from tests.conftest import REPO
from tests.support.loops import free_port


def imported(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    return set(json.loads(done.stdout.splitlines()[-1]))


def under(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_import_flakeproxy_loads_no_config_models() -> None:
    modules = imported("import flakeproxy")
    assert under(modules, "flakeproxy.config", "pydantic", "jsonschema", "flakeproxy.invariants") == []


def test_a_public_name_still_comes_from_the_package() -> None:
    modules = imported("import flakeproxy\nassert flakeproxy.load_config.__module__ == 'flakeproxy.config.loader'")
    assert "flakeproxy.config" in modules  # imported on first use
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = __import__("flakeproxy").nothing


def test_help_imports_no_command_module() -> None:
    code = "from flakeproxy.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    modules = imported(code)
    commands = sorted({module for module, _, _ in COMMANDS.values()})
    assert [m for m in commands if m in modules] == []
    assert under(modules, "flakeproxy.config", "pydantic", "mitmproxy", "aiohttp") == []


#: What `flakeproxy proxy -c` runs, up to serving: the command loads the config, then refuses a control API beyond
#: loopback without a token (so nothing listens); then the server it would build from that config.
PROXY_WAY = """\
from flakeproxy.cli.main import main
from flakeproxy.addons.server import ProxyServer
from flakeproxy.config import WireConfig, load_config
try:
    main(["proxy", "-c", {path!r}, "--admin", "0.0.0.0:0"])
except SystemExit as e:
    assert e.code == 2, e.code
ProxyServer(load_config({path!r}, model=WireConfig))
"""


@pytest.mark.parametrize("example", ["examples/quickstart/flakeproxy.yaml", "examples/spec-syntax.yaml"])
def test_the_proxy_imports_no_runner_reports_or_mutations(example: str) -> None:
    """Nor the invariant catalogue and the judging behind it, nor replay, for a config with a contract (issue 23
    item 3): the proxy validates a WireConfig, whose invariants stay as written."""
    modules = imported(PROXY_WAY.format(path=str(REPO / example)))
    unwanted = ("flakeproxy.runner", "flakeproxy.reports", "flakeproxy.mutations", "flakeproxy.planning")
    assert under(modules, *unwanted) == []
    assert under(modules, "flakeproxy.invariants", "flakeproxy.judging", "flakeproxy.replay") == []
    assert "flakeproxy.config.wire_config" in modules  # the config was loaded
    # what only judging needs, and mitmproxy's default addons it never runs (flakeproxy.addons.lean_import)
    assert under(modules, "jsonschema", "ldap3", "flask", "jinja2", "werkzeug") == []
    # aiohttp's server without its client, whose connector reads the CA bundle twice at import (lean_import)
    assert "aiohttp.web" in modules and under(modules, "aiohttp.client", "aiohttp.connector") == []


def test_aiohttp_is_whole_once_something_asks_for_its_client() -> None:
    """The package the proxy loaded without its __init__ is the real one the first time a name outside its
    submodules is asked for."""
    code = "import flakeproxy.addons.server, aiohttp, sys\nassert aiohttp.ClientSession.__module__ == 'aiohttp.client'"
    modules = imported(code + "\nassert aiohttp.__version__ and 'aiohttp.connector' in sys.modules")
    assert "aiohttp.connector" in modules


@pytest.mark.parametrize("package", ["aiohttp", "mitmproxy"])
def test_the_version_the_lean_import_sets_is_the_installed_one(package: str) -> None:
    """aiohttp's __version__ read from the head of its __init__ (issue 23: no scan of every installed distribution),
    and a package whose __init__ states none (mitmproxy's) from its metadata, both as pip installed them."""
    from importlib.metadata import version

    from flakeproxy.addons.lean_import import _version_of

    assert _version_of(package) == version(package)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_help_line_is_the_commands_own(name: str) -> None:
    """The text kept for `flakeproxy --help` shortens, at every width, to what the command's own help gives."""
    command = LazyGroup.get_command(cli, click.Context(cli), name)
    assert command is not None and command.name == name
    for limit in range(30, 100):
        assert short_help(name, limit) == command.get_short_help_str(limit), limit


@pytest.mark.parametrize(
    "package",
    [
        "flakeproxy.faults",
        "flakeproxy.invariants",
        "flakeproxy.config.base",
        "flakeproxy.config.scenario",
        "flakeproxy.judging",
        "flakeproxy.planning",
        "flakeproxy.reports",
        "flakeproxy.wire",
        "flakeproxy.proxycore",
        "flakeproxy.mutations",
        "flakeproxy.replay",
        "flakeproxy.telemetry",
    ],
)
def test_each_package_imports_first_in_a_fresh_interpreter(package: str) -> None:
    """No import circle: a package imported before anything else loads whole (flakeproxy.faults did not: it
    reached flakeproxy.config, whose __init__ imported the scenario model, which imports the faults)."""
    assert package in imported(f"import {package}")


def test_contract_run_starts_its_proxy_before_the_models_load() -> None:
    """What `contract run` has imported when it starts the proxy child (runner/proxy_child.py early_proxy): the CLI
    and a YAML reader, not asyncio, the config models, the runner or the reports, whose imports then overlap the
    child's."""
    modules = imported(
        "import flakeproxy.cli.main, flakeproxy.cli.contract\nfrom flakeproxy.runner.proxy_child import early_proxy"
    )
    heavy = (
        "asyncio",
        "pydantic",
        "flakeproxy.config.model",
        "flakeproxy.runner.engine",
        "flakeproxy.results",
        "mitmproxy",
    )
    assert under(modules, *heavy) == []


def test_the_proxy_loads_no_pydantic_plugin(tmp_path: Path) -> None:
    """Looking for pydantic plugins read every installed package's entry points (15 ms of each proxy start): the
    proxy does not look. A plugin on the path, which the same interpreter loads for a model of the user's, is not
    loaded by `flakeproxy proxy` (it would write its mark)."""
    mark = tmp_path / "loaded"
    plugin = "class Plugin:\n    def new_schema_validator(self, *args, **kwargs):\n        return None, None, None\n"
    (tmp_path / "markplugin.py").write_text(f"open({str(mark)!r}, 'w').close()\n{plugin}plugin = Plugin()\n")
    info = tmp_path / "markplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: markplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nmark = markplugin:plugin\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    model = "import pydantic\nclass M(pydantic.BaseModel):\n    x: int = 0"
    subprocess.run([sys.executable, "-c", model], env=env, check=True, timeout=60)
    assert mark.exists(), "the plugin is found where nothing turns it off"
    mark.unlink()
    config = tmp_path / "flakeproxy.yaml"
    admin, listen = free_port(), free_port()
    config.write_text(
        f'version: "2.0"\nproxy:\n  admin: 127.0.0.1:{admin}\n  listeners:\n    - name: llm\n'
        f"      listen: 127.0.0.1:{listen}\n      upstream: http://127.0.0.1:9\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "flakeproxy", "proxy", "-c", str(config)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().startswith("flakeproxy proxy ready")
    finally:
        child.terminate()
        child.wait(15)
        child.stdout.close()  # type: ignore[union-attr]
    assert not mark.exists()


GC_WAY = """\
import gc, sys
from flakeproxy.cli import main as m
usual = gc.get_threshold()
def command(argv):
    assert gc.get_threshold() == m.STARTING_THRESHOLD, gc.get_threshold()
    m.started()
    assert gc.get_threshold() == usual and gc.get_freeze_count() > 0
    m.started()  # a second call changes nothing
    assert gc.get_threshold() == usual
    print("ran", flush=True)
    sys.exit(0)
m.main = command
m.entry([])
"""


def test_the_collector_waits_while_a_command_starts() -> None:
    """entry() holds young collections back (30 ms of the proxy's start) until the command says started(), which
    freezes what start-up made and puts the usual thresholds back."""
    done = subprocess.run([sys.executable, "-c", GC_WAY], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr


def test_a_run_loads_no_http_server_it_does_not_run() -> None:
    """The runner's engine and agent adapters without aiohttp's server (runner/mock.py): a run loads it when its
    config has an http_mock service to serve."""
    modules = imported("import flakeproxy.runner.engine, flakeproxy.runner.agents")
    assert "flakeproxy.runner.engine" in modules
    assert under(modules, "aiohttp.web", "flakeproxy.runner.mock") == []
