"""A test CA of our own (made with `cryptography`) and real HTTPS upstreams on loopback that present
certificates it signs for real-looking host names: the upstreams a staging agent calls, in a test."""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from tests.support.loops import LoopThread, free_port
from tests.support.upstream import Upstream, _App


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


@dataclass
class UpstreamCa:
    """A CA: its certificate file (what a client trusts), and leaf certificates it signs."""

    folder: Path
    cert_file: Path
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    cert: x509.Certificate

    def leaf(self, hosts: list[str]) -> ssl.SSLContext:
        """A server TLS context with a certificate for these host names, signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(hosts[0]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(  # Python 3.13 verifies strictly (VERIFY_X509_STRICT): a leaf must name its issuer's key
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )
        chain = self.folder / f"{hosts[0]}.pem"
        chain.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            + cert.public_bytes(serialization.Encoding.PEM)
        )
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(chain)
        return context


def make_ca(folder: Path, name: str = "flakeproxy test upstream CA", rsa_key: bool = False) -> UpstreamCa:
    folder.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(65537, 2048) if rsa_key else ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file = folder / "test-ca.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return UpstreamCa(folder, cert_file, key, cert)


@contextmanager
def https_upstream(context: ssl.SSLContext) -> Iterator[Upstream]:
    """tests.support.upstream's fake LLM and tool API, served over TLS with this context on a free
    loopback port; up.url is https://127.0.0.1:PORT (clients reach it by a host name mapped there)."""
    thread = LoopThread("https-upstream")
    port = free_port()
    upstream = Upstream(f"https://127.0.0.1:{port}")
    state = _App(upstream, 0.0)

    async def start() -> web.AppRunner:
        app = web.Application(middlewares=[state.record])
        app.add_routes(
            [
                web.get("/v1/quotes", state.quotes),
                web.post("/v1/chat/completions", state.llm),
                web.post("/v1/messages", state.llm),
            ]
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context).start()
        return runner

    runner = thread.run(start())
    try:
        yield upstream
    finally:
        thread.run(runner.cleanup())
        thread.close()
