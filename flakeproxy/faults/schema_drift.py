from __future__ import annotations

from random import Random
from typing import Any, Literal

from pydantic import Field, model_validator

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.json_edit import edit_json_or_text, is_jsonrpc, map_mcp_result, rename_drop
from flakeproxy.wire.streams import MapJsonEvents


class SchemaDriftFault(Fault):
    """Rename or drop fields (at any depth) of the upstream's JSON answer, as a changed API would.

    In an MCP result: in its structuredContent and in each text content that is a JSON document.
    """

    mode: Literal["schema_drift"]
    rename: dict[str, str] = Field(default_factory=dict, description="old field name -> new name")
    drop: list[str] = Field(default_factory=list, description="field names to remove")

    @model_validator(mode="after")
    def _something_drifts(self) -> SchemaDriftFault:
        if not self.rename and not self.drop:
            raise ValueError("schema_drift needs rename: {old: new} or drop: [field], or both")
        return self

    def act(self, call: Call, rng: Random) -> Action:
        def fields(data: Any) -> Any:
            return rename_drop(data, self.rename, self.drop)

        def drift(data: Any) -> Any:
            return map_mcp_result(data, on_json=fields) if is_jsonrpc(data) else fields(data)

        return Action(
            rewrite_body=lambda body: edit_json_or_text(body, drift, lambda text: text),
            stream=lambda: MapJsonEvents(drift),
        )
