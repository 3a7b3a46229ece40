"""The engine's log, tagged with the plugin's name (capability "log")."""

from wit_world.imports import log as _log


def debug(message: str) -> None:
    _log.write(_log.Level.DEBUG, message)


def info(message: str) -> None:
    _log.write(_log.Level.INFO, message)


def warn(message: str) -> None:
    _log.write(_log.Level.WARN, message)


def error(message: str) -> None:
    _log.write(_log.Level.ERROR, message)
