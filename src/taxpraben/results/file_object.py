"""The base of every file model (:class:`FileObject`: lenient reading, faithful writing), the
schema version, and the helpers that declare a described key."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from taxpraben.results.json_value import JSONObject, JSONValue

if TYPE_CHECKING:
    from pydantic.config import JsonDict

#: The version of the results.json layout this code writes and reads. Raise it when a key
#: changes meaning or is removed; added keys do not change it.
SCHEMA_VERSION = 1

#: A number as written: an integer stays an integer and a float a float (a plain ``float``
#: annotation would turn ``0`` into ``0.0``), for facts this code copies from elsewhere.
Number = Union[int, float]  # noqa: UP007 (the docs generator reads the Union)


def described(description: str, *, when: str | None = None, default: JSONValue = None, doc_type: Any = None,
              **kwargs: Any) -> Any:
    """A model field with its description; ``when`` says when the writer writes the key
    (shown in the generated docs; absent means always); ``doc_type``: the type the docs show
    when the annotation is looser (a value checked by a validator)."""
    extra: JsonDict | None = {"when": when} if when else None
    if doc_type is not None:
        extra = {**(extra or {}), "doc_type": doc_type}
    if "default_factory" in kwargs:
        return Field(description=description, json_schema_extra=extra, **kwargs)
    return Field(default, description=description, json_schema_extra=extra, **kwargs)


def required(description: str) -> Any:
    return Field(..., description=description)


@lru_cache(maxsize=256)
def _shared_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The first tuple seen equal to ``keys``: the lines of a file mostly share one key order,
    and each object read then holds that one tuple, not a tuple and key names of its own (the
    36.5K predictions of a full benchmark held 13 MB of them)."""
    return keys


class FileObject(BaseModel):
    """A JSON object of the output files, kept as given: extra keys stay, key order stays.

    The order of a file's keys is the order its writer put them in (``meta`` takes the
    caller's facts first, for one), so a model remembers the order of the object it was
    validated from and serialises in that order; declared fields never given stay absent.
    """

    # defer_build: the validators are built on first use, not when `taxpraben` starts.
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, defer_build=True)

    _order: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: JSONValue, handler: ValidatorFunctionWrapHandler) -> FileObject:
        model: FileObject = handler(data)
        if isinstance(data, dict) and isinstance(model, FileObject):
            model._order = _shared_order(tuple(data))
        return model

    @model_serializer(mode="wrap")
    def _in_given_order(self, handler: SerializerFunctionWrapHandler) -> JSONObject:
        out: JSONObject = handler(self)
        if self._order is None:
            return out
        rank = {key: i for i, key in enumerate(self._order)}
        return dict(sorted(out.items(), key=lambda item: rank.get(item[0], len(rank))))

    def to_json(self) -> JSONObject:
        """The JSON object: the keys given, in their order (see the class docstring)."""
        return self.model_dump(mode="python", exclude_unset=True)

    def given_items(self, keys: Iterable[str]) -> list[tuple[str, JSONValue]]:
        """``(key, value)`` for each of ``keys`` the object was given, declared or extra, null
        values included, in the order of ``keys``.

        For what a reader shows only when the writer wrote it: a key written as null (a
        backend's default ``top_p``) reads differently from one never written, and a scorer's
        settings beyond ``model`` and ``layer`` are open (each scorer writes its own).
        """
        given = self.model_fields_set  # declared and extra keys alike
        return [(key, getattr(self, key)) for key in keys if key in given]

    def __eq__(self, other: object) -> bool:
        # The remembered key order says how to write the object, not what it holds: two
        # objects with the same values are equal whatever order their keys came in.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self.__pydantic_extra__ == other.__pydantic_extra__
        )
