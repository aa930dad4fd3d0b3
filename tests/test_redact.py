"""flakeproxy.proxycore.redact: secret headers, query parameters, JSON and form fields, patterns in unparseable
bodies, literal echoes within one entry, and the config's extra names."""

from __future__ import annotations

import json

import pytest

from flakeproxy import parse_config
from flakeproxy.proxycore.journal import Journal, JournalEntry, redact_headers
from flakeproxy.proxycore.redact import REDACTED, Redactor, redact_entry

S = "s3cr3t-VALUE-42"


def test_headers_by_name_beyond_a_fixed_list() -> None:
    names = ["Authorization", "X-Custom-Auth", "X-Session-Id", "Cookie", "Set-Cookie", "X-Api-Key", "X-Csrf-Token"]
    names += ["Proxy-Authorization", "X-Client-Secret", "X-Credential", "X-Amz-Signature", "X-Passwd"]
    out = Redactor().headers([(n, S) for n in names] + [("Accept", "json"), ("accept", "text")])
    assert out.pop("accept") == "json, text"
    assert set(out.values()) == {REDACTED}
    assert S in out.secrets  # kept in memory only, to scrub echoes from bodies


def test_redact_headers_stays_importable_from_the_journal() -> None:
    out = redact_headers([("Authorization", "Bearer x"), ("Content-Type", "application/json")])
    assert out == {"authorization": REDACTED, "content-type": "application/json"}


@pytest.mark.parametrize(
    "name", ["api_key", "access_token", "key", "token", "apikey", "password", "secret", "sig", "signature", "auth"]
)
def test_query_parameters(name: str) -> None:
    url = f"http://h/v1/q?symbol=AAPL&{name}={S}&max_tokens=5"
    out = Redactor().url(url)
    assert out == f"http://h/v1/q?symbol=AAPL&{name}={REDACTED}&max_tokens=5"


def test_field_names_are_matched_word_wise() -> None:
    r = Redactor()
    secret = ["accessToken", "client_secret", "X-API-Key", "privateKey", "refresh-token", "session_id", "APIKey"]
    innocent = ["max_tokens", "prompt_tokens", "keyword", "monkey", "sort_key", "author", "design", "symbol"]
    assert [n for n in secret if not r.secret_field(n)] == []
    assert [n for n in innocent if r.secret_field(n)] == []


def test_json_at_any_depth() -> None:
    body = {"user": "u", "auth": {"password": S}, "items": [{"api_key": S, "n": 1}], "usage": {"total_tokens": 9}}
    out = json.loads(Redactor().body(json.dumps(body), "application/json"))
    assert out == {
        "user": "u",
        "auth": REDACTED,
        "items": [{"api_key": REDACTED, "n": 1}],
        "usage": {"total_tokens": 9},
    }


def test_a_body_with_no_secret_is_left_byte_for_byte() -> None:
    text = '{"a":  1, "b": [1,2]}'
    assert Redactor().body(text, "application/json") == text


def test_form_fields() -> None:
    out = Redactor().body(f"user=u&token={S}&note=hi", "application/x-www-form-urlencoded")
    assert out == f"user=u&token={REDACTED}&note=hi"


def test_unparseable_bodies_are_scrubbed_by_pattern() -> None:
    cut_json = f'{{"model": "m", "password": "{S}", "messages": [{{"content": "hel'
    sse = f'data: {{"choices": [], "client_secret": "{S}"}}\n\ndata: [DONE]\n\n'
    prose = f"connect with password={S}; then token: ok"
    r = Redactor()
    for text, kind in ((cut_json, "application/json"), (sse, "text/event-stream"), (prose, "text/plain")):
        assert S not in r.body(text, kind), text
    assert '"model": "m"' in r.body(cut_json, "application/json")


def test_literals_seen_redacted_in_one_place_are_scrubbed_everywhere_in_the_entry() -> None:
    entry = {
        "url": f"http://h/v1/q?api_key={S}-q",
        "request_headers": {"authorization": f"Bearer {S}-bearer", "content-type": "application/json"},
        "request_body": json.dumps({"password": f"{S}-pw"}),
        "response_headers": {"content-type": "text/plain", "x-echo": f"{S}-q"},
        "response_body": f"you sent {S}-bearer and {S}-pw and {S}-q",
        "status": 200,
        "error": f"upstream said: bad password {S}-pw",
    }
    out = redact_entry(entry)
    assert S not in json.dumps(out)
    assert out["status"] == 200 and out["response_body"].startswith("you sent [redacted]")


def test_extra_names_from_the_config() -> None:
    config = parse_config('version: "2.0"\nredact: [X-Tenant-Ref, account_pin]\n', "t.yaml")
    r = Redactor(config.redact)
    assert r.headers([("x-tenant-ref", S)]) == {"x-tenant-ref": REDACTED}
    assert S not in r.body(json.dumps({"profile": {"Account_Pin": S}}), "application/json")
    assert S not in r.url(f"http://h/?account_pin={S}")
    assert Redactor().headers([("x-tenant-ref", S)]) == {"x-tenant-ref": S}


def test_journal_entries_are_redacted_with_the_journals_redactor() -> None:
    journal = Journal(redactor=Redactor(["x-tenant-ref"]))
    headers = redact_headers([("Authorization", f"Bearer {S}"), ("X-Tenant-Ref", f"{S}-t")])
    entry = JournalEntry(1, "c1", [], 0.0, "tools", [], "POST", f"http://h/?token={S}", headers, S, 0)
    entry.response_body = f"echo {S}-t"
    journal.add(entry)
    assert S not in json.dumps(journal.entries[0].to_json())


def test_headers_by_words_not_by_a_substring_of_a_counters_name() -> None:
    r = Redactor()
    counters = ["x-ratelimit-remaining-tokens", "x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-remaining"]
    secret = ["x-functions-key", "Ocp-Apim-Subscription-Key", "x-goog-api-key", "X-Auth-Token", "x-amz-security-token"]
    assert [n for n in counters if r.secret_header(n)] == []
    assert [n for n in secret if not r.secret_header(n)] == []


def test_values_shaped_like_credentials_are_redacted_whatever_their_name() -> None:
    r = Redactor()
    key = "sk-proj-" + "A1b2C3d4" * 4
    out = r.headers([("x-trace-note", f"Bearer {S}"), ("x-request-id", "42"), ("x-debug", key)])
    assert out == {"x-trace-note": REDACTED, "x-request-id": "42", "x-debug": REDACTED}
    assert r.url(f"http://h/q?note={key}&n=9000") == f"http://h/q?note={REDACTED}&n=9000"


def test_a_body_naming_thousands_of_secrets_still_scrubs_the_header_values() -> None:
    fields = [{"token": f"{S}-{i:05d}"} for i in range(3000)]
    entry = {
        "request_headers": {"authorization": "Bearer HEADER-SECRET-77"},
        "request_body": json.dumps(fields),
        "response_body": f"echo HEADER-SECRET-77 and {S}-00001",
    }
    out = redact_entry(entry)
    assert "HEADER-SECRET-77" not in json.dumps(out) and S not in out["request_body"]


def test_a_realtime_session_object_is_walked_not_hidden_and_token_counts_stay() -> None:
    """`session` names a session id (secret) and the Realtime API's session object (model, instructions, tools):
    the object is walked, its secret fields redacted by name; `*_token_details` are counts. Before, a recorded
    retry's URL lost its path to the literals of the hidden object (a new user's finding)."""
    body = {
        "type": "session.created",
        "session": {"type": "realtime", "model": "gpt-realtime", "client_secret": {"value": "ek_live_0123456789"}},
        "response": {"object": "realtime.response", "usage": {"input_token_details": {"cached_tokens": 10}}},
        "session_id": "sess_0123456789",
    }
    seen: set[str] = set()
    out = json.loads(Redactor().body(json.dumps(body), "application/json", seen))
    assert out["session"] == {"type": "realtime", "model": "gpt-realtime", "client_secret": "[redacted]"}
    assert out["response"] == body["response"] and out["session_id"] == "[redacted]"
    assert seen == {"ek_live_0123456789", "sess_0123456789"}  # nothing ordinary scrubbed elsewhere later
    assert json.loads(Redactor().body(json.dumps({"session": "abc123"}), "application/json")) == {
        "session": "[redacted]"
    }
    assert json.loads(Redactor(["session"]).body(json.dumps(body), "application/json"))["session"] == "[redacted]"
