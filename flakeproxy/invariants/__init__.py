"""The invariant catalogue: one small model per type; the discriminated union is the registry."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from flakeproxy.invariants.amplification import Amplification
from flakeproxy.invariants.base import SEVERITY_WEIGHTS, Invariant, Severity, When
from flakeproxy.invariants.behavior_unchanged import BehaviorUnchanged
from flakeproxy.invariants.call_count import CallCount
from flakeproxy.invariants.command_exit import CommandExit
from flakeproxy.invariants.completes import Completes
from flakeproxy.invariants.contains import Contains
from flakeproxy.invariants.contains_any import ContainsAny
from flakeproxy.invariants.cost_budget import CostBudget
from flakeproxy.invariants.custom import Custom
from flakeproxy.invariants.excludes_pattern import ExcludesPattern
from flakeproxy.invariants.excludes_pii import ExcludesPii
from flakeproxy.invariants.file_absent import FileAbsent
from flakeproxy.invariants.file_content import FileContent
from flakeproxy.invariants.file_exists import FileExists
from flakeproxy.invariants.http_mock_assertions import HttpMockAssertions
from flakeproxy.invariants.latency import Latency
from flakeproxy.invariants.llm_as_judge import LlmAsJudge
from flakeproxy.invariants.max_llm_calls import MaxLlmCalls
from flakeproxy.invariants.max_tool_calls import MaxToolCalls
from flakeproxy.invariants.no_call_to import NoCallTo
from flakeproxy.invariants.no_loop import NoLoop
from flakeproxy.invariants.output_not_empty import OutputNotEmpty
from flakeproxy.invariants.prompt_leak import PromptLeak
from flakeproxy.invariants.refusal_check import RefusalCheck
from flakeproxy.invariants.regex import Regex
from flakeproxy.invariants.retries_after_fault import RetriesAfterFault
from flakeproxy.invariants.retry_after_respected import RetryAfterRespected
from flakeproxy.invariants.similarity import Similarity
from flakeproxy.invariants.sql import Sql
from flakeproxy.invariants.telemetry_noticed import TelemetryNoticed
from flakeproxy.invariants.time_to_detect import TimeToDetect
from flakeproxy.invariants.token_budget import TokenBudget
from flakeproxy.invariants.valid_json import ValidJson

AnyInvariant = Annotated[
    Amplification
    | BehaviorUnchanged
    | CallCount
    | CommandExit
    | Completes
    | Contains
    | ContainsAny
    | CostBudget
    | Custom
    | ExcludesPattern
    | ExcludesPii
    | FileAbsent
    | FileContent
    | FileExists
    | HttpMockAssertions
    | Latency
    | LlmAsJudge
    | MaxLlmCalls
    | MaxToolCalls
    | NoCallTo
    | NoLoop
    | OutputNotEmpty
    | PromptLeak
    | RefusalCheck
    | Regex
    | RetriesAfterFault
    | RetryAfterRespected
    | Similarity
    | Sql
    | TelemetryNoticed
    | TimeToDetect
    | TokenBudget
    | ValidJson,
    Field(discriminator="type"),
]

__all__ = [
    "SEVERITY_WEIGHTS",
    "Amplification",
    "AnyInvariant",
    "BehaviorUnchanged",
    "CallCount",
    "CommandExit",
    "Completes",
    "Contains",
    "ContainsAny",
    "CostBudget",
    "Custom",
    "ExcludesPattern",
    "ExcludesPii",
    "FileAbsent",
    "FileContent",
    "FileExists",
    "HttpMockAssertions",
    "Invariant",
    "Latency",
    "LlmAsJudge",
    "MaxLlmCalls",
    "MaxToolCalls",
    "NoCallTo",
    "NoLoop",
    "OutputNotEmpty",
    "PromptLeak",
    "RefusalCheck",
    "Regex",
    "RetriesAfterFault",
    "RetryAfterRespected",
    "Severity",
    "Similarity",
    "Sql",
    "TelemetryNoticed",
    "TimeToDetect",
    "TokenBudget",
    "ValidJson",
    "When",
]
