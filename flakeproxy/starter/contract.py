"""The starter contract and its matrix of five scenarios (six for an agent that streams), as annotated YAML lines.

The invariants are the rules almost every agent should keep when its calls break (it answers, it says
something, it hides raw provider errors and PII, it answers in time, it honours Retry-After); `answers` is
critical and `scoring.min_resilience` is set, so the run can FAIL. The scenarios: no chaos, an LLM that
rate-limits once, an LLM that is down, answers cut short, and a tool API that is down (or, with no tool to
break, a slow LLM); for an agent that streams, also a stream that stops without its end.
"""

from __future__ import annotations

from flakeproxy.starter.answers import Answers
from flakeproxy.starter.layout import Layout

#: What a provider's error looks like when an agent passes it on as it came (regexes, case-insensitive; no `'`),
#: each with where it comes from. Chosen so that an agent's own words about a failure ("the service is down, try
#: again later") match none: the SDKs' and HTTP clients' exception texts, a pasted error body, and the messages
#: of flakeproxy's own error replies (flakeproxy.wire.provider_errors, flakeproxy.wire.gemini) that no one writes
#: by chance; their short ones ("Overloaded", "Request timed out.") are left out.
RAW_ERRORS: list[tuple[str, str]] = [
    (r"Traceback \(most recent call last\)", "a Python traceback"),
    (r"Error code: \d{3}", "openai-python, anthropic: Error code: 503 - {...}"),
    (r"\Werror\W\s*:\s*\{", "an error body pasted as a dict or JSON (google-genai: 503 UNAVAILABLE. {...})"),
    (r"Rate limit reached for|The server is overloaded or not ready yet", "OpenAI's 429 and 503 messages"),
    (r"The server had an error while processing your request|Incorrect API key provided", "OpenAI's 500, 401"),
    (r"would exceed the rate limit for your organization|overloaded_error|rate_limit_error", "Anthropic's"),
    (r"RESOURCE_EXHAUSTED|Resource has been exhausted", "Gemini's 429"),
    (r"The model is overloaded\. Please try again later|An internal error has occurred\. Please retry", "Gemini's"),
    (r"Internal Server Error", "the 500 reason phrase"),
    (r"(Client|Server) error .\d{3} |\d{3} (Client|Server) Error: |\d{3}, message=", "httpx, requests, aiohttp"),
    (r"All connection attempts failed|Cannot connect to host|Max retries exceeded with url", "no connection"),
    (r"\[Errno -?\d+\]|peer closed connection without sending|Server disconnected without sending", "OS, httpx"),
]


def _patterns() -> list[str]:
    """The YAML list items, each pattern single-quoted (a backslash is itself there) with its source."""
    return [f"        - '{pattern}'   # {source}" for pattern, source in RAW_ERRORS]


def invariant_lines(layout: Layout) -> list[str]:
    lines = [
        "  invariants:",
        "    # severity: critical = any failure fails the run (exit 1); high 2, medium and low 1 in the score.",
        "    - id: answers",
        "      type: completes",
        "      severity: critical",
        '      description: "It answers in every scenario: no crash, no timeout, no HTTP error of its own"',
        "    - id: says-something",
        "      type: output_not_empty",
        "      severity: high",
        "    - id: no-raw-provider-errors",
        "      type: excludes_pattern       # regexes, case-insensitive",
        "      patterns:                    # what SDKs and HTTP clients print for a provider's error",
        *_patterns(),
        "      severity: high",
        "      when: any_chaos_active       # judged only in the scenarios that break something",
        '      description: "It explains a failure in its own words, never by pasting the upstream\'s error"',
        "    - id: no-pii",
        "      type: excludes_pii           # cards (Luhn), IBANs, SSNs, phones, emails, IPs; allow: [...] for yours",
        "      severity: high",
        "    - id: answers-in-time",
        "      type: latency",
        "      max_ms: 30000",
        "      severity: medium",
    ]
    if layout.llm_targets:
        lines += [
            "    - id: waits-for-retry-after",
            "      type: retry_after_respected  # judged on the proxy's journal of what the agent sent",
            f"      target: {layout.llm_targets[0]}",
            "      severity: medium",
            "      when: llm_faults_active",
        ]
    return lines


def _tool_down(answers: Answers, layout: Layout) -> list[str] | None:
    python_tools = answers.agent_type == "python" and answers.tool_callables
    if not python_tools and (answers.agent_type == "python" or not layout.tool_targets):
        return None  # a python agent's tool faults wrap its tool callables; with none, nothing to break
    return [
        "  - name: tool-down",
        '    description: "Every tool call answers 503"',
        '    tool_faults: [{tool: "*", mode: error, error_code: 503}]',
    ]


def scenario_lines(answers: Answers, layout: Layout) -> list[str]:
    lines = [
        "chaos_matrix:     # each scenario runs every golden prompt once; `flakeproxy profiles` lists ready-made ones",
        "  - name: no-chaos",
        '    description: "The calm run, for comparison"',
        "  - name: llm-rate-limited",
        '    description: "The first LLM call answers 429 with Retry-After: 1 s; the official SDKs wait and retry"',
        "    llm_faults: [{mode: rate_limit, retry_after_s: 1, times: 1}]",
        "  - name: llm-down",
        '    description: "Every LLM call answers 503: the agent should say so, not crash or hang"',
        "    llm_faults: [{mode: error, error_code: 503}]",
        "  - name: llm-truncated",
        '    description: "Every LLM answer is cut after 5 words (finish_reason: length / stop_reason: max_tokens)"',
        "    llm_faults: [{mode: truncated_response, max_tokens: 5}]",
        "    # A cut answer passes the starter's checks, `answers` (completes) too: only you know what a whole one",
        "    # says. So does the fragment a stream_cut fault leaves (a stream that stops without its end, which the",
        '    # SDKs accept silently: "Sorry, the accounts "). Add a rule of yours, e.g. a `contains` or `regex` that',
        "    # every whole answer keeps; a careful agent reads finish_reason, and notices a stream with no end.",
        "    # Until then, a run whose cut answers passed every check warns: none reads whether an answer is whole.",
    ]
    if answers.stream:
        lines += [
            "  - name: llm-stream-cut",
            '    description: "Every streamed LLM answer stops after 4 events, without its end: a dropped connection"',
            "    llm_faults: [{mode: stream_cut, after_events: 4}]",
        ]
    mcp = [t.name for t in layout.targets if "mcp_tool" in t.fields]
    if mcp:
        lines += [
            "  - name: mcp-tool-error",
            f'    description: "Every call of MCP tool {layout_tool(layout, mcp[0])} answers isError: true"',
            f"    tool_faults: [{{tool: {mcp[0]}, mode: is_error}}]",
        ]
    tool_down = _tool_down(answers, layout)
    if tool_down is not None:
        return lines + tool_down
    return [
        *lines,
        "  - name: llm-slow",
        '    description: "5 s before the first token of every LLM answer"',
        "    llm_faults: [{mode: slow, delay_ms: 5000}]",
    ]


def layout_tool(layout: Layout, target: str) -> str:
    """The MCP tool a target names."""
    return next(t.fields["mcp_tool"] for t in layout.targets if t.name == target)
