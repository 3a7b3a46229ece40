//! Image decoding shared by the frame drivers (screenshots arrive as PNG),
//! and WebP back to pixels (`wabp-bench encode`).

use tiny_skia::Pixmap;

use crate::error::{Error, Result};

/// A PNG (a screenshot, in practice 8-bit RGB) as opaque RGBA pixels.
/// zune-png decodes Chromium's 1280x720 frames about three times faster
/// than the `png` crate (1.1 against 3.7 ms, BENCHMARKS.md), and every
/// screenshot pays it once.
pub fn decode_png(png: &[u8]) -> Result<Pixmap> {
    use zune_core::colorspace::ColorSpace;
    let options = zune_core::options::DecoderOptions::default()
        .png_set_add_alpha_channel(true)
        .png_set_strip_to_8bit(true);
    let mut decoder =
        zune_png::PngDecoder::new_with_options(zune_core::bytestream::ZCursor::new(png), options);
    let pixels = decoder
        .decode_raw()
        .map_err(|e| Error::internal(format!("png: {e:?}")))?;
    let (width, height) = decoder
        .dimensions()
        .ok_or_else(|| Error::internal("png: no size"))?;
    let rgba = match decoder.colorspace() {
        Some(ColorSpace::RGBA) => pixels,
        Some(ColorSpace::LumaA) => pixels
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        other => {
            return Err(Error::internal(format!(
                "unexpected screenshot colour space {other:?}"
            )));
        }
    };
    let size = u32::try_from(width)
        .ok()
        .zip(u32::try_from(height).ok())
        .and_then(|(w, h)| tiny_skia::IntSize::from_wh(w, h))
        .ok_or_else(|| Error::internal("empty screenshot"))?;
    // Screenshots are opaque, so straight and premultiplied alpha agree.
    Pixmap::from_vec(rgba, size).ok_or_else(|| Error::internal("screenshot size mismatch"))
}

/// A WebP image (lossy or lossless) as opaque pixels.
pub fn decode_webp(data: &[u8]) -> Result<Pixmap> {
    let image = webp::Decoder::new(data)
        .decode()
        .ok_or_else(|| Error::invalid("not a WebP image"))?;
    let rgba = if image.is_alpha() {
        image.to_vec()
    } else {
        image
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect()
    };
    let size = tiny_skia::IntSize::from_wh(image.width(), image.height())
        .ok_or_else(|| Error::invalid("an empty WebP image"))?;
    Pixmap::from_vec(rgba, size).ok_or_else(|| Error::invalid("WebP size mismatch"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(color: png::ColorType, pixel: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, 2, 2);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&pixel.repeat(4)).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn rgb_and_rgba_screenshots_decode_to_the_same_pixels() {
        for png in [
            png_of(png::ColorType::Rgb, &[10, 20, 30]),
            png_of(png::ColorType::Rgba, &[10, 20, 30, 255]),
        ] {
            let pixmap = decode_png(&png).unwrap();
            assert_eq!((pixmap.width(), pixmap.height()), (2, 2));
            assert_eq!(pixmap.data(), [10, 20, 30, 255].repeat(4).as_slice());
        }
    }

    #[test]
    fn grey_pngs_decode_to_grey_pixels_and_garbage_is_an_error() {
        let pixmap = decode_png(&png_of(png::ColorType::Grayscale, &[77])).unwrap();
        assert_eq!(pixmap.data(), [77, 77, 77, 255].repeat(4).as_slice());
        assert!(decode_png(b"not a png").is_err());
        let mut cut = png_of(png::ColorType::Rgb, &[10, 20, 30]);
        cut.truncate(cut.len() / 2);
        assert!(decode_png(&cut).is_err());
    }
}
