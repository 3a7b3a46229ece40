"""Running an expression in the page (capability "script")."""

import json

from wit_world.imports import script as _script


def evaluate(expression: str):
    """Evaluates an expression in the page's main world, awaiting promises;
    its value."""
    return json.loads(_script.evaluate(expression))
