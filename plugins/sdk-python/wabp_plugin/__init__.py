"""The wabp plugin SDK for Python: a thin, typed layer over the bindings
componentize-py generates from wit/ (the `wit_world` package).

A plugin is a module `app` with one class named after its kind's interface:
`Action`, `Markup`, `Wait`, `Policy` or `Interceptor`, subclassing the base
class here. Errors become the WIT `plugin-error` the engine maps to an HTTP
status and an ABP code. Host capabilities live in their own modules
(`wabp_plugin.log`, `.input`, `.page`, `.script`, `.navigation`, `.clock`):
import only what plugin.toml grants.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from componentize_py_types import Err
from wit_world.imports import types as _types

__all__ = [
    "PluginError", "ActionPlugin", "action", "Context",
    "MarkupPlugin", "rgba", "outline", "label", "line", "flags",
    "WaitPlugin", "wait", "pending", "done", "kind_of",
    "PolicyPlugin", "allow", "deny", "ask",
    "InterceptorPlugin", "proceed", "abort", "fulfill", "header",
]

# ---- errors ------------------------------------------------------------------

_CODES = {
    "invalid-request": _types.ErrorCode.INVALID_REQUEST,
    "not-found": _types.ErrorCode.NOT_FOUND,
    "selector-not-found": _types.ErrorCode.SELECTOR_NOT_FOUND,
    "element-not-visible": _types.ErrorCode.ELEMENT_NOT_VISIBLE,
    "element-not-interactable": _types.ErrorCode.ELEMENT_NOT_INTERACTABLE,
    "navigation-failed": _types.ErrorCode.NAVIGATION_FAILED,
    "evaluation-error": _types.ErrorCode.EVALUATION_ERROR,
    "timeout": _types.ErrorCode.TIMEOUT,
    "failed": _types.ErrorCode.FAILED,
    "stale-ref": _types.ErrorCode.STALE_REF,
}

_HOST_ERRORS = {
    "HostError_Denied": "failed",
    "HostError_Invalid": "invalid-request",
    "HostError_Failed": "failed",
    "HostError_StaleRef": "stale-ref",
    "HostError_SelectorNotFound": "selector-not-found",
    "HostError_ElementNotVisible": "element-not-visible",
    "HostError_ElementNotInteractable": "element-not-interactable",
}


class PluginError(Exception):
    """An expected failure: the engine answers it with `code`'s HTTP status
    (`invalid-request` 400, `not-found` 404, `failed` 500, ...)."""

    def __init__(self, code: str, message: str):
        if code not in _CODES:
            raise ValueError(f"unknown error code {code!r}; one of {sorted(_CODES)}")
        super().__init__(message)
        self.code = code
        self.message = message

    @staticmethod
    def invalid(message: str) -> "PluginError":
        return PluginError("invalid-request", message)

    @staticmethod
    def not_found(message: str) -> "PluginError":
        return PluginError("not-found", message)

    @staticmethod
    def failed(message: str) -> "PluginError":
        return PluginError("failed", message)


def to_wit_error(error: BaseException) -> Err:
    """Whatever a plugin raised, as `Err(plugin-error)`: a PluginError keeps
    its code, a host error maps to the matching code, anything else is
    `failed` with its message."""
    if isinstance(error, PluginError):
        return Err(_types.PluginError(code=_CODES[error.code], message=error.message))
    if isinstance(error, Err):
        kind = type(error.value).__name__
        if kind in _HOST_ERRORS:
            return Err(_types.PluginError(code=_CODES[_HOST_ERRORS[kind]], message=str(error.value.value)))
        if isinstance(error.value, _types.PluginError):
            return error
    return Err(_types.PluginError(code=_types.ErrorCode.FAILED, message=f"{type(error).__name__}: {error}"))


def _guarded(body: Callable[[], Any]) -> Any:
    try:
        return body()
    except Exception as error:  # host errors (`Err`) are Exceptions too
        raise to_wit_error(error)


def _schema_text(schema: Dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"))


# ---- actions -------------------------------------------------------------------

@dataclass
class Context:
    """What an action is called with besides its params."""
    tab_id: str
    #: Where the previous input action left the virtual pointer.
    pointer: tuple


def action(description: str, params: Optional[Dict[str, Any]] = None, name: Optional[str] = None):
    """Marks a method of an `ActionPlugin` as an action (named after the
    method unless `name` is given; snake_case): `params` is the JSON Schema
    of its params object."""

    def mark(method):
        method.__wabp_action__ = (name or method.__name__, description, params or {"type": "object"})
        return method

    return mark


class ActionPlugin:
    """Base of an action plugin's `Action` class: its `@action` methods are
    the actions, each called as `method(self, params: dict, context)` and
    returning any JSON value (the envelope's `result`)."""

    def _actions(self) -> Dict[str, Any]:
        found = {}
        for attribute in dir(type(self)):
            method = getattr(type(self), attribute)
            spec = getattr(method, "__wabp_action__", None)
            if spec:
                found[spec[0]] = (spec, getattr(self, attribute))
        return found

    def describe(self):
        from wit_world.exports import action as wit
        return [
            wit.ActionSpec(name=name, description=spec[1], params_schema=_schema_text(spec[2]))
            for name, (spec, _) in sorted(self._actions().items())
        ]

    def run(self, name: str, params: str, context) -> str:
        def body():
            found = self._actions().get(name)
            if found is None:
                raise PluginError.not_found(f"no action {name} in this plugin")
            try:
                parsed = json.loads(params)
            except ValueError as error:
                raise PluginError.invalid(f"params are not JSON: {error}")
            result = found[1](parsed, Context(tab_id=context.tab_id, pointer=(context.pointer_x, context.pointer_y)))
            return json.dumps(result)
        return _guarded(body)


# ---- markup ----------------------------------------------------------------------

def rgba(r: int, g: int, b: int, a: int = 255):
    """A colour (alpha 0-255, default opaque)."""
    from wit_world.exports import markup as wit
    return wit.Color(r=r, g=g, b=b, a=a)


def outline(rect, stroke, width: float = 2.0, dash: Optional[List[float]] = None, fill=None):
    """A rectangle outline, `width` px wide, dashed if `dash` has lengths,
    filled if `fill` is given."""
    from wit_world.exports import markup as wit
    return wit.Shape_Rect(wit.RectShape(rect=rect, stroke=stroke, stroke_width=width, fill=fill, dash=list(dash or [])))


def label(x: float, y: float, text: str, color, background=None, size: float = 12.0):
    """A text label with its top-left corner at (x, y)."""
    from wit_world.exports import markup as wit
    return wit.Shape_Label(wit.LabelShape(x=x, y=y, text=text, color=color, background=background, size=size))


def line(x1: float, y1: float, x2: float, y2: float, color, width: float = 2.0):
    """A straight line from (x1, y1) to (x2, y2), `width` px wide."""
    from wit_world.exports import markup as wit
    return wit.Shape_Line(wit.LineShape(x1=x1, y1=y1, x2=x2, y2=y2, color=color, width=width))


def flags(element) -> frozenset:
    """An element's flags by name: any of "clickable", "typeable",
    "scrollable", "focused"."""
    return frozenset(flag.name.lower() for flag in type(element.flags) if flag in element.flags)


class MarkupPlugin:
    """Base of a markup plugin's `Markup` class: `tags` lists the markup tags
    it draws; `draw(tags, viewport, elements)` returns shapes."""

    tags: List[str] = []

    def draw(self, tags: List[str], viewport: tuple, elements: list) -> list:
        raise NotImplementedError

    def describe(self) -> List[str]:
        return list(self.tags)

    def render(self, tags, viewport_width, viewport_height, elements):
        return _guarded(lambda: self.draw(list(tags), (viewport_width, viewport_height), list(elements)))


# ---- waits ---------------------------------------------------------------------

def pending(ms: float):
    """Ask again after `ms` (or sooner, on new signals)."""
    from wit_world.exports import wait as wit
    return wit.Decision_Pending(max(0, int(round(ms))))


def done(reason: str):
    """Settled; `reason` goes into the envelope's timing."""
    from wit_world.exports import wait as wit
    return wit.Decision_Done(reason)


def kind_of(signal) -> str:
    """A wait signal's kind: "request-started", "request-finished",
    "navigation-started", "navigation-committed", "dom-content-loaded",
    "load" or "dialog-opened"; its payload, if any, is `signal.value`."""
    name = type(signal).__name__.split("_", 1)[-1]
    return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")


def wait(description: str, params: Optional[Dict[str, Any]] = None, name: Optional[str] = None):
    """Marks a class as a wait type of a `WaitPlugin`: an instance is made
    with the wait's params (`__init__(self, params)`) and asked
    `begin(self)` then `poll(self, signals, elapsed_ms)`, each returning
    `pending(ms)` or `done(reason)`."""

    def mark(cls):
        cls.__wabp_wait__ = (name or cls.__name__, description, params or {"type": "object"})
        return cls

    return mark


class WaitPlugin:
    """Base of a wait plugin's `Wait` class: `types` lists its `@wait`
    classes. One wait runs at a time on an instance."""

    types: list = []
    # On the class, not the object: the bindings may make a new `Wait` for
    # each call of the wait's begin and polls.
    _current: Any = None

    def describe(self):
        from wit_world.exports import wait as wit
        return [
            wit.WaitSpec(name=t.__wabp_wait__[0], description=t.__wabp_wait__[1], params_schema=_schema_text(t.__wabp_wait__[2]))
            for t in self.types
        ]

    def begin(self, name: str, params: str):
        def body():
            for t in self.types:
                if t.__wabp_wait__[0] == name:
                    type(self)._current = t(json.loads(params))
                    return type(self)._current.begin()
            raise PluginError.not_found(f"no wait type {name} in this plugin")
        return _guarded(body)

    def poll(self, signals, elapsed_ms: int):
        current = type(self)._current
        if current is None:
            return done("no wait in progress")
        return current.poll(list(signals), elapsed_ms)


# ---- policies ----------------------------------------------------------------

def allow():
    from wit_world.exports import policy as wit
    return wit.Verdict_Allow()


def deny(reason: str):
    from wit_world.exports import policy as wit
    return wit.Verdict_Deny(reason)


def ask(prompt: str):
    from wit_world.exports import policy as wit
    return wit.Verdict_Ask(prompt)


class PolicyPlugin:
    """Base of a policy plugin's `Policy` class: `check(settings, request)`
    returns `allow()`, `deny(reason)` or `ask(prompt)`; `settings` is the
    operator's policy file as a dict."""

    def check(self, settings: dict, request) -> Any:
        raise NotImplementedError

    def decide(self, settings: str, request):
        return _guarded(lambda: self.check(json.loads(settings), request))


# ---- interceptors ----------------------------------------------------------------

def proceed(headers: Optional[Dict[str, str]] = None):
    """Let the request go, setting these headers."""
    from wit_world.exports import interceptor as wit
    return wit.Outcome_Proceed([wit.Header(name=k, value=v) for k, v in (headers or {}).items()])


def abort(reason: str):
    """Fail the request as blocked."""
    from wit_world.exports import interceptor as wit
    return wit.Outcome_Abort(reason)


def fulfill(status: int, body, headers: Optional[Dict[str, str]] = None):
    """Answer the request; it never leaves the browser."""
    from wit_world.exports import interceptor as wit
    data = body.encode() if isinstance(body, str) else bytes(body)
    return wit.Outcome_Fulfill(wit.Response(
        status=status, headers=[wit.Header(name=k, value=v) for k, v in (headers or {}).items()], body=data))


def header(request, name: str) -> Optional[str]:
    """A request's header, by name in any case."""
    lower = name.lower()
    for h in request.headers:
        if h.name.lower() == lower:
            return h.value
    return None


class InterceptorPlugin:
    """Base of an interceptor plugin's `Interceptor` class: `handle(request)`
    returns `proceed()`, `abort(reason)` or `fulfill(...)`."""

    def handle(self, request) -> Any:
        raise NotImplementedError

    def intercept(self, request):
        return _guarded(lambda: self.handle(request))
