"""How the runner reaches the agent under test: over HTTP, as a command, or as a Python callable."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from flakeproxy.config.base import HttpUrl, ImportPath, StrictModel

_JSON_LIKE = re.compile(r"\s*(?:\[|\{\s*(?:[\"'}]|$))")
_PATH_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[(['\"])(.*?)\3\]")


def parse_response_path(path: str) -> list[str | int]:
    """Split a `$.a.b[0]['c d']` path into its steps; raise ValueError when it is not one."""
    if not path.startswith("$"):
        raise ValueError("must start with '$', e.g. $.reply or $.choices[0].message.content")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _PATH_STEP.match(path, pos)
        if not m:
            raise ValueError(
                f"cannot parse at character {pos + 1} ({path[pos:]!r}); "
                "use $.key, [index] or ['key with spaces'], e.g. $.choices[0].message.content"
            )
        key, index, _, quoted = m.groups()
        steps.append(int(index) if index is not None else (key if key is not None else quoted))
        pos = m.end()
    return steps


def _valid_response_path(path: str) -> str:
    parse_response_path(path)
    return path


ResponsePath = Annotated[str, AfterValidator(_valid_response_path)]


class AgentBase(StrictModel):
    timeout_ms: int = Field(30000, ge=1, description="How long one invocation may take.")
    reset_function: ImportPath | None = Field(
        None,
        description="MODULE:FUNCTION called (sync or async) before each episode (a prompt, or a conversation's "
        "turns, in one scenario and replica) to clear state.",
    )

    # What the config checks need to know of an agent's own tools, asked of the agent rather than of its class.
    @property
    def tool_names(self) -> list[str]:
        """Tools the agent runs in-process, wrapped by flakeproxy: targets of tool faults and checks too."""
        return []

    @property
    def tool_names_at_run_time(self) -> bool:
        """Whether its tools' names are known only once it runs (a registry): names are not checked then."""
        return False

    def tool_faults_problem(self) -> str | None:
        """Why tool faults could not reach this agent's tools, or None."""
        return None


def _has_prompt(value: Any) -> bool:
    """Whether a template says where the message goes: {prompt}, or {messages} (the conversation so far)."""
    if isinstance(value, str):
        return "{prompt}" in value or value == "{messages}"
    if isinstance(value, dict):
        return any(_has_prompt(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_prompt(v) for v in value)
    return False


def parse_template(template: Any) -> Any:
    """A string template that looks like JSON (an object or array) is parsed here, once, so that {prompt} is later
    substituted as a value in the structure (never spliced into JSON text); any other string (e.g. '{prompt}')
    is a text body."""
    if not isinstance(template, str) or not _JSON_LIKE.match(template):
        return template
    try:
        return json.loads(template)
    except ValueError as e:
        where = f"line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else "somewhere"
        raise ValueError(
            f"looks like JSON but does not parse ({e.args[0].split(':')[0]} at {where}); use double quotes, "
            'put the placeholder in quotes ("{prompt}"), or write the template as YAML, e.g. request_template: '
            '{message: "{prompt}"}'
        ) from None


class HttpSlot(StrictModel):
    """One replica of an HTTP agent, bound to one slot of the proxy's listeners."""

    endpoint: HttpUrl
    reset_endpoint: HttpUrl | None = None


class HttpAgent(AgentBase):
    """An agent behind an HTTP endpoint; {prompt} in request_template is replaced JSON-safely. For conversations:
    {session} (a fresh id per episode) in the endpoint, headers and template, for an agent that keeps state per
    session or thread; {messages} as a whole value of the template (the OpenAI-style list of the earlier user and
    assistant messages and then the new turn), for a stateless chat endpoint."""

    type: Literal["http"]
    endpoint: HttpUrl
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    request_template: dict[str, Any] | list[Any] | str = Field(
        default_factory=lambda: {"input": "{prompt}"},
        description="The JSON body, with {prompt} where the message goes: a mapping, or a JSON string such as "
        '\'{"message": "{prompt}"}\' (parsed at load; {prompt} is substituted as a JSON value). Any other string '
        "is sent as the raw text body, e.g. '{prompt}'. \"{messages}\" as a whole value is replaced by the "
        "conversation so far and the new turn (a list of {role, content}); {session} by the episode's session id.",
    )
    response_path: ResponsePath | None = Field(
        None, description="Where the answer is in the JSON reply; unset takes the whole body as text."
    )
    headers: dict[str, str] = Field(default_factory=dict)
    reset_endpoint: HttpUrl | None = Field(
        None,
        description="POSTed before each episode (a prompt, or a conversation's turns, in one scenario and replica) "
        "to clear state.",
    )
    slots: list[HttpSlot] | None = Field(
        None,
        description="run.attribution: slots: one deployed replica per slot (each with its own sidecar port), in "
        "slot order: its endpoint and reset_endpoint; slot k's episodes go to entry k.",
    )

    @field_validator("request_template", mode="before")
    @classmethod
    def _parse_json_string(cls, template: Any) -> Any:
        return parse_template(template)

    @field_validator("request_template")
    @classmethod
    def _template_uses_prompt(cls, template: Any) -> Any:
        if not _has_prompt(template):
            raise ValueError(
                "request_template never uses {prompt}; put it where the agent expects the message, "
                'e.g. {message: "{prompt}"}, or {messages: "{messages}"} for a stateless chat endpoint'
            )
        return template

    @model_validator(mode="after")
    def _one_reset(self) -> HttpAgent:
        if self.reset_endpoint and self.reset_function:
            raise ValueError("set reset_endpoint or reset_function, not both")
        if self.slots and bool(self.reset_endpoint) != all(s.reset_endpoint for s in self.slots):
            if self.reset_endpoint:
                raise ValueError("with reset_endpoint set, give every entry of slots its own reset_endpoint")
            if all(s.reset_endpoint for s in self.slots):  # a trial was told the reverse of this
                raise ValueError(
                    "every entry of slots has a reset_endpoint: set agent.reset_endpoint too (the reset of an "
                    "episode no slot runs; slot 0's will do), or remove them from the slots"
                )
            raise ValueError("give every entry of slots its own reset_endpoint, and agent.reset_endpoint, or none")
        if self.request_template == "{messages}":
            raise ValueError(
                'request_template "{messages}" alone is a text body, and messages are a list; put it in a mapping, '
                'e.g. {messages: "{messages}"}'
            )
        if isinstance(self.request_template, str) and self.method in ("GET", "DELETE"):
            raise ValueError(
                f"a text request_template is sent as the body, and method {self.method} has none; "
                "use POST (or a mapping template, sent as query parameters)"
            )
        return self


class CommandAgent(AgentBase):
    """Any executable: the prompt on stdin, or in an argument that contains {prompt}; the answer on stdout.

    Conversations: process_per_turn (the default) runs one process per turn, all of an episode's turns with the
    same FLAKEPROXY_SESSION (and FLAKEPROXY_TURN, 1 = the first), so the agent finds its state by session; one_process
    starts one process per episode and writes each turn to its stdin as one line (newlines in a turn sent as
    spaces), then reads one line of stdout as that turn's answer, waiting timeout_ms per turn; stdin is closed
    after the last turn."""

    type: Literal["command"]
    command: list[str] = Field(min_length=1)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    reset_command: list[str] | None = Field(
        None,
        min_length=1,
        description="Run before each episode (a prompt, or a conversation's turns, in one scenario and replica).",
    )
    conversation: Literal["process_per_turn", "one_process"] = Field(
        "process_per_turn",
        description="process_per_turn: one process per turn (the prompt on stdin or in {prompt}, the state found "
        "by FLAKEPROXY_SESSION); one_process: one process per episode, a turn per line on stdin, an answer per "
        "line on stdout, timeout_ms per turn.",
    )

    @model_validator(mode="after")
    def _one_process_on_stdin(self) -> CommandAgent:
        if self.conversation == "one_process" and not self.prompt_on_stdin:
            raise ValueError(
                "conversation: one_process writes each turn on the agent's stdin; remove {prompt} from command "
                "(or use conversation: process_per_turn)"
            )
        return self

    @property
    def prompt_on_stdin(self) -> bool:
        return not any("{prompt}" in arg for arg in self.command)


class PythonAgent(AgentBase):
    """A sync or async callable taking the prompt and returning the answer. For conversations it may also take
    `history` (the earlier turns: a list of {role, content} messages), `session` (a fresh id per episode) and
    `turn` (1 = the first), by those parameter names: fn(prompt, history) -> str."""

    type: Literal["python"]
    callable: ImportPath
    tools: list[ImportPath] = Field(
        default_factory=list, description="Tool callables flakeproxy wraps to inject tool faults."
    )
    tool_registry: ImportPath | None = Field(
        None, description="A ToolRegistry (a mapping of tool name to callable) flakeproxy wraps."
    )

    @property
    def tool_names(self) -> list[str]:
        """The names tool faults use for the configured tool callables (their attribute names)."""
        return [t.partition(":")[2].rsplit(".", 1)[-1] for t in self.tools]

    @property
    def tool_names_at_run_time(self) -> bool:
        return self.tool_registry is not None

    def tool_faults_problem(self) -> str | None:
        if self.tools or self.tool_registry:
            return None
        return (
            "tool faults on a python agent need agent.tools (a list of MODULE:CALLABLE) or "
            "agent.tool_registry (MODULE:REGISTRY) so flakeproxy can wrap the tools"
        )


Agent = Annotated[HttpAgent | CommandAgent | PythonAgent, Field(discriminator="type")]
