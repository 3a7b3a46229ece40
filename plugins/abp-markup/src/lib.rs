//! The Agent Browser Protocol's screenshot markup: outlines for clickable,
//! typeable and scrollable elements, the focused element, and a coordinate
//! grid.

use wabp_plugin_sdk::{Color, Element, ElementFlags, LabelShape, LineShape, MarkupPlugin, PluginError, Rect, RectShape, Shape};

struct AbpMarkup;

const CLICKABLE: Color = Color::rgba(22, 163, 74, 255);
const TYPEABLE: Color = Color::rgba(234, 88, 12, 255);
const SCROLLABLE: Color = Color::rgba(147, 51, 234, 255);
const SELECTED: Color = Color::rgba(37, 99, 235, 255);
const GRID: Color = Color::rgba(220, 38, 38, 255);
const WHITE: Color = Color::rgba(255, 255, 255, 255);

// Translucent enough that the page's own content stays readable underneath.
const STROKE_ALPHA: u8 = 200;
const FILL_ALPHA: u8 = 25;
const GRID_ALPHA: u8 = 60;

const GRID_STEP: f64 = 100.0;
const INDEX_LABEL_SIZE: f32 = 11.0;
const GRID_LABEL_SIZE: f32 = 10.0;

const TAGS: [&str; 5] = ["clickable", "typeable", "scrollable", "grid", "selected"];

impl MarkupPlugin for AbpMarkup {
    fn tags() -> Vec<String> {
        TAGS.iter().map(|t| t.to_string()).collect()
    }

    fn render(tags: &[String], viewport: (f64, f64), elements: &[Element]) -> Result<Vec<Shape>, PluginError> {
        let on = |tag: &str| tags.iter().any(|t| t == tag);
        let (width, height) = viewport;
        if !(width.is_finite() && height.is_finite() && width >= 0.0 && height >= 0.0) {
            return Err(PluginError::invalid(format!("viewport {width}x{height} is not a finite size")));
        }
        let mut shapes = Vec::new();
        // Painted in order: grid below, labels on top of every box.
        if on("grid") {
            grid(&mut shapes, width, height);
        }
        let visible = elements.iter().filter(|e| intersects(&e.rect, width, height));
        let mut labels = Vec::new();
        for e in visible {
            if on("scrollable") && e.flags.contains(ElementFlags::SCROLLABLE) {
                shapes.push(outline(e.rect, SCROLLABLE, 2.0, false, vec![6.0, 4.0]));
            }
            // Typeable wins over clickable: typing is the more specific thing
            // an agent can do with the element.
            let interactive = if on("typeable") && e.flags.contains(ElementFlags::TYPEABLE) {
                Some(TYPEABLE)
            } else if on("clickable") && e.flags.contains(ElementFlags::CLICKABLE) {
                Some(CLICKABLE)
            } else {
                None
            };
            if let Some(color) = interactive {
                shapes.push(outline(e.rect, color, 2.0, true, Vec::new()));
                labels.push(index_label(e, color, width, height));
            }
            if on("selected") && e.flags.contains(ElementFlags::FOCUSED) {
                shapes.push(outline(e.rect, SELECTED, 3.0, false, Vec::new()));
            }
        }
        shapes.extend(labels);
        Ok(shapes)
    }
}

fn intersects(r: &Rect, width: f64, height: f64) -> bool {
    r.width > 0.0 && r.height > 0.0 && r.x < width && r.y < height && r.x + r.width > 0.0 && r.y + r.height > 0.0
}

fn outline(rect: Rect, color: Color, stroke_width: f32, filled: bool, dash: Vec<f32>) -> Shape {
    Shape::Rect(RectShape { rect, stroke: Some(color.with_alpha(STROKE_ALPHA)), stroke_width, fill: filled.then_some(color.with_alpha(FILL_ALPHA)), dash })
}

/// The label box the host draws for `text` in its monospace font: glyphs are
/// 0.6 em wide, plus 0.2 em padding each side; height about 1.4 em.
fn label_size(text: &str, size: f32) -> (f64, f64) {
    let size = f64::from(size);
    (text.chars().count() as f64 * 0.61 * size + 0.4 * size, 1.4 * size)
}

/// The element's index just above its top-left corner, or inside it when
/// there is no room above; always kept inside the viewport.
fn index_label(e: &Element, color: Color, width: f64, height: f64) -> Shape {
    let text = e.index.to_string();
    let (w, h) = label_size(&text, INDEX_LABEL_SIZE);
    let x = e.rect.x.min(width - w).max(0.0);
    let y = if e.rect.y - h >= 0.0 { e.rect.y - h } else { e.rect.y };
    let y = y.min(height - h).max(0.0);
    Shape::Label(LabelShape { x, y, text, color: WHITE, background: Some(color.with_alpha(230)), size: INDEX_LABEL_SIZE })
}

fn grid(shapes: &mut Vec<Shape>, width: f64, height: f64) {
    let line = GRID.with_alpha(GRID_ALPHA);
    let label = |x: f64, y: f64, value: f64| {
        Shape::Label(LabelShape { x, y, text: format!("{value}"), color: GRID.with_alpha(230), background: Some(WHITE.with_alpha(170)), size: GRID_LABEL_SIZE })
    };
    let mut x = GRID_STEP;
    while x < width {
        shapes.push(Shape::Line(LineShape { x1: x, y1: 0.0, x2: x, y2: height, color: line, width: 1.0 }));
        shapes.push(label(x + 2.0, 2.0, x));
        x += GRID_STEP;
    }
    let mut y = GRID_STEP;
    while y < height {
        shapes.push(Shape::Line(LineShape { x1: 0.0, y1: y, x2: width, y2: y, color: line, width: 1.0 }));
        shapes.push(label(2.0, y + 2.0, y));
        y += GRID_STEP;
    }
}

wabp_plugin_sdk::export_markup_plugin!(AbpMarkup);

#[cfg(test)]
mod tests {
    use super::*;

    fn element(index: u32, x: f64, y: f64, flags: ElementFlags) -> Element {
        Element { index, rect: Rect { x, y, width: 80.0, height: 30.0 }, tag: "button".into(), role: String::new(), name: String::new(), href: None, flags }
    }

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    fn render(list: &[&str], elements: &[Element]) -> Vec<Shape> {
        AbpMarkup::render(&tags(list), (1280.0, 720.0), elements).unwrap()
    }

    #[test]
    fn draws_only_requested_tags() {
        let both = ElementFlags::CLICKABLE | ElementFlags::TYPEABLE;
        let els = [element(1, 10.0, 50.0, ElementFlags::CLICKABLE), element(2, 10.0, 100.0, both | ElementFlags::FOCUSED)];
        let shapes = render(&["clickable", "typeable"], &els);
        let strokes: Vec<Color> = shapes.iter().filter_map(|s| if let Shape::Rect(r) = s { r.stroke } else { None }).collect();
        assert_eq!(strokes, vec![CLICKABLE.with_alpha(STROKE_ALPHA), TYPEABLE.with_alpha(STROKE_ALPHA)]);
        let labels: Vec<&str> = shapes.iter().filter_map(|s| if let Shape::Label(l) = s { Some(l.text.as_str()) } else { None }).collect();
        assert_eq!(labels, vec!["1", "2"]);
        // Both-flagged falls back to clickable when typeable isn't asked for.
        let shapes = render(&["clickable"], &els[1..]);
        assert!(matches!(&shapes[0], Shape::Rect(r) if r.stroke == Some(CLICKABLE.with_alpha(STROKE_ALPHA))));
        assert!(render(&["scrollable"], &els).is_empty());
        assert_eq!(render(&["selected"], &els).len(), 1);
    }

    #[test]
    fn labels_stay_inside_the_viewport() {
        let shapes = render(&["clickable"], &[element(123, 1270.0, 0.0, ElementFlags::CLICKABLE), element(7, 100.0, 200.0, ElementFlags::CLICKABLE)]);
        let labels: Vec<&LabelShape> = shapes.iter().filter_map(|s| if let Shape::Label(l) = s { Some(l) } else { None }).collect();
        let (w, _) = label_size("123", INDEX_LABEL_SIZE);
        assert!(labels[0].x + w <= 1280.0 && labels[0].y == 0.0);
        assert!(labels[1].x == 100.0 && labels[1].y < 200.0, "above the box when there is room");
    }

    #[test]
    fn grid_every_hundred_pixels() {
        let shapes = render(&["grid"], &[]);
        let lines = shapes.iter().filter(|s| matches!(s, Shape::Line(_))).count();
        assert_eq!(lines, 12 + 7);
        assert!(shapes.iter().any(|s| matches!(s, Shape::Label(l) if l.text == "700" && l.x == 2.0)));
        assert!(AbpMarkup::render(&tags(&["grid"]), (f64::INFINITY, 10.0), &[]).is_err());
    }

    #[test]
    fn offscreen_elements_are_skipped() {
        assert!(render(&["clickable"], &[element(1, 10.0, 900.0, ElementFlags::CLICKABLE)]).is_empty());
    }
}
