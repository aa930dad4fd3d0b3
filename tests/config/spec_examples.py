"""Every config example of the specification, copied here as data: the spec folder (../shared/spec/) is not
beside a CI clone. Each text is the example as the spec prints it, with the indentation the spec's Markdown
lost restored (invariants-weights-gates.md is stored without leading spaces; behavioral-contracts.md as one
line); not a key or value is changed. `{ ... }` placeholders (the "Weights and gates" sketch) are not
examples and are left out."""

from __future__ import annotations

# spec/behavioral-contracts.md, "Configuration": the contract and chaos matrix of a finance agent.
BEHAVIORAL_CONTRACT = """\
contract:
  name: "Finance Agent Contract"
  description: "Invariants that must hold under all failure conditions"
  invariants:
    - id: always-cite-source
      type: regex
      pattern: "(?i)(source|according to|reference)"
      severity: critical
      when: always
      description: "Must always cite a data source"
    - id: never-fabricate-when-tools-fail
      type: regex
      pattern: '\\\\$[\\\\d,]+\\\\.\\\\d{2}'
      negate: true
      severity: critical
      when: tool_faults_active
      description: "Must not return dollar figures when tools are failing"
    - id: max-latency
      type: latency
      max_ms: 60000
      severity: medium
      when: always
chaos_matrix:
  - name: "no-chaos"
    tool_faults: []
    llm_faults: []
  - name: "search-tool-down"
    tool_faults:
      - tool: market_data_api
        mode: error
        error_code: 503
  - name: "llm-degraded"
    llm_faults:
      - mode: truncated_response
        max_tokens: 20
"""

# spec/invariants-weights-gates.md, section by section.
ANATOMY = """\
invariants:
  tests_pass:
    description: "All tests pass"
    weight: 1.0 # relative importance in composite
    gate: true # hard fail if this fails
    check:
      type: command_exit
      command: "npm test"
"""

COMMAND_EXIT = """\
invariants:
  tests_pass:
    description: "All tests pass"
    weight: 1.0
    gate: true
    check:
      type: command_exit
      command: "npm test"
      exit_code: 0 # optional; default 0
"""

FILE_EXISTS_ABSENT = """\
invariants:
  output_created:
    description: "Output file exists"
    check:
      type: file_exists
      path: "output.json"
  no_temp_files:
    description: "Temp file cleaned up"
    check:
      type: file_absent
      path: ".tmp/cache"
"""

FILE_CONTENT = """\
invariants:
  output_correct:
    description: "Output contains success marker"
    check:
      type: file_content
      path: "output.json"
      contains: '"status": "success"' # substring match
  no_debug_logs:
    description: "No console.log left in source"
    check:
      type: file_content
      path: "src/main.ts"
      not_contains: "console.log"
  matches_pattern:
    description: "Email follows expected format"
    check:
      type: file_content
      path: "draft.txt"
      pattern: "^Subject: Renewal\\\\b" # regex (matches anywhere unless ^/$)
"""

SQL = """\
invariants:
  reconciliation_clean:
    description: "No mismatches between A and B"
    weight: 0.5
    gate: true
    check:
      type: sql
      service: db # name from services[]
      query: |
        SELECT count(*) FROM customers_a a
        LEFT JOIN customers_b b ON a.id = b.id
        WHERE b.id IS NULL OR a.email != b.email
      equals: 0
"""

HTTP_MOCK_ASSERTIONS = """\
invariants:
  email_sent_once:
    description: "Exactly one renewal email"
    check:
      type: http_mock_assertions
      service: smtp # must have `record: true`
      assertions:
        - field: request_count
          filters:
            method: POST
            path: "/api/messages"
          equals: 1
        - field: last_request.body
          contains: "renewal"
"""

CUSTOM = """\
invariants:
  summary_accuracy:
    description: "Numbers in email match log"
    weight: 0.3
    check:
      type: custom
      script: checks/verify_summary.py
      runs_in: host # host (default) or sandbox
"""

LLM_AS_JUDGE = """\
invariants:
  email_tone:
    description: "Email is professional and actionable"
    weight: 0.3
    check:
      type: llm_as_judge
      model: paragon-fast
      criteria: |
        Evaluate the email for:
        1. Professional tone (no casual language)
        2. Actionable content (clear next steps)
        3. Accurate numbers
      input_from: smtp.last_request.body # what to judge
      rubric:
        pass: "Professional, accurate, actionable"
        fail: "Casual, missing numbers, or unclear"
      temperature: 0
      pass_threshold: 0.7 # optional; default 0.5
"""

# "Patterns": "All tests pass" gate + nice-to-have quality checks.
PATTERN_TESTS_GATE = """\
invariants:
  tests_pass:
    description: "All unit tests pass"
    weight: 1.0
    gate: true
    check:
      type: command_exit
      command: "npm test"
  no_console_log:
    description: "No debug logs left in source"
    weight: 0.3
    check:
      type: file_content
      path: "src/main.ts"
      not_contains: "console.log"
  small_diff:
    description: "Diff is small"
    weight: 0.2
    check:
      type: command_exit
      command: "[ $(git diff --stat | tail -1 | awk '{print $4+$6}') -lt 50 ]"
scoring:
  pass_threshold: 0.85
"""

# "Patterns": SQL state + HTTP mock assertion.
PATTERN_SQL_HTTP = """\
invariants:
  reconciliation_clean:
    description: "No mismatches"
    weight: 0.5
    gate: true
    check:
      type: sql
      service: db
      query: "SELECT count(*) FROM customers_a a LEFT JOIN customers_b b USING (id) WHERE a.email != b.email"
      equals: 0
  email_sent_once:
    description: "Exactly one summary email"
    weight: 0.3
    check:
      type: http_mock_assertions
      service: smtp
      assertions:
        - field: request_count
          filters: { to: "finance@co" }
          equals: 1
  email_quality:
    description: "Email is well-written"
    weight: 0.2
    check:
      type: llm_as_judge
      model: paragon-fast
      criteria: "Professional, accurate, actionable"
      input_from: smtp.last_request.body
      pass_threshold: 0.7
"""

# "Patterns": Custom Python invariant.
PATTERN_CUSTOM = """\
invariants:
  api_responses_valid:
    description: "Every API response is valid JSON with required fields"
    weight: 0.5
    check:
      type: custom
      script: checks/validate_api_responses.py
      runs_in: sandbox
"""

#: The invariants-weights-gates examples by name.
WEIGHTS_GATES = {
    "anatomy": ANATOMY,
    "command_exit": COMMAND_EXIT,
    "file_exists_absent": FILE_EXISTS_ABSENT,
    "file_content": FILE_CONTENT,
    "sql": SQL,
    "http_mock_assertions": HTTP_MOCK_ASSERTIONS,
    "custom": CUSTOM,
    "llm_as_judge": LLM_AS_JUDGE,
    "pattern_tests_gate": PATTERN_TESTS_GATE,
    "pattern_sql_http": PATTERN_SQL_HTTP,
    "pattern_custom": PATTERN_CUSTOM,
}
