"""Input as a mouse and keyboard make it (capability "input"). Each call
raises the host's error; the plugin base classes turn it into a plugin error."""

from typing import Optional

from wit_world.imports import input as _input
from wit_world.imports import types as _types

_BUTTONS = {"none": _types.MouseButton.NONE, "left": _types.MouseButton.LEFT,
            "right": _types.MouseButton.RIGHT, "middle": _types.MouseButton.MIDDLE}


def modifiers(alt: bool = False, control: bool = False, meta: bool = False, shift: bool = False):
    """Held modifier keys."""
    flags = _types.Modifiers(0)
    for on, flag in ((alt, _types.Modifiers.ALT), (control, _types.Modifiers.CONTROL),
                     (meta, _types.Modifiers.META), (shift, _types.Modifiers.SHIFT)):
        if on:
            flags |= flag
    return flags


NONE = modifiers()


def move(x: float, y: float) -> None:
    _input.mouse_move(x, y)


def click(x: float, y: float, button: str = "left", click_count: int = 1, held=NONE) -> None:
    """Move, press and release at (x, y), as a user's click."""
    _input.mouse_move(x, y)
    _input.mouse_down(x, y, _BUTTONS[button], click_count, held)
    _input.mouse_up(x, y, _BUTTONS[button], click_count, held)


def wheel(x: float, y: float, delta_x: float, delta_y: float, held=NONE) -> None:
    """A wheel event at (x, y); positive `delta_y` scrolls down."""
    _input.mouse_wheel(x, y, delta_x, delta_y, held)


def press(key: str, held=NONE) -> None:
    """Presses a key by its DOM key value ("Enter", "a", "ArrowUp")."""
    _input.key_press(key, held)


def type_text(text: str) -> None:
    """Types text key by key, as a keyboard does."""
    for ch in text:
        _input.key_press(ch, NONE)


def insert_text(text: str) -> None:
    """Inserts text at the caret as an IME commit would (no key events)."""
    _input.insert_text(text)


def pause(ms: float) -> None:
    """Lets `ms` of the page's time pass, as a user's pause would."""
    _input.pause(max(0, int(round(ms))))
