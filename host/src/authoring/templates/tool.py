"""A tool: the model calls it by name with JSON arguments; it runs in a fresh sandbox each time."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import ToolError_InvalidArgs, ToolInfo

PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class Tool(exports.Tool):
    def describe(self) -> list[ToolInfo]:
        return [ToolInfo("shout", "Returns the text in capital letters.", json.dumps(PARAMETERS), True)]

    def call(self, name: str, args: str) -> str:
        text = json.loads(args).get("text")
        if not isinstance(text, str):
            raise Err(ToolError_InvalidArgs("`text` is required: the text to shout"))
        return text.upper()
