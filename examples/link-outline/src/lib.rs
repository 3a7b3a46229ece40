//! `external_links` markup: outlines links that leave the site and labels
//! each with the host it goes to.
//!
//! ```json
//! POST /api/v1/tabs/{id}/screenshot
//! {"screenshot": {"markup": ["external_links"]}}
//! ```
//!
//! A markup renderer sees element boxes, not the page's URL, so the site's
//! own origin is taken to be the one most of the visible http(s) links point
//! to (ties go to the first such link); every other origin is external.

use wabp_plugin_sdk::{Color, Element, LabelShape, MarkupPlugin, PluginError, RectShape, Shape};

struct LinkOutline;

const TAG: &str = "external_links";
const STROKE: Color = Color::rgba(255, 140, 0, 255);
const WHITE: Color = Color::rgba(255, 255, 255, 255);
const LABEL_SIZE: f32 = 11.0;

impl MarkupPlugin for LinkOutline {
    fn tags() -> Vec<String> {
        vec![TAG.to_string()]
    }

    fn render(tags: &[String], viewport: (f64, f64), elements: &[Element]) -> Result<Vec<Shape>, PluginError> {
        if !tags.iter().any(|t| t == TAG) {
            return Ok(Vec::new());
        }
        let (width, height) = viewport;
        let links: Vec<(&Element, Origin)> = elements
            .iter()
            .filter(|e| e.rect.width > 0.0 && e.rect.height > 0.0 && e.rect.x < width && e.rect.y < height)
            .filter_map(|e| Some((e, origin(e.href.as_deref()?)?)))
            .collect();
        let Some(home) = most_common(links.iter().map(|(_, o)| o)) else {
            return Ok(Vec::new());
        };
        let mut shapes = Vec::new();
        let mut labels = Vec::new();
        for (e, origin) in links.iter().filter(|(_, o)| o != &home) {
            shapes.push(Shape::Rect(RectShape { rect: e.rect, stroke: Some(STROKE), stroke_width: 3.0, fill: Some(STROKE.with_alpha(30)), dash: Vec::new() }));
            let text = format!("ext {}", origin.host);
            let label_height = 1.4 * f64::from(LABEL_SIZE);
            // Above the link when there is room, else inside its top edge.
            let y = if e.rect.y - label_height >= 0.0 { e.rect.y - label_height } else { e.rect.y };
            labels.push(Shape::Label(LabelShape { x: e.rect.x.max(0.0), y, text, color: WHITE, background: Some(STROKE), size: LABEL_SIZE }));
        }
        shapes.extend(labels);
        Ok(shapes)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    /// Host and port, lower-case.
    host: String,
}

/// The origin of an absolute http(s) URL; `None` for mailto:, javascript:, ...
fn origin(href: &str) -> Option<Origin> {
    let (scheme, rest) = href.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h).to_ascii_lowercase();
    let host = match (scheme.as_str(), host.rsplit_once(':')) {
        ("http", Some((h, "80"))) | ("https", Some((h, "443"))) => h.to_string(),
        _ => host,
    };
    (!host.is_empty()).then_some(Origin { scheme, host })
}

/// The most frequent origin; ties go to the one seen first.
fn most_common<'a>(origins: impl Iterator<Item = &'a Origin>) -> Option<Origin> {
    let mut counts: Vec<(&Origin, usize)> = Vec::new();
    for o in origins {
        match counts.iter_mut().find(|(seen, _)| *seen == o) {
            Some((_, n)) => *n += 1,
            None => counts.push((o, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(o, _)| o.clone())
}

wabp_plugin_sdk::export_markup_plugin!(LinkOutline);

#[cfg(test)]
mod tests {
    use super::*;
    use wabp_plugin_sdk::{ElementFlags, Rect};

    fn link(index: u32, href: &str) -> Element {
        Element { index, rect: Rect { x: 10.0, y: 40.0 * f64::from(index), width: 100.0, height: 20.0 }, tag: "a".into(), role: "link".into(), name: String::new(), href: Some(href.into()), flags: ElementFlags::CLICKABLE }
    }

    #[test]
    fn origins() {
        assert_eq!(origin("https://Shop.Example:443/a?b").unwrap().host, "shop.example");
        assert_eq!(origin("http://127.0.0.1:8080/#x").unwrap().host, "127.0.0.1:8080");
        assert_eq!(origin("http://user@h.test/").unwrap().host, "h.test");
        assert!(origin("mailto:a@b.c").is_none());
        assert!(origin("javascript:void(0)").is_none());
    }

    #[test]
    fn outlines_only_links_to_other_origins() {
        let els = [link(1, "http://site.test/a"), link(2, "https://other.test/x"), link(3, "http://site.test/b"), link(4, "mailto:a@b.c")];
        let shapes = LinkOutline::render(&[TAG.to_string()], (800.0, 600.0), &els).unwrap();
        let rects: Vec<f64> = shapes.iter().filter_map(|s| if let Shape::Rect(r) = s { Some(r.rect.y) } else { None }).collect();
        assert_eq!(rects, vec![80.0]);
        assert!(shapes.iter().any(|s| matches!(s, Shape::Label(l) if l.text == "ext other.test")));
        assert!(LinkOutline::render(&["clickable".to_string()], (800.0, 600.0), &els).unwrap().is_empty());
    }
}
