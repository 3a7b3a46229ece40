//! Image decoding shared by the frame drivers (screenshots arrive as PNG),
//! and WebP back to pixels (`wabp-bench encode`).

use tiny_skia::Pixmap;

use crate::error::{Error, Result};

pub fn decode_png(png: &[u8]) -> Result<Pixmap> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    // Straight to RGBA: an opaque PNG (RGB) gets its alpha while it is
    // decoded, without a second buffer.
    decoder.set_transformations(
        png::Transformations::EXPAND | png::Transformations::STRIP_16 | png::Transformations::ALPHA,
    );
    let mut reader = decoder
        .read_info()
        .map_err(|e| Error::internal(format!("png: {e}")))?;
    let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| Error::internal(format!("png: {e}")))?;
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => {
            return Err(Error::internal(format!(
                "unexpected screenshot colour type {other:?}"
            )));
        }
    };
    let size = tiny_skia::IntSize::from_wh(info.width, info.height)
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
}
