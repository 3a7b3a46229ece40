//! Tag `test-box`: one red filled square at (10, 10), 20x20, whatever the page.

use wabp_plugin_sdk::{Color, Element, MarkupPlugin, PluginError, Rect, RectShape, Shape};

struct TestMarkup;

impl MarkupPlugin for TestMarkup {
    fn tags() -> Vec<String> {
        vec!["test-box".to_string()]
    }

    fn render(_tags: &[String], _viewport: (f64, f64), _elements: &[Element]) -> Result<Vec<Shape>, PluginError> {
        Ok(vec![Shape::Rect(RectShape {
            rect: Rect { x: 10.0, y: 10.0, width: 20.0, height: 20.0 },
            stroke: None,
            stroke_width: 0.0,
            fill: Some(Color::rgba(255, 0, 0, 255)),
            dash: Vec::new(),
        })])
    }
}

wabp_plugin_sdk::export_markup_plugin!(TestMarkup);
