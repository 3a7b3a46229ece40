"""Leaving the page (capability "navigation")."""

from typing import Optional

from wit_world.imports import navigation as _navigation


def navigate(url: str, referrer: Optional[str] = None) -> None:
    _navigation.navigate(url, referrer)


def back() -> None:
    _navigation.back()


def forward() -> None:
    _navigation.forward()


def reload() -> None:
    _navigation.reload()
