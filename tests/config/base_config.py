"""A small valid config whose line numbers the error tests rely on (do not reflow it)."""

BASE = """\
version: "2.0"
agent:
  type: http
  endpoint: http://127.0.0.1:8000/chat
  request_template: {message: "{prompt}"}
  response_path: $.reply
  timeout_ms: 30000
proxy:
  admin: 127.0.0.1:8790
  listeners:
    - {name: llm, listen: 127.0.0.1:8701, upstream: http://127.0.0.1:9101}
    - {name: tools, listen: 127.0.0.1:8702, upstream: http://127.0.0.1:9102}
targets:
  market_data_api: {listener: tools, path: "/v1/quotes*", method: GET}
  llm: {listener: llm, api: openai}
golden_prompts: ["What is AAPL trading at?"]
contract:
  name: finance
  invariants:
    - id: cite
      type: regex
      pattern: "(?i)source"
      severity: critical
      when: always
    - id: fast
      type: latency
      max_ms: 60000
chaos_matrix:
  - name: no-chaos
  - name: tool-down
    tool_faults:
      - tool: market_data_api
        mode: error
        error_code: 503
  - name: llm-degraded
    llm_faults:
      - mode: truncated_response
        max_tokens: 20
scoring:
  weights: {mutation: 0.20, chaos: 0.35, contract: 0.35, replay: 0.10}
"""


def edit(old: str, new: str) -> str:
    """BASE with the first occurrence of old replaced by new (old must be there)."""
    assert old in BASE, f"{old!r} is not in BASE"
    return BASE.replace(old, new, 1)
