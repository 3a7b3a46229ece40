//! Markup plugins: element boxes in, shapes out.

use async_trait::async_trait;
use wabp_model::ErrorCode;
use wabp_model::plugin::{Color, MarkupElement, MarkupRenderer, PluginFailure, Rect, Shape};

use super::{Exports, LoadedPlugin};
use crate::bindings::{self, types};

fn core_color(c: bindings::markup::exports::wabp::plugin::markup::Color) -> Color {
    Color {
        r: c.r,
        g: c.g,
        b: c.b,
        a: c.a,
    }
}

#[async_trait]
impl MarkupRenderer for LoadedPlugin {
    fn plugin_name(&self) -> &str {
        &self.name
    }

    async fn render(
        &self,
        tags: &[String],
        viewport: (f64, f64),
        elements: &[MarkupElement],
    ) -> std::result::Result<Vec<Shape>, PluginFailure> {
        use bindings::markup::exports::wabp::plugin::markup as m;
        let Exports::Markup { pool, .. } = &self.exports else {
            return Err(self.failure(ErrorCode::Internal, "not a markup plugin"));
        };
        let tags = tags.to_vec();
        let elements: Vec<m::Element> = elements
            .iter()
            .map(|e| {
                let mut flags = m::ElementFlags::empty();
                for (on, flag) in [
                    (e.clickable, m::ElementFlags::CLICKABLE),
                    (e.typeable, m::ElementFlags::TYPEABLE),
                    (e.scrollable, m::ElementFlags::SCROLLABLE),
                    (e.focused, m::ElementFlags::FOCUSED),
                ] {
                    if on {
                        flags |= flag;
                    }
                }
                m::Element {
                    index: e.index,
                    rect: types::Rect {
                        x: e.rect.x,
                        y: e.rect.y,
                        width: e.rect.width,
                        height: e.rect.height,
                    },
                    tag: e.tag.clone(),
                    role: e.role.clone(),
                    name: e.name.clone(),
                    href: e.href.clone(),
                    flags,
                }
            })
            .collect();
        let outcome = self
            .call(pool, None, |instance, store| {
                Box::pin(async move {
                    instance
                        .wabp_plugin_markup()
                        .call_render(store, &tags, viewport.0, viewport.1, &elements)
                        .await
                })
            })
            .await?;
        let shapes = outcome.map_err(|e| self.plugin_error(e))?;
        Ok(shapes
            .into_iter()
            .map(|s| match s {
                m::Shape::Rect(r) => Shape::Rect {
                    rect: Rect {
                        x: r.rect.x,
                        y: r.rect.y,
                        width: r.rect.width,
                        height: r.rect.height,
                    },
                    stroke: r.stroke.map(core_color),
                    stroke_width: r.stroke_width,
                    fill: r.fill.map(core_color),
                    dash: r.dash,
                },
                m::Shape::Label(l) => Shape::Label {
                    x: l.x,
                    y: l.y,
                    text: l.text,
                    color: core_color(l.color),
                    background: l.background.map(core_color),
                    size: l.size,
                },
                m::Shape::Line(l) => Shape::Line {
                    x1: l.x1,
                    y1: l.y1,
                    x2: l.x2,
                    y2: l.y2,
                    color: core_color(l.color),
                    width: l.width,
                },
            })
            .collect())
    }
}
