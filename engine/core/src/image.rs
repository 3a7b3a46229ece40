//! Image decoding shared by the frame drivers (screenshots arrive as PNG).

use tiny_skia::Pixmap;

use crate::error::{Error, Result};

pub fn decode_png(png: &[u8]) -> Result<Pixmap> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
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
