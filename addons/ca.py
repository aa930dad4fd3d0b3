"""The CA the forward listener signs intercepted HTTPS with, and the trust the proxy gives upstreams.

The CA lives in `proxy.ca_dir` as mitmproxy keeps it in its confdir: mitmproxy-ca.pem (private key and
certificate, mode 0600) and mitmproxy-ca-cert.pem (the certificate agents trust). It is made on first
use and reused after, so agents keep trusting the same certificate across restarts.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import certifi
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mitmproxy.certs import CertStore

from flakeproxy.config import ProxyConfig
from flakeproxy.errors import ConfigError, InfrastructureError

BASENAME = "mitmproxy"  # mitmproxy reads <confdir>/mitmproxy-ca.pem
KEY_SIZE = 2048
UPSTREAM_TRUST = "flakeproxy-upstream-trust.pem"


@dataclass(frozen=True)
class CaFiles:
    folder: Path
    key: Path  # private key and certificate
    cert: Path  # the certificate alone, what agents trust

    def pem(self) -> str:
        return self.cert.read_text()

    def bundle(self) -> str:
        """The public roots (certifi's Mozilla bundle) followed by this CA: for a client whose trust variable
        replaces its defaults (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, curl's --cacert) while hosts pass through."""
        public = Path(certifi.where()).read_text()
        return public.rstrip("\n") + "\n\n# flakeproxy forward-listener CA\n" + self.pem()


def check_out(target: Path, files: CaFiles) -> None:
    """ConfigError when `flakeproxy ca --out` would write onto one of the CA's own files (its private key above
    all): any mitmproxy-* file in proxy.ca_dir, the upstream trust bundle, or the same file by another path."""
    own = [*files.folder.glob(f"{BASENAME}-*"), files.key, files.cert, files.folder / UPSTREAM_TRUST]
    resolved = target.expanduser().resolve()
    hits = [f for f in own if f.resolve() == resolved or (f.exists() and target.exists() and f.samefile(target))]
    if hits or (resolved.parent == files.folder.resolve() and resolved.name.startswith(f"{BASENAME}-")):
        which = hits[0].name if hits else resolved.name
        instead = files.folder / "flakeproxy-ca.pem"
        raise ConfigError(
            f"--out {target} is the CA's own {which} in proxy.ca_dir {files.folder}; writing there would replace it "
            f"({BASENAME}-ca.pem holds the private key); write to another file, e.g. {instead}"
        )


def ca_files(config: ProxyConfig) -> CaFiles:
    folder = Path(config.ca_dir).expanduser()
    return CaFiles(folder, folder / f"{BASENAME}-ca.pem", folder / f"{BASENAME}-ca-cert.pem")


def ensure_ca(config: ProxyConfig) -> CaFiles:
    """The CA in proxy.ca_dir, made there if it is not yet; its private key readable by the owner only."""
    files = ca_files(config)
    where = f"proxy.ca_dir {config.ca_dir}"
    if files.folder.exists() and not files.folder.is_dir():
        raise ConfigError(f"{where} is a file, not a folder; point proxy.ca_dir at a folder")
    try:
        if not files.key.exists():
            CertStore.create_store(files.folder, BASENAME, KEY_SIZE)
        elif not files.cert.exists():  # a CA someone placed there (key and certificate in one PEM)
            cert = x509.load_pem_x509_certificates(files.key.read_bytes())[0]
            files.cert.write_bytes(cert.public_bytes(Encoding.PEM))
    except OSError as e:
        raise InfrastructureError(f"cannot create the CA in {where}: {e.strerror}; make the folder writable") from e
    except ValueError as e:
        raise ConfigError(f"{files.key} holds no PEM certificate ({e}); remove it to have a new CA made") from e
    _check_pair(files)
    for secret in (files.key, files.folder / f"{BASENAME}-ca.p12"):  # the p12 holds the key too
        mode = stat.S_IMODE(secret.stat().st_mode) if secret.exists() else 0
        if mode & 0o077:
            try:
                os.chmod(secret, 0o600)
            except OSError as e:
                raise InfrastructureError(
                    f"{secret} (the CA's private key) is readable by others (mode {mode:o}) and cannot be made "
                    f"0600 ({e.strerror}); chmod 600 it (Kubernetes: defaultMode: 0400 on its volume)"
                ) from e
    return files


def _check_pair(files: CaFiles) -> None:
    """ConfigError unless mitmproxy-ca.pem holds a private key and, first of its certificates, the one the key
    belongs to: the proxy loads the key without cryptography's RSA check (addons/master.py OwnCaTlsConfig), so a
    key that is not the certificate's is caught here, at start, not by every agent's TLS handshake."""
    try:
        raw = files.key.read_bytes()
    except OSError as e:
        raise InfrastructureError(f"cannot read {files.key} (the CA): {e.strerror}; make it readable") from e
    remove = "remove it (and mitmproxy-ca-cert.pem) to have a new CA made"
    try:
        key = serialization.load_pem_private_key(raw, None, unsafe_skip_rsa_key_validation=True)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{files.key} holds no unencrypted PEM private key ({e}); {remove}") from e
    try:
        cert = x509.load_pem_x509_certificates(raw)[0]
    except ValueError as e:
        raise ConfigError(f"{files.key} holds no PEM certificate ({e}); {remove}") from e
    spki = (Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    if key.public_key().public_bytes(*spki) != cert.public_key().public_bytes(*spki):
        raise ConfigError(f"{files.key}: its private key does not belong to its first certificate; {remove}")


def upstream_trust(config: ProxyConfig, files: CaFiles) -> str | None:
    """The PEM file mitmproxy verifies upstreams against: None (certifi's public roots) unless proxy.upstream_ca
    adds a private CA, then a bundle of both written into the CA folder."""
    if config.upstream_ca is None:
        return None
    extra = Path(config.upstream_ca).expanduser()
    try:
        text = extra.read_text()
    except OSError as e:
        raise ConfigError(f"proxy.upstream_ca {config.upstream_ca}: cannot read it ({e.strerror}); fix the path") from e
    try:
        x509.load_pem_x509_certificates(text.encode())
    except ValueError as e:
        raise ConfigError(
            f"proxy.upstream_ca {config.upstream_ca} holds no PEM certificate; give a file of -----BEGIN "
            "CERTIFICATE----- blocks"
        ) from e
    bundle = files.folder / UPSTREAM_TRUST
    public = Path(certifi.where()).read_text()
    try:
        bundle.write_text(public.rstrip("\n") + f"\n\n# proxy.upstream_ca {extra}\n" + text)
    except OSError as e:
        raise InfrastructureError(
            f"cannot write {bundle} (the public roots and proxy.upstream_ca, for mitmproxy): {e.strerror}; "
            "make proxy.ca_dir writable"
        ) from e
    return str(bundle)
