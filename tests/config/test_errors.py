"""Broken configs: each exits 2 with one line naming file, line, key path, bad value and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flakeproxy.cli.main import main
from flakeproxy.config import FlakeproxyConfig, WireConfig, parse_config
from flakeproxy.errors import ConfigError
from tests.config.base_config import BASE, edit

MATRIX = BASE[BASE.index("chaos_matrix:") : BASE.index("scoring:")]
PYTHON_AGENT = """agent:
  type: python
  callable: myagent:run
"""
HTTP_AGENT = BASE[BASE.index("agent:") : BASE.index("proxy:")]

# (case id, broken config text, expected line, regex the message after "line N: " must match)
CASES = [
    (
        "yaml-syntax",
        edit('{message: "{prompt}"}', '{message: "{prompt}"'),
        6,
        r"YAML syntax error: .*expected ',' or '}'.*; check indentation and quoting",
    ),
    (
        "unknown-top-key",
        edit("golden_prompts:", "golden_prompt:"),
        16,
        r"golden_prompt: unknown key 'golden_prompt' \(did you mean 'golden_prompts'\?\); valid keys: version, agent",
    ),
    (
        "unknown-scenario-key",
        edit("    tool_faults:", "    tool_fault:"),
        31,
        r"chaos_matrix\[1\]\.tool_fault: unknown key 'tool_fault' \(did you mean 'tool_faults'\?\); valid keys: name,",
    ),
    (
        "unknown-fault-mode",
        edit("mode: error", "mode: explode"),
        33,
        r"chaos_matrix\[1\]\.tool_faults\[0\]\.mode: unknown mode 'explode'; valid: error, rate_limit, timeout",
    ),
    (
        "tool-mode-in-llm-faults",
        edit("- mode: truncated_response", "- mode: malformed"),
        37,
        r"chaos_matrix\[2\]\.llm_faults\[0\]\.mode: mode 'malformed' does not go in llm_faults: it is one of "
        r"tool_faults, as \{mode: malformed, \.\.\.\}; valid here: .*truncated_response",
    ),
    (
        "tool-fault-in-context-attacks",
        edit(
            "      - mode: truncated_response\n        max_tokens: 20",
            "      - mode: truncated_response\n        max_tokens: 20\n"
            "    context_attacks: [{type: malicious_response, tool: market_data_api}]",
        ),
        39,
        r"chaos_matrix\[2\]\.context_attacks\[0\]\.type: type 'malicious_response' does not go in context_attacks: "
        r"it is one of tool_faults, as \{mode: malicious_response, \.\.\.\}; valid here: indirect_injection, memory",
    ),
    (
        "missing-fault-mode",
        edit("      - mode: truncated_response\n        max_tokens", "      - max_tokens"),
        37,
        r"chaos_matrix\[2\]\.llm_faults\[0\]\.mode: missing key 'mode'; valid modes: error, .*stream_cut",
    ),
    (
        "forward-target-without-forward",  # a trial's runner config for a sidecar in forward mode
        edit("  llm: {listener: llm, api: openai}", "  llm: {listener: forward, host: api.openai.com}"),
        15,
        r"targets\.llm\.listener: listener 'forward' is the forward listener, and proxy\.forward is not set: set it",
    ),
    (
        "target-listener-typo",
        edit("  llm: {listener: llm, api: openai}", "  llm: {listener: lm, api: openai}"),
        15,
        r"targets\.llm\.listener: listener 'lm' is not in proxy\.listeners; valid: llm, tools",
    ),
    (
        "invariant-type-typo",  # a trial's `tpye: completes` was only "missing key 'type'"
        edit("      type: latency", "      tpye: latency"),
        26,
        r"contract\.invariants\[\d\]\.tpye: unknown key 'tpye' \(did you mean 'type'\?\); valid types: .*latency",
    ),
    (
        "fault-mode-typo",
        edit(
            "      - mode: truncated_response\n        max_tokens",
            "      - mdoe: truncated_response\n        max_tokens",
        ),
        37,
        r"chaos_matrix\[2\]\.llm_faults\[0\]\.mdoe: unknown key 'mdoe' \(did you mean 'mode'\?\); valid modes: error",
    ),
    (
        "stream-cut-after-chunks",  # a trial's: difflib alone offered after_calls, which counts requests
        edit(
            "      - mode: truncated_response\n        max_tokens: 20",
            "      - mode: stream_cut\n        after_chunks: 3",
        ),
        38,
        r"chaos_matrix\[2\]\.llm_faults\[0\]\.after_chunks: unknown key 'after_chunks' "
        r"\(did you mean 'after_events'\?\); valid keys: ",
    ),
    (
        "error-status-for-error-code",
        edit("error_code: 503", "error_status: 503"),
        34,
        r"chaos_matrix\[1\]\.tool_faults\[0\]\.error_status: unknown key 'error_status' "
        r"\(did you mean 'error_code'\?\)",
    ),
    (
        "unknown-invariant-type",
        edit("type: latency", "type: latncy"),
        26,
        r"contract\.invariants\[1\]\.type: unknown type 'latncy' \(did you mean 'latency'\?\); valid: .*regex",
    ),
    (
        "severity-typo",
        edit("severity: critical", "severity: critcal"),
        23,
        r"contract\.invariants\[0\]\.severity: must be one of critical, high, medium, low, got 'critcal' "
        r"\(did you mean 'critical'\?\)",
    ),
    (
        "when-typo",
        edit("when: always", "when: tool_fault_active"),
        24,
        r"contract\.invariants\[0\]\.when: must be one of always, tool_faults_active, llm_faults_active, "
        r"any_chaos_active, no_chaos, got 'tool_fault_active' \(did you mean 'tool_faults_active'\?\)",
    ),
    (
        "weights-sum",
        edit("replay: 0.10}", "replay: 0.50}"),
        40,
        r"scoring\.weights: mutation \+ chaos \+ contract \+ replay must sum to 1\.0, got 1\.4",
    ),
    (
        "unknown-weight",
        edit("mutation: 0.20", "mutations: 0.20"),
        40,
        r"scoring\.weights\.mutations: unknown key 'mutations' \(did you mean 'mutation'\?\); valid keys: mutation, ",
    ),
    (
        "fault-tool-not-a-target",
        edit("tool: market_data_api", "tool: market_api"),
        32,
        r"chaos_matrix\[1\]\.tool_faults\[0\]\.tool: tool 'market_api' is not one of the targets; "
        r"valid: market_data_api$",
    ),
    (
        "fault-tool-glob-matches-nothing",
        edit("tool: market_data_api", 'tool: "search_*"'),
        32,
        r"tool_faults\[0\]\.tool: tool 'search_\*' glob matches no targets; valid: market_data_api",
    ),
    (
        "mcp-fault-on-http-target",
        edit("mode: error\n        error_code: 503", "mode: is_error"),
        32,
        r"tool_faults\[0\]\.tool: is_error applies to MCP tools only, and target 'market_data_api' has no mcp_tool",
    ),
    (
        "llm-fault-without-llm-target",
        edit("  llm: {listener: llm, api: openai}\n", ""),
        36,
        r"chaos_matrix\[2\]\.llm_faults\[0\]: truncated_response needs a target with api: to aim at; add one",
    ),
    (
        "duplicate-invariant-id",
        edit("- id: fast", "- id: cite"),
        25,
        r"contract\.invariants\[1\]\.id: duplicate invariant id 'cite'; each invariant id must be unique",
    ),
    (
        "duplicate-scenario-name",
        edit("- name: llm-degraded", "- name: no-chaos"),
        35,
        r"chaos_matrix\[2\]\.name: duplicate scenario name 'no-chaos'; each scenario name must be unique",
    ),
    (
        "regex-does-not-compile",
        edit('"(?i)source"', '"(?i)(source"'),
        22,
        r"contract\.invariants\[0\]\.pattern: regular expression does not compile \(missing \).*; "
        r"got '\(\?i\)\(source'",
    ),
    (
        "unset-env-var",
        edit("http://127.0.0.1:8000/chat", "http://${FLAKEPROXY_TEST_UNSET}/chat"),
        4,
        r"agent\.endpoint: environment variable FLAKEPROXY_TEST_UNSET is not set; export it",
    ),
    (
        "negative-delay",
        edit("mode: error\n        error_code: 503", "mode: slow\n        delay_ms: -5"),
        34,
        r"chaos_matrix\[1\]\.tool_faults\[0\]\.delay_ms: must be >= 0, got -5",
    ),
    (
        "probability-above-1",
        edit("max_tokens: 20", "max_tokens: 20\n        probability: 1.5"),
        39,
        r"chaos_matrix\[2\]\.llm_faults\[0\]\.probability: must be <= 1\.0, got 1\.5",
    ),
    (
        "negative-after-calls",
        edit("max_tokens: 20", "max_tokens: 20\n        after_calls: -2"),
        39,
        r"llm_faults\[0\]\.after_calls: must be >= 0, got -2",
    ),
    (
        "empty-matrix",
        BASE.replace(MATRIX, "chaos_matrix: []\n"),
        28,
        r"chaos_matrix: must have at least 1 item, got \[\]",
    ),
    (
        "regex-without-pattern",
        edit('      pattern: "(?i)source"\n', ""),
        20,
        r"contract\.invariants\[0\]\.pattern: missing required key 'pattern' \(a regex invariant needs it\)",
    ),
    (
        "latency-without-max-ms",
        edit("      max_ms: 60000\n", ""),
        25,
        r"contract\.invariants\[1\]\.max_ms: missing required key 'max_ms' \(a latency invariant needs it\)",
    ),
    (
        "wrong-value-type",
        edit("max_ms: 60000", "max_ms: soon"),
        27,
        r"contract\.invariants\[1\]\.max_ms: input should be a valid integer.*, got 'soon'",
    ),
    (
        "response-path-no-dollar",
        edit("response_path: $.reply", "response_path: reply"),
        6,
        r"agent\.response_path: must start with '\$', e\.g\. \$\.reply .*; got 'reply'",
    ),
    (
        "response-path-bad-step",
        edit("response_path: $.reply", "response_path: $.reply[x"),
        6,
        r"agent\.response_path: cannot parse at character 8 \('\[x'\); use \$\.key, \[index\].*; got '\$\.reply\[x'",
    ),
    (
        "version-wrong",
        edit('version: "2.0"', 'version: "1.0"'),
        1,
        r'version: must be "2\.0" \(quoted\), got \'1\.0\'',
    ),
    (
        "version-missing",
        edit('version: "2.0"\n', ""),
        1,
        r"version: missing required key 'version'; add version: \.\.\.",
    ),
    (
        "target-listener-unknown",
        edit("{listener: tools,", "{listener: tool,"),
        14,
        r"targets\.market_data_api\.listener: listener 'tool' is not in proxy\.listeners; valid: llm, tools",
    ),
    (
        "agent-type-typo",
        edit("type: http", "type: htp"),
        3,
        r"agent\.type: unknown type 'htp' \(did you mean 'http'\?\); valid: http, command, python",
    ),
    (
        "timeout-zero",
        edit("timeout_ms: 30000", "timeout_ms: 0"),
        7,
        r"agent\.timeout_ms: must be >= 1, got 0",
    ),
    (
        "error-code-not-an-error",
        edit("error_code: 503", "error_code: 203"),
        34,
        r"tool_faults\[0\]\.error_code: must be >= 400, got 203",
    ),
    (
        "admin-beyond-loopback-without-token",
        edit("admin: 127.0.0.1:8790", "admin: 0.0.0.0:8790"),
        8,
        r"proxy: admin 0\.0\.0\.0:8790 listens beyond loopback without a token; set proxy\.token",
    ),
    (
        "listen-without-port",
        edit("listen: 127.0.0.1:8701", "listen: 127.0.0.1"),
        11,
        r"proxy\.listeners\[0\]\.listen: must be HOST:PORT .*; got '127\.0\.0\.1'",
    ),
    (
        "upstream-not-a-url",
        edit("upstream: http://127.0.0.1:9101", "upstream: 127.0.0.1:9101"),
        11,
        r"proxy\.listeners\[0\]\.upstream: must be an http:// or https:// URL.*; got '127\.0\.0\.1:9101'",
    ),
    (
        "duplicate-yaml-key",
        edit("  timeout_ms: 30000\n", "  timeout_ms: 30000\n  timeout_ms: 5\n"),
        8,
        r"agent\.timeout_ms: duplicate key 'timeout_ms'; keep one",
    ),
    (
        "template-without-prompt",
        edit('{message: "{prompt}"}', '{message: "hello"}'),
        5,
        r"agent\.request_template: request_template never uses \{prompt\}; .*e\.g\. \{message: \"\{prompt\}\"\}",
    ),
    (
        "matrix-given-twice",
        edit("  name: finance\n", "  name: finance\n  chaos_matrix: [{name: x}]\n"),
        19,
        r"contract\.chaos_matrix: chaos_matrix is given twice \(top level and under contract\); keep one",
    ),
    (
        "python-agent-tool-faults-without-tools",  # aimed at a python tool, not at a target on the wire
        BASE.replace(HTTP_AGENT, PYTHON_AGENT).replace("      - tool: market_data_api", "      - tool: get_quote"),
        2,
        r"agent: tool faults on a python agent need agent\.tools .* or agent\.tool_registry",
    ),
    (
        "sql-unknown-service",
        edit(
            "      type: latency\n      max_ms: 60000",
            "      type: sql\n      service: db\n      query: select 1\n      equals: 1",
        ),
        27,
        r"contract\.invariants\[1\]\.service: service 'db' is not one of the postgres/mysql services; "
        r"valid: \(none defined\)",
    ),
    (
        "not-a-mapping",
        "- just\n- a list\n",
        1,
        r'the config must be a mapping starting with version: "2\.0", got a list',
    ),
]


@pytest.mark.parametrize(("text", "line", "pattern"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_config_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, pattern: str
) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "-c", str(path)])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    prefix = f"error: {path} line {line}: "
    assert lines[0].startswith(prefix), f"{lines[0]!r} does not start with {prefix!r}"
    assert re.search(pattern, lines[0][len(prefix) :]), lines[0]


#: The cases whose error is in the invariants, which the proxy keeps as written: the runner's to report.
INVARIANT_CASES = {
    "unknown-invariant-type",
    "invariant-type-typo",
    "severity-typo",
    "when-typo",
    "duplicate-invariant-id",
    "regex-does-not-compile",
    "regex-without-pattern",
    "latency-without-max-ms",
    "wrong-value-type",
    "sql-unknown-service",
}


def _problem(text: str, model: type[WireConfig]) -> str | None:
    try:
        parse_config(text, "x.yaml", model=model)
    except ConfigError as e:
        return str(e)
    return None


@pytest.mark.parametrize(("case", "text"), [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_the_proxy_reads_every_other_error_as_validate_does(case: str, text: str) -> None:
    """`flakeproxy proxy` validates a WireConfig (no invariant catalogue, issue 23): the same line for an error
    in a section it reads; none for one in the invariants."""
    full, proxy = _problem(text, FlakeproxyConfig), _problem(text, WireConfig)
    assert full is not None
    assert proxy == (None if case in INVARIANT_CASES else full)


def test_there_are_at_least_30_cases() -> None:
    assert len(CASES) >= 30
    assert len({c[0] for c in CASES}) == len(CASES)


def test_missing_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "-c", str(tmp_path / "nope.yaml")])
    assert exit_info.value.code == 2
    assert (
        capsys.readouterr().err
        == f"error: {tmp_path / 'nope.yaml'}: file not found; check the path, or create it with `flakeproxy init -c "
        f"{tmp_path / 'nope.yaml'}`\n"
    )


def test_base_config_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(BASE)
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "-c", str(path)])
    assert exit_info.value.code == 0, capsys.readouterr().err


def test_a_json_file_cut_short_is_a_json_syntax_error(tmp_path: Path) -> None:
    """Session files may be JSON (read as the YAML it also is): a broken one is said as JSON's error, not YAML's."""
    from flakeproxy.replay.files import load_session_file

    path = tmp_path / "session.json"
    path.write_text('{"id": "s1",\n "input": "hi",\n "tool_responses": [{"tool": "llm", "respo')
    with pytest.raises(ConfigError) as e:
        load_session_file(path)
    said = str(e.value)
    assert re.fullmatch(rf"{re.escape(str(path))} line \d: JSON syntax error: .+; check brackets and commas", said)
    assert "YAML" not in said


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"id": "s1", "input": "hi",}', "line 1: JSON syntax error: Illegal trailing comma before end of object"),
        ('{"id": "s1",\n "input": "hi",\n "id": "s2"}', "line 3: id: duplicate key 'id'; keep one"),
    ],
    ids=["trailing-comma", "duplicate-key"],
)
def test_a_json_session_is_read_as_json(tmp_path: Path, text: str, says: str) -> None:
    """Strictly (read as YAML, a trailing comma passed), with the line of what is wrong."""
    from flakeproxy.replay.files import load_session_file

    path = tmp_path / "session.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_session_file(path)
    assert str(e.value).startswith(f"{path} {says}")


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_long_streamed_session_is_no_alias_bomb(tmp_path: Path, suffix: str) -> None:
    """A recording with 25,000 SSE events has ~125,000 values and no alias: it loads (it was refused as an alias
    bomb: the bound counted the document's own values, not what aliases add)."""
    import json

    import yaml

    from flakeproxy.replay.files import load_session_file

    events = [{"data": f'{{"n": {i}}}', "at_ms": i / 10} for i in range(25_000)]
    exchange = {"listener": "llm", "method": "POST", "url": "http://x/v1", "request_digest": "0" * 64, "events": events}
    session = {"id": "s1", "input": "hi", "exchanges": [exchange]}
    path = tmp_path / f"long{suffix}"
    path.write_text(json.dumps(session) if suffix == ".json" else yaml.safe_dump(session))
    [loaded] = load_session_file(path)
    assert loaded.exchanges[0].events is not None and len(loaded.exchanges[0].events) == 25_000


def test_a_yaml_syntax_error_names_what_pyyaml_names(tmp_path: Path) -> None:
    """libyaml parses; a file it cannot parse is parsed again by PyYAML's own reader for the message (the tab)."""
    path = tmp_path / "flakeproxy.yaml"
    path.write_text("version: '2.0'\nagent:\n\ttype: http\n")
    with pytest.raises(ConfigError) as e:
        parse_config(path.read_text(), str(path))
    assert str(e.value).startswith(f"{path} line 3: YAML syntax error:") and "'\\t'" in str(e.value), str(e.value)
