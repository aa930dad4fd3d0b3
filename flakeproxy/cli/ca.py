"""`flakeproxy ca`: the CA the forward listener signs intercepted HTTPS with, for agents to trust."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import click

from flakeproxy.cli.options import config_option
from flakeproxy.config import WireConfig, load_config
from flakeproxy.errors import ConfigError


@click.command()
@config_option
@click.option("--pem", "what", flag_value="pem", default=True, help="Print the CA certificate (PEM); the default.")
@click.option("--path", "what", flag_value="path", help="Print the path of the CA certificate file.")
@click.option(
    "--bundle",
    "what",
    flag_value="bundle",
    help="Print the public roots followed by the CA: for trust variables that replace a client's defaults "
    "(SSL_CERT_FILE, REQUESTS_CA_BUNDLE, curl --cacert) while other hosts pass through.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    help="Write it to this file (mode 0644, e.g. on a volume the agent mounts) instead of printing it.",
)
def ca(config_path: str, what: str, out: str | None) -> None:
    """Print the forward listener's CA certificate (made in proxy.ca_dir if it is not there yet).

    The proxy makes the same CA on its first start and reuses it after; its private key never
    leaves proxy.ca_dir. Trust the certificate in the agent: see docs/staging.md, "The CA"
    (the docs site's Staging page).
    """
    config = _without_token(config_path)
    from flakeproxy.addons.ca import check_out, ensure_ca  # needs mitmproxy's certificate code

    files = ensure_ca(config.proxy)
    if out is not None:
        check_out(Path(out), files)  # never onto the CA's own files (its private key)
    texts: dict[str, Callable[[], str]] = {"pem": files.pem, "bundle": files.bundle, "path": lambda: f"{files.cert}\n"}
    text = texts[what]()
    if out is None:
        click.echo(text, nl=False)
        return
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    os.chmod(target, 0o644)
    click.echo(f"wrote {target}", err=True)


def _without_token(config_path: str) -> WireConfig:
    """The config, read without the control token's variable: making or printing the CA needs no token, and a
    trial's CA job had to be handed the sidecar's secret only to get past `proxy.token: ${FP_SIDECAR_TOKEN}`."""
    environ = dict(os.environ)
    for _ in range(3):  # the token's variables, one a try (a token written as ${A}${B})
        try:
            return load_config(config_path, environ, model=WireConfig)
        except ConfigError as e:
            unset = re.search(r": proxy\.token: environment variable (\w+) is not set", str(e))
            if unset is None:
                raise
            environ[unset.group(1)] = "not-needed-for-the-ca"
    return load_config(config_path, environ, model=WireConfig)
