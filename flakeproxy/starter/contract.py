"""The starter contract and its five-scenario matrix, as annotated YAML lines.

The invariants are the rules almost every agent should keep when its calls break (it answers, it says
something, it hides raw provider errors and PII, it answers in time, it honours Retry-After); `answers` is
critical and `scoring.min_resilience` is set, so the run can FAIL. The scenarios: no chaos, an LLM that
rate-limits once, an LLM that is down, answers cut short, and a tool API that is down (or, with no tool to
break, a slow LLM).
"""

from __future__ import annotations

from flakeproxy.starter.answers import Answers
from flakeproxy.starter.layout import Layout

#: What provider errors look like when an agent passes them on raw (the texts flakeproxy's faults send).
RAW_ERRORS = [
    r"Traceback \(most recent call last\)",
    "Rate limit reached for",
    "overloaded_error",
    "RESOURCE_EXHAUSTED",
    "Internal Server Error",
]


def invariant_lines(layout: Layout) -> list[str]:
    patterns = ", ".join(f"'{p}'" for p in RAW_ERRORS)
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
        f"      patterns: [{patterns}]",
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
