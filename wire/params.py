"""The bases of every method's params and of a one-of result, and the params both tables share."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from lazy_memory.engine.records import is_unicode


class Params(BaseModel):
    """Base of every method's params: unknown keys are an error, not silently ignored.

    Text must be Unicode: JSON can escape half of a surrogate pair (`"\\ud800"`), and such a
    string can be neither stored, looked up nor logged as UTF-8, so it is refused here, for
    every method, as invalid params.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _unicode_only(cls, data: Any) -> Any:
        where = _lone_surrogate(data, "")
        if where is not None:
            raise PydanticCustomError(
                "lone_surrogate",
                "{field} holds a lone surrogate, which is not Unicode text",
                {"field": where or "the params"},
            )
        return data


def _lone_surrogate(value: Any, path: str) -> str | None:
    """Where in a JSON value a string (or an object's key) holds a lone surrogate, or None."""
    if isinstance(value, str):
        return None if is_unicode(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _lone_surrogate(key, path) is not None:
                return path or "a key"
            found = _lone_surrogate(item, inner)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


class NoParams(Params):
    """A method that takes nothing."""


class NameParams(Params):
    """A method on one record by name (`lazy/memory/rm`, `lazy/storage/get_record`)."""

    name: str


class HistoryParams(Params):
    """`lazy/memory/history`, `lazy/storage/history`: every write, or those of one name."""

    name: str | None = None


class Sparse(BaseModel):
    """A result whose fields left None do not go on the wire: a field added for what only
    some answers say (such as `unreadable`) leaves every other answer as it was."""

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}


class OneOf(Sparse):
    """A result with alternative shapes: only the field that was given goes on the wire."""
