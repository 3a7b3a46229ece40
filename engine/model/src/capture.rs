//! Screenshots: capture a frame, collect the page's element boxes, let markup
//! renderers turn them into shapes, draw those on the bitmap (never in the
//! page) and encode WebP: lossless for flat pages, quality 80 for photos.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;
use tiny_skia::{FillRule, Paint, PathBuilder, Pixmap, Stroke, StrokeDash, Transform};

use crate::clock::page_clock;
use crate::error::{Error, Result};
use crate::plugin::{Color, MarkupElement, PluginRegistry, Rect, Shape, ViewportInfo};
use crate::viewport::parse_viewport;

/// The five ABP overlays, all on by default.
pub const DEFAULT_MARKUP: &[&str] = &["clickable", "typeable", "scrollable", "grid", "selected"];

/// A finished screenshot as the envelope carries it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Screenshot {
    /// The image, base64.
    #[serde(serialize_with = "as_base64")]
    #[schemars(with = "String")]
    pub data: Arc<Vec<u8>>,
    pub width: u32,
    pub height: u32,
    pub virtual_time_ms: f64,
    pub format: &'static str,
}

fn as_base64<S: serde::Serializer>(
    data: &Arc<Vec<u8>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data.as_slice()))
}

/// What the last action saw after it froze the page (its `screenshot_after`,
/// its scroll state), reused as the next action's "before" while the page
/// stayed frozen.
#[derive(Debug, Clone)]
pub struct CachedFrame {
    /// `None` when that action took no screenshot.
    pub image: Option<Screenshot>,
    /// Scroll state when it was taken.
    pub viewport: ViewportInfo,
    /// The page's clock then.
    pub virtual_time_ms: f64,
    pub frozen_since: bool,
}

/// Where the time of one capture went, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CaptureTiming {
    pub capture_ms: f64,
    pub markup_ms: f64,
    pub encode_ms: f64,
}

#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Markup tags to draw.
    pub markup: Vec<String>,
    /// Draw the virtual cursor at this point.
    pub cursor: Option<(f64, f64)>,
    /// Keep only this box of the viewport (`area: "region"`).
    pub clip: Option<Clip>,
}

/// A box in CSS pixels of the viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clip {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// WebP's largest side, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 16383;

/// `pixmap` cut to `clip` (CSS pixels, `scale` device pixels each); an
/// error naming the viewport when the box reaches outside it.
pub fn crop(pixmap: &Pixmap, clip: &Clip, viewport: &ViewportInfo, scale: f32) -> Result<Pixmap> {
    if clip.x + clip.width > viewport.width + 0.5 || clip.y + clip.height > viewport.height + 0.5 {
        return Err(Error::invalid(format!(
            "screenshot.region ({}, {}, {}x{}) reaches outside the {}x{} viewport: scroll it into view first, or take area \"full_page\"",
            clip.x, clip.y, clip.width, clip.height, viewport.width, viewport.height
        )));
    }
    let scale = f64::from(scale);
    let x = (clip.x * scale).round() as u32;
    let y = (clip.y * scale).round() as u32;
    let width =
        ((clip.width * scale).round() as u32).clamp(1, pixmap.width().saturating_sub(x).max(1));
    let height =
        ((clip.height * scale).round() as u32).clamp(1, pixmap.height().saturating_sub(y).max(1));
    let rect = tiny_skia::IntRect::from_xywh(x as i32, y as i32, width, height)
        .ok_or_else(|| Error::invalid("screenshot.region is empty"))?;
    pixmap
        .clone_rect(rect)
        .ok_or_else(|| Error::invalid("screenshot.region lies outside the captured frame"))
}

/// What the page looks like right now: elements and scroll state, read in one
/// evaluation.
pub struct PageLayout {
    pub viewport: ViewportInfo,
    pub elements: Vec<MarkupElement>,
    /// The page's `Date.now()`: the virtual clock while execution control is on.
    pub virtual_time_ms: f64,
}

impl PageLayout {
    /// Reads what the layout script answered: `{viewport, elements}`.
    pub fn from_value(value: &Value) -> PageLayout {
        let viewport_value = value.get("viewport").unwrap_or(&Value::Null);
        PageLayout {
            viewport: parse_viewport(viewport_value),
            virtual_time_ms: page_clock(viewport_value),
            elements: value
                .get("elements")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(parse_element).collect::<Vec<_>>())
                .unwrap_or_default(),
        }
    }
}

fn parse_element(v: &Value) -> Option<MarkupElement> {
    let rect = v.get("rect")?;
    let num = |o: &Value, k: &str| o.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Some(MarkupElement {
        index: v.get("index")?.as_u64()? as u32,
        rect: Rect {
            x: num(rect, "x"),
            y: num(rect, "y"),
            width: num(rect, "width"),
            height: num(rect, "height"),
        },
        tag: text("tag"),
        role: text("role"),
        name: text("name"),
        href: v.get("href").and_then(Value::as_str).map(str::to_string),
        clickable: flag("clickable"),
        typeable: flag("typeable"),
        scrollable: flag("scrollable"),
        focused: flag("focused"),
    })
}

/// Asks the renderers for shapes, one call per renderer for all its tags.
pub async fn render_markup(
    registry: &dyn PluginRegistry,
    tags: &[String],
    layout: &PageLayout,
) -> Result<Vec<Shape>> {
    let mut by_renderer: Vec<(Arc<dyn crate::plugin::MarkupRenderer>, Vec<String>)> = Vec::new();
    for tag in tags {
        let Some(renderer) = registry.markup(tag) else {
            continue;
        };
        match by_renderer
            .iter_mut()
            .find(|(r, _)| Arc::ptr_eq(r, &renderer))
        {
            Some((_, group)) => group.push(tag.clone()),
            None => by_renderer.push((renderer, vec![tag.clone()])),
        }
    }
    let mut shapes = Vec::new();
    let viewport = (layout.viewport.width, layout.viewport.height);
    for (renderer, group) in by_renderer {
        shapes.extend(renderer.render(&group, viewport, &layout.elements).await?);
    }
    Ok(shapes)
}

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    FONT.get_or_init(|| {
        FontRef::try_from_slice(include_bytes!("../assets/DejaVuSansMono-Bold.ttf"))
            .expect("bundled font parses")
    })
}

fn paint(color: Color) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color_rgba8(color.r, color.g, color.b, color.a);
    paint.anti_alias = true;
    paint
}

/// Draws shapes onto the frame, scaled from CSS pixels to image pixels.
/// Boxes, solid outlines and straight lines are drawn on whole pixels
/// ([`blend_box`]): crisp edges, and several times faster than a path
/// rasterizer (markup for 120 controls: 2.0 against 7.1 ms). Dashed
/// outlines and slanted lines go through tiny-skia.
pub fn draw_shapes(pixmap: &mut Pixmap, shapes: &[Shape], scale: f32) {
    let transform = Transform::from_scale(scale, scale);
    let scale = f64::from(scale);
    for shape in shapes {
        match shape {
            Shape::Rect {
                rect,
                stroke,
                stroke_width,
                fill,
                dash,
            } => {
                let (x0, y0) = (rect.x * scale, rect.y * scale);
                let (x1, y1) = (
                    (rect.x + rect.width.max(1.0)) * scale,
                    (rect.y + rect.height.max(1.0)) * scale,
                );
                if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite()) {
                    continue;
                }
                if let Some(fill) = fill {
                    blend_box(pixmap, PixelBox::round(x0, y0, x1, y1), *fill);
                }
                let Some(color) = stroke else { continue };
                let dashed = dash.len() >= 2 && dash.len() % 2 == 0;
                if !dashed {
                    // The outline is centred on the box's edge, as a stroke is.
                    let half = f64::from(stroke_width.max(0.5)) * scale / 2.0;
                    let outer = PixelBox::round(x0 - half, y0 - half, x1 + half, y1 + half);
                    let inner = PixelBox::round(x0 + half, y0 + half, x1 - half, y1 - half);
                    for band in outer.minus(inner) {
                        blend_box(pixmap, band, *color);
                    }
                    continue;
                }
                let Some(r) = tiny_skia::Rect::from_xywh(
                    rect.x as f32,
                    rect.y as f32,
                    rect.width.max(1.0) as f32,
                    rect.height.max(1.0) as f32,
                ) else {
                    continue;
                };
                let path = PathBuilder::from_rect(r);
                let stroke = Stroke {
                    width: stroke_width.max(0.5),
                    dash: StrokeDash::new(dash.clone(), 0.0),
                    ..Stroke::default()
                };
                pixmap.stroke_path(&path, &paint(*color), &stroke, transform, None);
            }
            Shape::Line {
                x1,
                y1,
                x2,
                y2,
                color,
                width,
            } => {
                let half = f64::from(width.max(0.5)) * scale / 2.0;
                let (ax, ay, bx, by) = (x1 * scale, y1 * scale, x2 * scale, y2 * scale);
                if x1 == x2 || y1 == y2 {
                    // A straight line is a box as wide as the line (butt ends).
                    let band = if x1 == x2 {
                        PixelBox::round(ax - half, ay.min(by), ax + half, ay.max(by))
                    } else {
                        PixelBox::round(ax.min(bx), ay - half, ax.max(bx), ay + half)
                    };
                    blend_box(pixmap, band, *color);
                    continue;
                }
                let mut pb = PathBuilder::new();
                pb.move_to(*x1 as f32, *y1 as f32);
                pb.line_to(*x2 as f32, *y2 as f32);
                if let Some(path) = pb.finish() {
                    let stroke = Stroke {
                        width: width.max(0.5),
                        ..Stroke::default()
                    };
                    pixmap.stroke_path(&path, &paint(*color), &stroke, transform, None);
                }
            }
            Shape::Label {
                x,
                y,
                text,
                color,
                background,
                size,
            } => {
                draw_label(
                    pixmap,
                    (*x * scale) as f32,
                    (*y * scale) as f32,
                    text,
                    *color,
                    *background,
                    size.clamp(6.0, 48.0) * scale as f32,
                );
            }
        }
    }
}

/// A box of whole pixels: columns `x0..x1`, rows `y0..y1` (empty when
/// `x0 >= x1` or `y0 >= y1`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PixelBox {
    x0: i64,
    y0: i64,
    x1: i64,
    y1: i64,
}

impl PixelBox {
    /// Each edge to its nearest pixel boundary.
    fn round(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        // Far past any image (16,383 px a side), and safe to add to.
        let edge = |v: f64| v.round().clamp(-1e9, 1e9) as i64;
        PixelBox {
            x0: edge(x0),
            y0: edge(y0),
            x1: edge(x1),
            y1: edge(y1),
        }
    }

    fn is_empty(self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// `self` without `hole`, as up to four boxes that don't overlap: the
    /// rows above and below the hole, then the columns left and right of it.
    fn minus(self, hole: PixelBox) -> Vec<PixelBox> {
        if hole.is_empty() {
            return vec![self];
        }
        let (top, bottom) = (hole.y0.max(self.y0), hole.y1.min(self.y1));
        [
            PixelBox { y1: top, ..self },
            PixelBox { y0: bottom, ..self },
            PixelBox {
                y0: top,
                y1: bottom,
                x1: hole.x0.min(self.x1),
                ..self
            },
            PixelBox {
                y0: top,
                y1: bottom,
                x0: hole.x1.max(self.x0),
                ..self
            },
        ]
        .into_iter()
        .filter(|b| !b.is_empty())
        .collect()
    }
}

/// `color` over the pixels of `area` (cut to the image), source-over on
/// premultiplied pixels.
fn blend_box(pixmap: &mut Pixmap, area: PixelBox, color: Color) {
    let (width, height) = (i64::from(pixmap.width()), i64::from(pixmap.height()));
    let (x0, x1) = (area.x0.clamp(0, width), area.x1.clamp(0, width));
    let (y0, y1) = (area.y0.clamp(0, height), area.y1.clamp(0, height));
    if x0 >= x1 || y0 >= y1 || color.a == 0 {
        return;
    }
    let alpha = u16::from(color.a);
    let premultiplied = |c: u8| ((u16::from(c) * alpha + 127) / 255) as u8;
    let source = [
        premultiplied(color.r),
        premultiplied(color.g),
        premultiplied(color.b),
        color.a,
    ];
    let keep = 255 - alpha;
    let row_bytes = width as usize * 4;
    let data = pixmap.data_mut();
    for y in y0..y1 {
        let start = y as usize * row_bytes;
        let row = &mut data[start + x0 as usize * 4..start + x1 as usize * 4];
        if keep == 0 {
            for pixel in row.chunks_exact_mut(4) {
                pixel.copy_from_slice(&source);
            }
            continue;
        }
        for pixel in row.chunks_exact_mut(4) {
            for (dst, src) in pixel.iter_mut().zip(source) {
                *dst = src.saturating_add(((u16::from(*dst) * keep + 127) / 255) as u8);
            }
        }
    }
}

fn draw_label(
    pixmap: &mut Pixmap,
    x: f32,
    y: f32,
    text: &str,
    color: Color,
    background: Option<Color>,
    size: f32,
) {
    let font = font().as_scaled(PxScale::from(size));
    let text: String = text.chars().take(64).collect();
    let width: f32 = text.chars().map(|c| font.h_advance(font.glyph_id(c))).sum();
    let pad = (size * 0.2).max(1.0);
    let height = font.ascent() - font.descent();
    if let Some(bg) = background {
        let (x, y) = (f64::from(x), f64::from(y));
        let (w, h) = (f64::from(width + 2.0 * pad), f64::from(height + pad));
        blend_box(pixmap, PixelBox::round(x, y, x + w, y + h), bg);
    }
    let (pw, ph) = (pixmap.width() as i32, pixmap.height() as i32);
    let data = pixmap.data_mut();
    let mut caret = x + pad;
    for c in text.chars() {
        let id = font.glyph_id(c);
        let glyph = id.with_scale_and_position(
            PxScale::from(size),
            ab_glyph::point(caret, y + pad * 0.5 + font.ascent()),
        );
        caret += font.h_advance(id);
        let Some(outlined) = font.font().outline_glyph(glyph) else {
            continue;
        };
        let bounds = outlined.px_bounds();
        outlined.draw(|gx, gy, coverage| {
            let px = bounds.min.x as i32 + gx as i32;
            let py = bounds.min.y as i32 + gy as i32;
            if px < 0 || py < 0 || px >= pw || py >= ph {
                return;
            }
            let alpha = coverage * color.a as f32 / 255.0;
            let i = ((py * pw + px) * 4) as usize;
            // Source-over, premultiplied: the same on an opaque frame and on
            // a transparent markup layer.
            for (channel, value) in [color.r, color.g, color.b, 255].into_iter().enumerate() {
                let old = data[i + channel] as f32;
                data[i + channel] = (value as f32 * alpha + old * (1.0 - alpha)).round() as u8;
            }
        });
    }
}

/// A small arrow pointer with its tip at (x, y).
pub fn draw_cursor(pixmap: &mut Pixmap, x: f64, y: f64, scale: f32) {
    let (x, y) = (x as f32, y as f32);
    let points = [
        (0.0, 0.0),
        (0.0, 17.0),
        (4.5, 13.0),
        (7.5, 19.5),
        (10.0, 18.5),
        (7.0, 12.0),
        (12.5, 12.0),
    ];
    let mut pb = PathBuilder::new();
    for (i, (dx, dy)) in points.iter().enumerate() {
        if i == 0 {
            pb.move_to(x + dx, y + dy);
        } else {
            pb.line_to(x + dx, y + dy);
        }
    }
    pb.close();
    if let Some(path) = pb.finish() {
        let transform = Transform::from_scale(scale, scale);
        pixmap.fill_path(
            &path,
            &paint(Color {
                r: 255,
                g: 255,
                b: 255,
                a: 255,
            }),
            FillRule::Winding,
            transform,
            None,
        );
        let stroke = Stroke {
            width: 1.2,
            ..Stroke::default()
        };
        pixmap.stroke_path(
            &path,
            &paint(Color {
                r: 0,
                g: 0,
                b: 0,
                a: 255,
            }),
            &stroke,
            transform,
            None,
        );
    }
}

/// A screenshot as WebP. Pages that are mostly flat colour (text, controls,
/// the markup) encode lossless: exact pixels, in `wabp-bench` smaller than
/// lossy quality 80 on a page of controls (48 against 70 KB) and five to
/// six times faster (2.4 against 15 ms at 1280x720). Photos and gradients
/// would be many times larger lossless: they, and any lossless result past
/// [`LOSSLESS_MAX_BYTES_PER_PIXEL`], are encoded lossy at quality 80.
pub fn encode_webp(pixmap: &Pixmap) -> Result<Vec<u8>> {
    if flat_share(pixmap) >= LOSSLESS_MIN_FLAT_SHARE {
        let pixels = f64::from(pixmap.width()) * f64::from(pixmap.height());
        // A lossless encoder that refuses the image leaves it to the lossy one.
        match encode_webp_lossless(pixmap) {
            Ok(lossless) if lossless.len() as f64 <= LOSSLESS_MAX_BYTES_PER_PIXEL * pixels => {
                return Ok(lossless);
            }
            Ok(_) => {}
            Err(err) => tracing::debug!("lossless WebP: {}", err.message),
        }
    }
    encode_webp_lossy(pixmap)
}

/// The share of sampled pixels equal to their left neighbour from which a
/// screenshot is tried lossless. Measured at 1280x720: a page of controls
/// 0.93, a book chapter 0.89, a news page with two photos 0.67 (lossless
/// 7x the lossy size), a full-screen photo 0.17.
pub const LOSSLESS_MIN_FLAT_SHARE: f64 = 0.8;

/// A lossless screenshot larger than this (about three times a typical
/// lossy one) is encoded lossy instead.
pub const LOSSLESS_MAX_BYTES_PER_PIXEL: f64 = 0.25;

/// The share of pixels equal to their left neighbour, on every eighth row
/// (a tenth of a millisecond at 1280x720).
pub fn flat_share(pixmap: &Pixmap) -> f64 {
    let row_bytes = pixmap.width() as usize * 4;
    let (mut same, mut pairs) = (0usize, 0usize);
    for row in pixmap.data().chunks_exact(row_bytes).step_by(8) {
        for pair in row.windows(8).step_by(4) {
            pairs += 1;
            same += usize::from(pair[..4] == pair[4..]);
        }
    }
    if pairs == 0 {
        return 1.0;
    }
    same as f64 / pairs as f64
}

/// Lossless WebP. Screenshots are opaque, so premultiplied RGBA is the
/// image as is, and the header's "alpha is used" hint is cleared (decoders
/// then report an opaque image, as for the lossy encoding).
pub fn encode_webp_lossless(pixmap: &Pixmap) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    image_webp::WebPEncoder::new(&mut data)
        .encode(
            pixmap.data(),
            pixmap.width(),
            pixmap.height(),
            image_webp::ColorType::Rgba8,
        )
        .map_err(|e| Error::internal(format!("webp encode: {e}")))?;
    // RIFF header (12 bytes), "VP8L" chunk header (8), signature 0x2f, then
    // 14 bits width, 14 bits height, the alpha hint: bit 4 of byte 24.
    if data.len() > 25 && &data[12..16] == b"VP8L" && data[20] == 0x2f {
        data[24] &= !0x10;
    }
    Ok(data)
}

/// Lossy WebP at quality 80; method 0 is ~5x faster than the default for ~3%
/// more bytes.
pub fn encode_webp_lossy(pixmap: &Pixmap) -> Result<Vec<u8>> {
    let encoder = webp::Encoder::from_rgba(pixmap.data(), pixmap.width(), pixmap.height());
    let mut config = webp::WebPConfig::new().map_err(|_| Error::internal("webp config"))?;
    config.quality = 80.0;
    config.method = 0;
    let memory = encoder
        .encode_advanced(&config)
        .map_err(|e| Error::internal(format!("webp encode: {e:?}")))?;
    Ok(memory.to_vec())
}

/// A screenshot's markup: the renderers' shapes for a layout, rendered
/// while the frame is captured and drawn on it when it arrives. (A layer
/// drawn ahead and composited cost more CPU than drawing on the frame, and
/// held a viewport of pixels per capture in flight: at 50 tabs, most of the
/// engine's memory.)
pub struct Markup {
    shapes: Vec<Shape>,
}

impl Markup {
    /// Asks the markup renderers for `layout`'s shapes.
    pub async fn prepare(
        registry: &dyn PluginRegistry,
        tags: &[String],
        layout: &PageLayout,
    ) -> Result<Markup> {
        let shapes = if tags.is_empty() {
            Vec::new()
        } else {
            render_markup(registry, tags, layout).await?
        };
        Ok(Markup { shapes })
    }
}

/// Finishes a screenshot from a captured frame, the layout read with it and
/// its markup: markup, cursor, crop, WebP. `capture_ms` is what the frame,
/// the layout and the markup's shapes took (concurrently).
pub async fn compose(
    pixmap: Pixmap,
    layout: &PageLayout,
    markup: Markup,
    options: &CaptureOptions,
    capture_ms: f64,
) -> Result<(Screenshot, CaptureTiming)> {
    let viewport = layout.viewport.clone();
    let (cursor, clip) = (options.cursor, options.clip);
    // Drawing and encoding are CPU work: off the runtime's workers, which
    // also run the tabs' event pumps.
    let (data, width, height, markup_ms, encode_ms) =
        tokio::task::spawn_blocking(move || -> Result<_> {
            let mut pixmap = pixmap;
            let markup_started = Instant::now();
            let scale = if viewport.width > 0.0 {
                pixmap.width() as f32 / viewport.width as f32
            } else {
                1.0
            };
            draw_shapes(&mut pixmap, &markup.shapes, scale);
            if let Some((x, y)) = cursor {
                draw_cursor(&mut pixmap, x, y, scale);
            }
            if let Some(clip) = &clip {
                pixmap = crop(&pixmap, clip, &viewport, scale)?;
            }
            let markup_ms = markup_started.elapsed().as_secs_f64() * 1000.0;
            let encode_started = Instant::now();
            let data = encode_webp(&pixmap)?;
            let encode_ms = encode_started.elapsed().as_secs_f64() * 1000.0;
            Ok((data, pixmap.width(), pixmap.height(), markup_ms, encode_ms))
        })
        .await
        .map_err(|e| Error::internal(format!("image task: {e}")))??;
    Ok((
        Screenshot {
            data: Arc::new(data),
            width,
            height,
            virtual_time_ms: layout.virtual_time_ms,
            format: "webp",
        },
        CaptureTiming {
            capture_ms,
            markup_ms,
            encode_ms,
        },
    ))
}

#[cfg(test)]
mod tests;
