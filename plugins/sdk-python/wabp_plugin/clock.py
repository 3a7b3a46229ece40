"""Wall-clock time and sleeping (capability "clock")."""

from wit_world.imports import clock as _clock


def now_ms() -> int:
    """Milliseconds since the Unix epoch."""
    return _clock.now_ms()


def sleep_ms(ms: float) -> None:
    """Suspends the plugin; the call's deadline keeps running."""
    _clock.sleep_ms(max(0, int(round(ms))))
