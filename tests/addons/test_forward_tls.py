"""The forward listener's TLS, seen by a raw HTTPS client through CONNECT: which certificate it is shown
(pass-through vs interception), the CA folder across restarts, and how upstream certificates are verified."""

from __future__ import annotations

import os
import shutil
import ssl
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from mitmproxy import certs

from flakeproxy.cli.main import cli
from flakeproxy.errors import ConfigError
from tests.support.forward import OTHER_HOST, World, forward_config, staging_world, through_forward, trust_file
from tests.support.proxy import running_proxy
from tests.support.tls import make_ca

UPSTREAM_CA = "flakeproxy test upstream CA"
_MITMPROXY_LOADER = certs.load_pem_private_key


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with staging_world(tmp_path_factory.mktemp("upstream-ca")) as w:
        yield w


def test_a_host_no_target_names_passes_through_with_its_own_certificate(world: World, tmp_path: Path) -> None:
    config, forward = forward_config(world, tmp_path / "ca")
    before = world.other.count()
    with running_proxy(config) as p:
        # trusting only the upstream's own CA: the proxy's CA is not needed for a host it does not decrypt
        seen = through_forward(forward, OTHER_HOST, "/v1/quotes?symbol=MSFT", world.ca.cert_file)
        assert seen.status == 200 and b'"MSFT"' in seen.body
        assert seen.issuer == UPSTREAM_CA  # the upstream's certificate, not one the proxy made
        assert p.control.journal() == []  # nothing of a tunnelled host is seen, so nothing is journaled
        # a target host on the same listener is decrypted: the proxy's certificate, journaled
        both = trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem", world.ca.cert_file)
        target = through_forward(forward, "api.openai.com", "/v1/quotes", both)
        assert target.status == 200 and target.issuer == "mitmproxy"
        assert [(e["url"], e["targets"]) for e in p.control.journal()] == [
            ("https://api.openai.com/v1/quotes", ["openai"])
        ]
    assert world.other.count() == before + 1


def test_intercept_all_decrypts_every_host(world: World, tmp_path: Path) -> None:
    config, forward = forward_config(world, tmp_path / "ca", intercept="all")
    with running_proxy(config) as p:
        with pytest.raises(ssl.SSLCertVerificationError):
            through_forward(forward, OTHER_HOST, "/v1/quotes", world.ca.cert_file)
        trust = trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem")
        seen = through_forward(forward, OTHER_HOST, "/v1/quotes", trust)
        assert seen.status == 200 and seen.issuer == "mitmproxy"
        [entry] = p.control.journal()
        assert entry["url"] == f"https://{OTHER_HOST}/v1/quotes" and entry["targets"] == []


def test_the_ca_folder_is_made_once_kept_private_and_reused_after_a_restart(world: World, tmp_path: Path) -> None:
    ca_dir = tmp_path / "state" / "ca"
    config, forward = forward_config(world, ca_dir)
    (tmp_path / "flakeproxy.yaml").write_text(config)
    key, cert = ca_dir / "mitmproxy-ca.pem", ca_dir / "mitmproxy-ca-cert.pem"
    assert not ca_dir.exists()
    with running_proxy(config):
        first = cert.read_bytes()
        assert stat.S_IMODE(key.stat().st_mode) == stat.S_IMODE((ca_dir / "mitmproxy-ca.p12").stat().st_mode) == 0o600
        assert b"PRIVATE KEY" in key.read_bytes() and b"PRIVATE KEY" not in first
        # the certificate agents trust is the one the proxy signs with
        trust = trust_file(tmp_path, cert)
        assert through_forward(forward, "api.openai.com", "/v1/quotes", trust).status == 200
    with running_proxy(config):
        assert cert.read_bytes() == first  # same CA: agents keep trusting it across restarts
        assert through_forward(forward, "api.openai.com", "/v1/quotes", trust).status == 200
    # flakeproxy ca prints it (or its path, or the public roots and it)
    runner = CliRunner()
    for args, want in (([], first.decode()), (["--path"], f"{cert}\n")):
        result = runner.invoke(cli, ["ca", "-c", str(tmp_path / "flakeproxy.yaml"), *args])
        assert result.exit_code == 0 and result.output == want
    bundle = runner.invoke(cli, ["ca", "-c", str(tmp_path / "flakeproxy.yaml"), "--bundle"]).output
    assert bundle.endswith(first.decode()) and bundle.count("BEGIN CERTIFICATE") > 50
    assert sorted(p.name for p in ca_dir.iterdir() if "upstream" not in p.name) == sorted(
        [
            "mitmproxy-ca-cert.cer",
            "mitmproxy-ca-cert.p12",
            "mitmproxy-ca-cert.pem",
            "mitmproxy-ca.p12",
            "mitmproxy-ca.pem",
            "mitmproxy-dhparam.pem",
        ]
    )


def test_ca_command_makes_the_ca_before_the_proxy_ever_ran_and_tightens_a_loose_key(tmp_path: Path) -> None:
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(f'version: "2.0"\nproxy:\n  ca_dir: {tmp_path / "ca"}\n')
    out = tmp_path / "shared" / "flakeproxy-ca.pem"
    result = CliRunner().invoke(cli, ["ca", "-c", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    key = tmp_path / "ca" / "mitmproxy-ca.pem"
    assert out.read_text() == (tmp_path / "ca" / "mitmproxy-ca-cert.pem").read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o644 and stat.S_IMODE(key.stat().st_mode) == 0o600
    key.chmod(0o644)
    (tmp_path / "ca" / "mitmproxy-ca.p12").chmod(0o640)
    assert CliRunner().invoke(cli, ["ca", "-c", str(config), "--path"]).exit_code == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "ca" / "mitmproxy-ca.p12").stat().st_mode) == 0o600
    assert (tmp_path / "ca" / "mitmproxy-ca-cert.pem").read_text() == out.read_text()  # not remade


def test_the_ca_command_needs_no_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial's CA job had to be given the sidecar's secret: the CA needs no token, only proxy.ca_dir; any other
    variable left unset is still an error."""
    monkeypatch.delenv("FP_SIDECAR_TOKEN", raising=False)
    monkeypatch.delenv("FP_CA_DIR", raising=False)
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(f'version: "2.0"\nproxy:\n  ca_dir: {tmp_path / "ca"}\n  token: ${{FP_SIDECAR_TOKEN}}\n')
    result = CliRunner().invoke(cli, ["ca", "-c", str(config), "--path"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{tmp_path / 'ca' / 'mitmproxy-ca-cert.pem'}\n"
    config.write_text('version: "2.0"\nproxy:\n  ca_dir: ${FP_CA_DIR}\n  token: ${FP_SIDECAR_TOKEN}\n')
    result = CliRunner().invoke(cli, ["ca", "-c", str(config), "--path"])
    assert "proxy.ca_dir: environment variable FP_CA_DIR is not set" in str(result.exception)  # main() exits 2


def test_upstream_certificates_are_verified_by_default(world: World, tmp_path: Path) -> None:
    """Without proxy.upstream_ca the test upstream's private CA is not trusted: the agent gets 502."""
    config, forward = forward_config(world, tmp_path / "ca", upstream_ca=None)
    with running_proxy(config) as p:
        trust = trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem")
        seen = through_forward(forward, "api.openai.com", "/v1/quotes", trust)
        assert seen.status == 502 and b"certificate verify failed" in seen.body.lower()
        [entry] = p.control.journal()
        assert entry["status"] == 502 and "certificate verify failed" in entry["error"].lower()


def test_skipping_upstream_verification_is_loud(
    world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, forward = forward_config(world, tmp_path / "ca", upstream_ca=None, insecure_skip_upstream_verify=True)
    with running_proxy(config):
        trust = trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem")
        assert through_forward(forward, "api.openai.com", "/v1/quotes", trust).status == 200
    err = capsys.readouterr().err
    assert "warning: proxy.insecure_skip_upstream_verify is on: upstream TLS certificates are NOT verified" in err


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_with_https_proxy_and_cacert(world: World, tmp_path: Path) -> None:
    config, forward = forward_config(world, tmp_path / "ca")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()} | {"HTTPS_PROXY": f"http://{forward}"}
    url = "https://api.openai.com/v1/quotes?symbol=IBM"
    with running_proxy(config) as p:
        cacert = str(tmp_path / "ca" / "mitmproxy-ca-cert.pem")
        ok = subprocess.run(
            ["curl", "-sS", "--cacert", cacert, url], env=env, capture_output=True, text=True, timeout=30
        )
        assert ok.returncode == 0 and '"IBM"' in ok.stdout, ok.stderr
        refused = subprocess.run(
            ["curl", "-sS", "--cacert", str(world.ca.cert_file), url],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert refused.returncode == 60, refused.stderr  # curl: peer certificate cannot be authenticated
        assert [(e["url"], e["targets"]) for e in p.control.journal()] == [(url, ["openai"])]


JAVA_CLIENT = """
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class Get {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newBuilder().proxy(java.net.ProxySelector.getDefault()).build();
        HttpResponse<String> r = client.send(
            HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
        System.out.println(r.statusCode() + " " + r.body());
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None or shutil.which("keytool") is None, reason="no Java here")
@pytest.mark.timeout(90)
def test_java_with_a_truststore_copy_and_proxy_properties(world: World, tmp_path: Path) -> None:
    """The Java recipe of docs/staging.md: the CA imported into a copy of the JDK's cacerts, the proxy and the store
    given as system properties (JAVA_TOOL_OPTIONS), the program unchanged."""
    java_home = Path(os.path.realpath(shutil.which("java") or "")).parent.parent
    store = tmp_path / "truststore.p12"
    shutil.copy(java_home / "lib" / "security" / "cacerts", store)
    config, forward = forward_config(world, tmp_path / "ca")
    host, port = forward.rsplit(":", 1)
    (tmp_path / "Get.java").write_text(JAVA_CLIENT)
    url = "https://api.openai.com/v1/quotes?symbol=ORCL"
    with running_proxy(config) as p:
        imported = subprocess.run(
            [
                "keytool",
                "-importcert",
                "-noprompt",
                "-alias",
                "flakeproxy",
                "-file",
                str(tmp_path / "ca" / "mitmproxy-ca-cert.pem"),
                "-keystore",
                str(store),
                "-storepass",
                "changeit",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert imported.returncode == 0, imported.stderr
        options = (
            f"-Dhttps.proxyHost={host} -Dhttps.proxyPort={port} "
            f"-Djavax.net.ssl.trustStore={store} -Djavax.net.ssl.trustStorePassword=changeit"
        )
        env = {**os.environ, "JAVA_TOOL_OPTIONS": options}
        out = subprocess.run(
            ["java", "Get.java", url], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0 and out.stdout.startswith("200 ") and '"ORCL"' in out.stdout, out.stderr[-2000:]
        assert [(e["url"], e["targets"]) for e in p.control.journal()] == [(url, ["openai"])]


def test_a_ca_of_your_own_placed_in_ca_dir_is_used(world: World, tmp_path: Path) -> None:
    """mitmproxy-ca.pem holding your CA's key and certificate: the proxy signs with it, `flakeproxy ca` prints it."""
    own = make_ca(tmp_path / "own", "our staging CA")
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir()
    key_pem = own.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    (ca_dir / "mitmproxy-ca.pem").write_bytes(key_pem + own.cert_file.read_bytes())
    (ca_dir / "mitmproxy-ca.pem").chmod(0o600)
    config, forward = forward_config(world, ca_dir)
    (tmp_path / "flakeproxy.yaml").write_text(config)
    result = CliRunner().invoke(cli, ["ca", "-c", str(tmp_path / "flakeproxy.yaml")])
    assert result.exit_code == 0 and result.output == own.cert_file.read_text()
    with running_proxy(config):
        seen = through_forward(forward, "api.openai.com", "/v1/quotes", own.cert_file)
        assert seen.status == 200 and seen.issuer == "our staging CA"


def test_the_cas_key_is_loaded_without_the_rsa_check_but_must_be_its_certificates(world: World, tmp_path: Path) -> None:
    """The RSA check cost 37 ms of every start (issue 23): a CA key whose CRT values fail it (mitmproxy's own loader
    refuses it) still starts the proxy, which signs with it; a key that is not the certificate's is one line."""
    own = make_ca(tmp_path / "own", "our RSA CA", rsa_key=True)
    assert isinstance(own.key, rsa.RSAPrivateKey)
    numbers = own.key.private_numbers()
    broken = rsa.RSAPrivateNumbers(  # d mod (p-1) off by two: the public key and the certificate are unchanged
        numbers.p, numbers.q, numbers.d, numbers.dmp1 + 2, numbers.dmq1, numbers.iqmp, numbers.public_numbers
    ).private_key(unsafe_skip_rsa_key_validation=True)
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir()
    pem = ca_dir / "mitmproxy-ca.pem"
    pem.write_bytes(
        broken.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()) + own.cert_file.read_bytes()
    )
    pem.chmod(0o600)
    with pytest.raises(ValueError):
        certs.CertStore.from_files(pem, ca_dir / "mitmproxy-dhparam.pem")  # mitmproxy's loader runs the check
    config, forward = forward_config(world, ca_dir)
    with running_proxy(config):
        seen = through_forward(forward, "api.openai.com", "/v1/quotes", own.cert_file)
        assert seen.status == 200 and seen.issuer == "our RSA CA"
    assert certs.load_pem_private_key is _MITMPROXY_LOADER  # the skip was only while the CA loaded

    other = make_ca(tmp_path / "other", "another CA")
    pem.write_bytes(
        other.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()) + own.cert_file.read_bytes()
    )
    (tmp_path / "flakeproxy.yaml").write_text(config)
    ca = [sys.executable, "-m", "flakeproxy", "ca", "-c", str(tmp_path / "flakeproxy.yaml")]
    out = subprocess.run(ca, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr == (
        f"error: {pem}: its private key does not belong to its first certificate; remove it (and "
        "mitmproxy-ca-cert.pem) to have a new CA made\n"
    )
    with pytest.raises(ConfigError, match="does not belong"), running_proxy(config):
        pass
