"""Reading and targeting the page (capability "page")."""

from typing import List, Optional

from wit_world.imports import page as _page
from wit_world.imports import types as _types


def selector(css: str):
    """A target by CSS selector."""
    return _types.Target_Selector(css)


def ref(element_ref: str):
    """A target by snapshot ref (`e12`)."""
    return _types.Target_ElementRef(element_ref)


def query_selector_all(css: str) -> List:
    """Every element matching a CSS selector, in document order (at most 1000)."""
    return _page.query_selector_all(css)


def element_at(x: float, y: float):
    """The topmost element at a viewport point, or None."""
    return _page.element_at(x, y)


def viewport():
    return _page.viewport()


def locate(target):
    """The point to act on for a target (its visible centre), scrolled into
    view first; raises stale-ref, selector-not-found, element-not-visible or
    element-not-interactable rather than pointing elsewhere."""
    return _page.locate(target)


def focus(target, select_all: bool = False):
    return _page.focus(target, select_all)


def set_value(target, value: str) -> bool:
    """Sets a value an input takes without typing (date, color, range, ...)."""
    return _page.set_value(target, value)


def value_of(target) -> Optional[str]:
    return _page.value_of(target)
