use crate::PluginError;
use crate::bindings::markup::exports::wabp::plugin::markup as wit;

pub use wit::{Color, Element, ElementFlags, LabelShape, LineShape, Rect, RectShape, Shape};

impl Color {
    /// A colour from its channels; `a` is opacity (255 = opaque).
    pub const fn rgba(r: u8, g: u8, b: u8, a: u8) -> Self {
        Color { r, g, b, a }
    }

    /// The same colour with another opacity.
    pub const fn with_alpha(self, a: u8) -> Self {
        Color { a, ..self }
    }
}

/// A markup renderer: turns element boxes into shapes the host draws over
/// the screenshot. Implement it on a unit struct and export that with
/// [`export_markup_plugin!`](crate::export_markup_plugin).
pub trait MarkupPlugin {
    /// The markup tags this renderer draws (e.g. `"clickable"`, `"grid"`).
    fn tags() -> Vec<String>;

    /// Shapes for the requested `tags` (a subset of [`tags`](Self::tags)),
    /// in CSS pixels of a viewport of size `viewport` (width, height).
    fn render(tags: &[String], viewport: (f64, f64), elements: &[Element]) -> Result<Vec<Shape>, PluginError>;
}

#[doc(hidden)]
pub mod glue {
    use super::*;

    pub use crate::bindings::markup as bindings;
    pub use wit::Guest;
    pub type WitPluginError = wit::PluginError;

    pub fn describe<T: MarkupPlugin>() -> Vec<String> {
        T::tags()
    }

    pub fn render<T: MarkupPlugin>(tags: Vec<String>, width: f64, height: f64, elements: Vec<Element>) -> Result<Vec<Shape>, WitPluginError> {
        Ok(T::render(&tags, (width, height), &elements)?)
    }
}

/// Exports a type implementing [`MarkupPlugin`] as the component's
/// `wabp:plugin/markup` interface. Use once per plugin crate.
#[macro_export]
macro_rules! export_markup_plugin {
    ($plugin:ty) => {
        // Component exports only exist on wasm; elsewhere (host-side unit
        // tests) the plugin type is just checked.
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = <$plugin as $crate::MarkupPlugin>::render;
        };

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __WabpExport;

            impl $crate::__private::markup::Guest for __WabpExport {
                fn describe() -> ::std::vec::Vec<::std::string::String> {
                    $crate::__private::markup::describe::<$plugin>()
                }

                fn render(
                    tags: ::std::vec::Vec<::std::string::String>,
                    viewport_width: f64,
                    viewport_height: f64,
                    elements: ::std::vec::Vec<$crate::Element>,
                ) -> ::core::result::Result<::std::vec::Vec<$crate::Shape>, $crate::__private::markup::WitPluginError> {
                    $crate::__private::markup::render::<$plugin>(tags, viewport_width, viewport_height, elements)
                }
            }

    $crate::__private::markup::bindings::export!(__WabpExport with_types_in $crate::__private::markup::bindings);
        };
    };
}
