"""Read objects we do not trust without running code that their classes chose.

The validators, the serializer, the registry and the executor of checkpoint 06 all read foreign
objects through it. Lab 6.6 (hardening) writes the three readers of classes and namespaces;
``key_mismatch`` and ``describe_exception`` are given.
"""

from __future__ import annotations

__all__ = [
    "MAX_DESCRIBED_CODE_POINTS",
    "class_attribute",
    "describe_exception",
    "key_mismatch",
    "non_str_key",
    "own_attributes",
    "type_name",
]

import types
from collections.abc import KeysView
from typing import Any, Final, cast

from harness.protocol import type_name  # checkpoint 01's: part of this module's API

# `obj.attr`, `vars(obj)`, `type(obj).__name__`, `str(exc)`, `isinstance` and even
# `key in some_dict` can run code that an object's class (or metaclass) wrote. These helpers go
# through the descriptors of `type`, `object` and `BaseException` themselves, which are written
# in C and run nothing else.
# --8<-- [start:safe-reading]
_mro_of: Final = type.__dict__["__mro__"].__get__  # a class's real MRO tuple
_class_dict_of: Final = type.__dict__["__dict__"].__get__  # a class's real namespace
_args_of: Final = BaseException.__dict__["args"].__get__  # an exception's real args tuple
# An exception's message is shown up to this length: as long as any string a tool's output may
# hold (harness.tool_output), and a huge message is never copied whole.
MAX_DESCRIBED_CODE_POINTS: Final = 4096


def class_attribute(cls: type, name: str) -> object | None:
    """Return what the class namespaces along the MRO hold under ``name``, without calling it.

    None means that no class along the MRO defines ``name`` other than as None.
    """
    # BEGIN LAB 6.6
    for klass in _mro_of(cls):
        # Not namespace.get(name): a lookup compares the keys that hash like name, and a str
        # subclass among them compares with its own __eq__. Exact strs compare in C.
        for key, found in _class_dict_of(klass).items():
            if type(key) is str and key == name and found is not None:
                return cast(object, found)
    return None
    # END LAB 6.6


def own_attributes(value: object) -> dict[str, object] | None:
    """Return the instance ``__dict__`` of ``value`` if it is an exact ``dict``, else None."""
    # BEGIN LAB 6.6
    # vars(value) would look `__dict__` up on the object, and a class may answer with a
    # property. Here we fetch the slot from the class namespaces and accept it only if it is the
    # C descriptor Python itself puts there (a getset one, or a member one as for a module or a
    # SimpleNamespace), named `__dict__`: another slot's descriptor planted under that name
    # would hand out whatever that slot holds.
    slot = class_attribute(type(value), "__dict__")
    kind = type(slot)  # compared with `is`: `in` would run == of its metaclass, foreign code
    if kind is not types.GetSetDescriptorType and kind is not types.MemberDescriptorType:
        return None
    if kind.__dict__["__name__"].__get__(slot) != "__dict__":
        return None
    try:
        own = cast("Any", slot).__get__(value, type(value))
    except (TypeError, AttributeError):  # a descriptor taken from some other class
        return None
    return own if type(own) is dict else None
    # END LAB 6.6


def non_str_key(fields: dict[Any, object]) -> str | None:
    """Say which key of a dict is not an exact str (``"keys must be str, got int"``), or None.

    Check this before looking anything up in a dict that came from outside: a lookup compares
    the keys that hash alike, and a str subclass among them compares with its own ``__eq__``.
    """
    # BEGIN LAB 6.6
    for key in dict.keys(fields):  # dict's own method: a subclass's __iter__ does not run
        if type(key) is not str:
            return f"keys must be str, got {type_name(key)}"
    return None
    # END LAB 6.6


def key_mismatch(fields: dict[object, object], wanted: KeysView[str]) -> str | None:
    """Say how a plain dict's keys differ from ``wanted``, naming the first one at fault.

    Returns None when the keys are exactly ``wanted``; otherwise a phrase such as
    ``"is missing 'id'"`` that completes a sentence about the dict.
    """
    # Key types first (non_str_key's loop, written out: the executor asks this of every call);
    # once they are all exact strs, one set comparison in C settles the usual case.
    for key in fields:  # a plain dict: iterating it runs no code
        if type(key) is not str:
            return f"keys must be str, got {type_name(key)}"
    if fields.keys() == wanted:
        return None
    for key in wanted:
        if key not in fields:
            return f"is missing {key!r}"
    unknown = next(key for key in fields if key not in wanted)
    return f"has unknown field {unknown!r}"


def describe_exception(exc: BaseException) -> str:
    """Return ``"TypeName: first argument"`` without running the exception's own code."""
    # str(exc) would call a __str__ the exception's author wrote. The args tuple is read through
    # BaseException's own descriptor, and only an exact str argument is shown, cut short.
    args = _args_of(exc)
    name = type_name(exc)
    if args and type(args[0]) is str and args[0]:
        return f"{name}: {args[0][:MAX_DESCRIBED_CODE_POINTS]}"
    return name


# --8<-- [end:safe-reading]
