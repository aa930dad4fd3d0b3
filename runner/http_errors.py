"""What the runner says when an HTTP peer (the agent, a mock, the control API) cannot be reached."""

from __future__ import annotations

import os
import re
import ssl

import aiohttp


def why(e: aiohttp.ClientError) -> str:
    """The system's words for a refused or failed connect ("Connection refused"), not aiohttp's ("Cannot connect to
    host 127.0.0.1:8000 ssl:default [Connect call failed ('127.0.0.1', 8000)]", `ssl:default` on an http:// URL);
    aiohttp's text for anything else. A name that does not resolve is the resolver's words ("Name or service not
    known"), whose negative errno the system's table does not know. A TLS failure says what failed and what to do
    (its errno, 1, read "Operation not permitted")."""
    if tls := tls_failure(e):
        return tls
    if isinstance(e, aiohttp.ClientConnectorError) and e.os_error.errno:
        if e.os_error.errno > 0:
            return os.strerror(e.os_error.errno)
        if e.os_error.strerror:
            return f"{e.os_error.strerror} ({e.host})"
    return str(e)


def tls_failure(e: aiohttp.ClientError) -> str | None:
    """What failed in a connection's TLS, with the fix; None for any other error."""
    if isinstance(e, aiohttp.ClientConnectorCertificateError):
        error = e.certificate_error
        if isinstance(error, ssl.SSLCertVerificationError) and error.verify_message:
            return (
                f"its TLS certificate is not trusted here ({error.verify_message}); if your own CA signed it, set "
                "SSL_CERT_FILE to a bundle that holds that CA"
            )
        return f"its TLS certificate is not trusted here ({_plain(error)})"
    if isinstance(e, aiohttp.ClientConnectorSSLError):
        return f"the TLS handshake failed ({_plain(e.os_error)}); if it serves plain HTTP, use an http:// URL"
    return None


def _plain(error: BaseException) -> str:
    """OpenSSL's words without CPython's source line: "[SSL: WRONG_VERSION_NUMBER] wrong version number"."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(error))
