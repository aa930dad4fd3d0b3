"""config_warnings: valid configs that surely do not do what was meant, one line each with key path and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from flakeproxy.cli.main import main
from flakeproxy.config import parse_config
from flakeproxy.config.warnings import config_warnings
from tests.config.base_config import BASE, edit

SPEC_SHAPE = r"'\\$[\\d,]+\\.\\d{2}'"  # the spec's single-quoted pattern: literal backslashes in the regex


def with_pattern(yaml_pattern: str, kind: str = "excludes_pattern") -> str:
    field = f"patterns: [{yaml_pattern}]" if kind == "excludes_pattern" else f"pattern: {yaml_pattern}"
    return edit('      pattern: "(?i)source"', f"      {field}").replace("type: regex", f"type: {kind}", 1)


@pytest.mark.parametrize(
    ("yaml_pattern", "kind", "warned"),
    [
        (SPEC_SHAPE, "excludes_pattern", True),
        (SPEC_SHAPE, "regex", True),
        (r"'\\s+AAPL'", "regex", True),
        (r"'\$[\d,]+\.\d{2}'", "excludes_pattern", False),  # single quotes, single backslashes: right
        (r'"\\$[\\d,]+\\.\\d{2}"', "excludes_pattern", False),  # double quotes unescape to single backslashes
        (r"'C:\\\\\d+'", "regex", False),  # a literal backslash, then \d: three backslashes, meant
        (r"'(?i)source'", "regex", False),
    ],
)
def test_doubled_backslash(yaml_pattern: str, kind: str, warned: bool) -> None:
    warnings = config_warnings(parse_config(with_pattern(yaml_pattern, kind)))
    assert bool(warnings) == warned, warnings
    if warned:
        key = "patterns[0]" if kind == "excludes_pattern" else "pattern"
        assert warnings[0].startswith(f"contract.invariants[0].{key}: ") and "\n" not in warnings[0]
        assert "write single backslashes in single quotes" in warnings[0]


def test_the_spec_shape_names_the_fix() -> None:
    (warning,) = config_warnings(parse_config(with_pattern(SPEC_SHAPE)))
    assert warning.endswith(r"write single backslashes in single quotes: '\$[\d,]+\.\d{2}'"), warning


STREAM_CUT = edit("      - mode: truncated_response\n        max_tokens: 20", "      - mode: stream_cut")
STREAM_WARNING = (
    "chaos_matrix[2] (llm-degraded): stream_cut applies only to streamed answers and no target it aims at says "
    "stream: true; if the agent does not stream, this scenario will inject nothing (set stream: true on target "
    "'llm' if it does)"
)


@pytest.mark.parametrize(
    ("text", "warnings"),
    [
        (STREAM_CUT, [STREAM_WARNING]),
        (STREAM_CUT.replace("api: openai}", "api: openai, stream: true}"), []),
        (STREAM_CUT.replace("api: openai}", "api: openai, stream: false}"), [STREAM_WARNING]),
        (STREAM_CUT.replace("- mode: stream_cut", "- {mode: stream_cut, tool: llm}"), [STREAM_WARNING]),
        (
            STREAM_CUT.replace("- mode: stream_cut", "- mode: mid_stream_error"),
            [STREAM_WARNING.replace("stream_cut applies", "mid_stream_error applies")],
        ),
        (BASE, []),  # truncated_response works on buffered answers too
    ],
    ids=["implicit", "stream-true", "stream-false", "explicit-tool", "mid-stream-error", "not-stream-only"],
)
def test_stream_only_faults(text: str, warnings: list[str]) -> None:
    assert config_warnings(parse_config(text)) == warnings


WS_CLOSE = edit("      - mode: truncated_response\n        max_tokens: 20", "      - {mode: ws_close, code: 1011}")
WS_WARNING = (
    "chaos_matrix[2] (llm-degraded): ws_close applies only to WebSocket connections and no target it aims at says "
    "ws: true; if the agent does not open a WebSocket there, this scenario will inject nothing (set ws: true on "
    "target 'llm' if it does)"
)


@pytest.mark.parametrize(
    ("text", "warnings"),
    [
        (WS_CLOSE, [WS_WARNING]),
        (WS_CLOSE.replace("api: openai}", "api: openai, ws: true}"), []),
        (WS_CLOSE.replace("{mode: ws_close, code: 1011}", "{mode: connection_cap, tool: llm}"),
         [WS_WARNING.replace("ws_close applies", "connection_cap applies")]),
    ],
    ids=["implicit", "ws-true", "explicit-tool"],
)  # fmt: skip
def test_websocket_only_faults(text: str, warnings: list[str]) -> None:
    assert config_warnings(parse_config(text)) == warnings


def test_stream_only_fault_aimed_at_several_targets() -> None:
    two = STREAM_CUT.replace(
        "  llm: {listener: llm, api: openai}",
        "  llm: {listener: llm, api: openai}\n  llm2: {listener: llm, path: /v2/*, api: anthropic, stream: true}",
    )
    assert config_warnings(parse_config(two)) == []  # aims at every LLM target; llm2 streams
    aimed = two.replace("- mode: stream_cut", "- {mode: stream_cut, tool: llm}")
    assert config_warnings(parse_config(aimed)) == [STREAM_WARNING]


@pytest.mark.parametrize("command", [["validate"], ["contract", "validate"]])
def test_commands_print_warnings_and_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(STREAM_CUT)
    with pytest.raises(SystemExit) as info:
        main([*command, "-c", str(path)])
    out, err = capsys.readouterr()
    assert info.value.code == 0 and "valid" in out
    assert err.splitlines() == [f"warning: {STREAM_WARNING}"]


def test_the_finance_example_warns_about_its_spec_pattern() -> None:
    from flakeproxy.config import load_config
    from tests.config.fuzz_corpus import REPO

    warnings = config_warnings(load_config(REPO / "examples" / "finance-contract.yaml"))
    assert len(warnings) == 1 and warnings[0].startswith("contract.invariants[1].pattern: '\\\\$[\\\\d,]+")


def test_skipping_upstream_verification_is_warned() -> None:
    from flakeproxy import parse_config
    from flakeproxy.config.warnings import config_warnings
    from tests.config.base_config import BASE

    config = parse_config(
        BASE.replace("  admin: 127.0.0.1:8790\n", "  admin: 127.0.0.1:8790\n  insecure_skip_upstream_verify: true\n"),
        "f",
    )
    assert any(
        w.startswith("proxy.insecure_skip_upstream_verify: upstream certificates are not checked")
        for w in config_warnings(config)
    )
    assert not any("insecure" in w for w in config_warnings(parse_config(BASE, "f")))


def test_a_match_url_fault_the_forward_pass_through_cannot_reach_is_warned() -> None:
    from flakeproxy import parse_config
    from flakeproxy.config.warnings import config_warnings
    from tests.config.base_config import BASE

    text = BASE.replace("  admin: 127.0.0.1:8790\n", "  admin: 127.0.0.1:8790\n  forward: 127.0.0.1:8700\n")
    text = text.replace(
        "  - name: llm-degraded\n",
        "  - name: https-api-down\n    tool_faults: [{match_url: 'https://api.example.com/*', mode: error}]\n"
        "  - name: llm-degraded\n",
    )
    warned = [w for w in config_warnings(parse_config(text, "f")) if "https-api-down" in w]
    assert len(warned) == 1 and "set proxy.intercept: all" in warned[0]
    everything = text.replace("  forward: 127.0.0.1:8700\n", "  forward: 127.0.0.1:8700\n  intercept: all\n")
    assert not [w for w in config_warnings(parse_config(everything, "f")) if "https-api-down" in w]


TURN_3 = edit("        max_tokens: 20", "        max_tokens: 20\n        turns: [3]")


def test_a_fault_on_a_turn_no_prompt_has_is_warned() -> None:
    (warning,) = config_warnings(parse_config(TURN_3))
    assert warning == (
        "chaos_matrix[2].llm_faults[0].turns: [3], but the longest prompt has 1 turn(s), so it never fires; use "
        "turns from 1 to 1, or make a golden prompt a conversation (a list of turns)"
    )
    three_turns = TURN_3.replace('golden_prompts: ["What is AAPL trading at?"]', 'golden_prompts: [["a", "b", "c"]]')
    assert three_turns != TURN_3 and config_warnings(parse_config(three_turns)) == []


LEAK_CHECK = "    - {id: no-card, type: excludes_pii, kinds: [credit_card], severity: critical%s}\n"
CONVERSATION = 'golden_prompts: ["Hi", {id: card, turns: ["Where is my order?", "Which card?", "Thanks"]}]'


@pytest.mark.parametrize(
    ("prompts", "turn", "probes", "warned"),
    [
        (CONVERSATION, "", "", True),  # the default turn: last, on a conversation
        (CONVERSATION, ", turn: all", "", False),
        (CONVERSATION, ", turn: last", "", False),  # written: chosen
        ('golden_prompts: ["What is AAPL trading at?"]', "", "", False),  # one turn: the last is every turn
        ('golden_prompts: ["Hi"]', "", ', probes: [["a", "b"]]', True),  # its own probes are a conversation
        (CONVERSATION, "", ', probes: ["one turn"]', False),
    ],
)
def test_a_leak_check_on_the_last_turn_of_a_conversation_is_warned(
    prompts: str, turn: str, probes: str, warned: bool
) -> None:
    """A new user's trial: excludes_pii on the default `turn: last` never saw the card read out on turn 2."""
    text = BASE.replace('golden_prompts: ["What is AAPL trading at?"]', prompts).replace(
        "  invariants:\n", "  invariants:\n" + LEAK_CHECK % (turn + probes), 1
    )
    said = [w for w in config_warnings(parse_config(text, "f")) if "no-card" in w]
    conversation = "'a / b'" if probes.startswith(", probes: [[") else "'card'"
    assert said == (
        [
            f"contract.invariants[0] (no-card): excludes_pii judges only the last turn of conversation {conversation} "
            "(turn: last, the default), so a leak in an earlier turn is never seen; set turn: all (or write turn: "
            "last to keep the last only)"
        ]
        if warned
        else []
    )


def test_a_fault_of_probability_0_is_warned() -> None:
    """A trial's `probability: 0` fault passed validate in silence, and the run then said more replicas might make
    it fire."""
    never = edit("        error_code: 503\n", "        error_code: 503\n        probability: 0\n")
    assert never != BASE
    assert config_warnings(parse_config(never)) == [
        "chaos_matrix[1].tool_faults[0].probability: 0, so it never fires and scenario tool-down gets nothing "
        "from it; give it a probability above 0, or remove it"
    ]
    rare = edit("        error_code: 503\n", "        error_code: 503\n        probability: 0.1\n")
    assert config_warnings(parse_config(rare)) == []
