"""Typer's value coercion without pydantic for the plain option types our commands use.

Typer 0.2x turns every option value into its annotated type through a pydantic ``TypeAdapter``,
built on first use: importing pydantic and building the adapters costs about half a second of
every command that takes an option. ``install_param(param)`` gives a parameter whose annotation
is ``bool``, ``int``, ``float``, ``str``, a ``Literal`` choice, or a ``list`` of those (``Optional``
of any: Typer has unwrapped it) a converter of its own with Typer's messages, word for word, and
then the bad value (``, got 'abc'``), which Typer's own do not repeat; any other parameter (paths, files, bounds, custom parsers) keeps Typer's. On a Typer without that
machinery (before 0.2x: Click's own types) it does nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, get_args, get_origin

try:  # Typer's runtime coercion layer (0.2x)
    from typer._click.exceptions import BadParameter
    from typer._coercion import RuntimeParam
    from typer._param_types import coerce_cli_choice
except ImportError:  # pragma: no cover - an older Typer on Click's types: nothing to replace
    RuntimeParam = None

NOT_INT = "Input should be a valid integer, unable to parse string as an integer"
FRACTION = "Input should be a valid integer, got a number with a fractional part"
NOT_NUMBER = "Input should be a valid number, unable to parse string as a number"
NOT_BOOL = "Input should be a valid boolean, unable to interpret input"
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"", "0", "off", "f", "false", "n", "no"})


def _shown(value: Any) -> str:
    """The bad value as the user typed it, quoted (Typer's own words never repeat it)."""
    return repr(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)


def to_int(value: Any, ctx=None) -> int:
    """An integer from a command-line string (or a default already typed).

    Raises:
        ValueError: with Typer's message and the bad value.
    """
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{FRACTION}, got {value!r}")
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"{NOT_INT}, got {_shown(value)}") from None


def to_float(value: Any, ctx=None) -> float:
    """A float from a command-line string. Raises ValueError with Typer's message."""
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        raise ValueError(f"{NOT_NUMBER}, got {_shown(value)}") from None


def to_str(value: Any, ctx=None) -> str:
    """The value as text (bytes decoded as the terminal's arguments are)."""
    if isinstance(value, bytes):
        import sys

        return value.decode(sys.getfilesystemencoding(), "replace")
    return str(value)


def to_bool(value: Any, ctx=None) -> bool:
    """A flag's value (an environment variable's text included). Raises ValueError with Typer's message."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError(f"{NOT_BOOL}, got {_shown(value)}")


def _choice(choices: tuple, case_sensitive: bool) -> Callable:
    def to_choice(value: Any, ctx=None) -> Any:
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError as err:
            raise ValueError(f"Value error, {err}") from None  # as pydantic words a validator's error

    return to_choice


def converter(annotation: Any, info) -> Callable | None:
    """The converter of one plain annotation, or None when Typer's own is needed."""
    if (info.parser is not None or info.min is not None or info.max is not None or info.clamp
            or getattr(info, "formats", None)):
        return None
    if annotation is int:
        return to_int
    if annotation is float:
        return to_float
    if annotation is str:
        return to_str
    if annotation is bool:
        return to_bool
    if get_origin(annotation) is Literal:
        return _choice(get_args(annotation), info.case_sensitive)
    return None


if RuntimeParam is not None:
    @dataclass(frozen=True)
    class Plain(RuntimeParam):
        """Coercion by a plain converter; ``many``: a list of such values."""

        convert: Callable = to_str
        many: bool = False

        def _coerce_value(self, value: Any, param, ctx) -> Any:
            try:
                if self.many:
                    items = value if isinstance(value, (list, tuple)) else [value]
                    return [self.convert(item, ctx) for item in items]
                return self.convert(value, ctx)
            except ValueError as err:
                raise BadParameter(str(err), ctx=ctx, param=param) from None


def plain_runtime_param(param):
    """A ``Plain`` coercion for a Typer parameter with a plain annotation, else None."""
    desc = getattr(param, "type_descriptor", None)
    if RuntimeParam is None or desc is None or desc.file_annotation is not None:
        return None
    annotation, many = desc.annotation, False
    if get_origin(annotation) is list:
        (annotation,), many = get_args(annotation), True
    convert = converter(annotation, desc.parameter_info)
    if convert is None:
        return None
    return Plain(parameter_info=desc.parameter_info, annotation=desc.annotation, convert=convert, many=many)


def install_param(param) -> None:
    """Give one Typer parameter a pydantic-free coercion when its annotation is plain."""
    if getattr(param, "_runtime_param", False) is None:  # Typer builds its own on first use
        plain = plain_runtime_param(param)
        if plain is not None:
            param._runtime_param = plain
