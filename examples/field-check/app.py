"""field-check: a markup renderer that shows which form fields an agent can
fill, and which of them a screen reader (and an agent reading the
accessibility tree) cannot name.

    POST /api/v1/tabs/{id}/screenshot
    {"screenshot": {"markup": ["form_fields"]}}

- a field with an accessible name: outlined blue, labelled with its name;
- a field without one: outlined red, dashed, labelled "no name";
- the focused field: a thicker outline.

Only fields inside the viewport are drawn; a label that would leave the
image goes inside the field's top edge instead.
"""

from wabp_plugin import MarkupPlugin, flags, label, outline, rgba

TAG = "form_fields"
BLUE = rgba(37, 99, 235)
BLUE_WASH = rgba(37, 99, 235, 30)
RED = rgba(220, 38, 38)
RED_WASH = rgba(220, 38, 38, 40)
WHITE = rgba(255, 255, 255)
LABEL_SIZE = 11.0
MAX_LABEL = 32


def visible(rect, viewport) -> bool:
    width, height = viewport
    return rect.width > 0 and rect.height > 0 and rect.x < width and rect.y < height \
        and rect.x + rect.width > 0 and rect.y + rect.height > 0


def label_y(rect) -> float:
    """Above the field when there is room, else inside its top edge."""
    above = rect.y - 1.4 * LABEL_SIZE
    return above if above >= 0 else max(0.0, rect.y)


class Markup(MarkupPlugin):
    tags = [TAG]

    def draw(self, tags, viewport, elements):
        if TAG not in tags:
            return []
        shapes, labels = [], []
        for element in elements:
            element_flags = flags(element)
            if "typeable" not in element_flags or not visible(element.rect, viewport):
                continue
            width = 4.0 if "focused" in element_flags else 2.0
            name = element.name.strip()
            if name:
                shapes.append(outline(element.rect, BLUE, width, fill=BLUE_WASH))
                text = name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"
                labels.append(label(max(0.0, element.rect.x), label_y(element.rect), text, WHITE, BLUE, LABEL_SIZE))
            else:
                shapes.append(outline(element.rect, RED, width, dash=[6.0, 3.0], fill=RED_WASH))
                labels.append(label(max(0.0, element.rect.x), label_y(element.rect), f"no name <{element.tag}>", WHITE, RED, LABEL_SIZE))
        # Labels last, so no outline covers one.
        return shapes + labels
