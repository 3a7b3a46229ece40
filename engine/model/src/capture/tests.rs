use super::*;

fn white(w: u32, h: u32) -> Pixmap {
    let mut p = Pixmap::new(w, h).unwrap();
    p.fill(tiny_skia::Color::WHITE);
    p
}

/// A solid box at (x, y), w by h, outlined 2 px wide when `stroke` is set.
fn boxed(x: f64, y: f64, w: f64, h: f64, stroke: Option<Color>, fill: Option<Color>) -> Shape {
    Shape::Rect {
        rect: Rect {
            x,
            y,
            width: w,
            height: h,
        },
        stroke,
        stroke_width: 2.0,
        fill,
        dash: vec![],
    }
}

#[test]
fn shapes_change_pixels_where_drawn_only() {
    let mut p = white(100, 100);
    let red = Color {
        r: 255,
        g: 0,
        b: 0,
        a: 255,
    };
    draw_shapes(
        &mut p,
        &[boxed(10.0, 10.0, 20.0, 20.0, None, Some(red))],
        1.0,
    );
    let px = |x: u32, y: u32| p.pixel(x, y).unwrap();
    assert_eq!((px(15, 15).red(), px(15, 15).green()), (255, 0));
    assert_eq!(px(50, 50).green(), 255);
}

#[test]
fn labels_draw_glyphs() {
    let mut p = white(60, 30);
    let black = Color {
        r: 0,
        g: 0,
        b: 0,
        a: 255,
    };
    draw_shapes(
        &mut p,
        &[Shape::Label {
            x: 2.0,
            y: 2.0,
            text: "42".into(),
            color: black,
            background: None,
            size: 16.0,
        }],
        1.0,
    );
    let dark = (0..60)
        .flat_map(|x| (0..30).map(move |y| (x, y)))
        .filter(|&(x, y)| p.pixel(x, y).unwrap().red() < 128)
        .count();
    assert!(dark > 10, "label glyphs should darken pixels, got {dark}");
}

#[test]
fn a_box_blends_as_tiny_skia_fills_the_same_pixels() {
    let translucent = Color {
        r: 22,
        g: 163,
        b: 74,
        a: 90,
    };
    let mut ours = Pixmap::new(40, 30).unwrap();
    ours.fill(tiny_skia::Color::from_rgba8(200, 120, 30, 255));
    let mut theirs = ours.clone();
    blend_box(
        &mut ours,
        PixelBox::round(5.0, 6.0, 25.0, 20.0),
        translucent,
    );
    theirs.fill_rect(
        tiny_skia::Rect::from_xywh(5.0, 6.0, 20.0, 14.0).unwrap(),
        &paint(translucent),
        Transform::identity(),
        None,
    );
    for (a, b) in ours.data().iter().zip(theirs.data()) {
        assert!(a.abs_diff(*b) <= 1, "{a} against {b}");
    }
    assert_ne!(
        ours.pixel(5, 6),
        ours.pixel(4, 6),
        "the box starts at its edge"
    );
    assert_eq!(ours.pixel(25, 10), ours.pixel(30, 10), "and ends before x1");
}

#[test]
fn an_outline_blends_each_pixel_of_its_ring_once() {
    let mut p = white(60, 60);
    let color = Color {
        r: 0,
        g: 0,
        b: 200,
        a: 128,
    };
    draw_shapes(
        &mut p,
        &[boxed(10.0, 10.0, 30.0, 20.0, Some(color), None)],
        1.0,
    );
    // Centred on the edge: rows and columns 9 and 10 (and 39, 40; 29, 30).
    let ring = p.pixel(9, 20).unwrap();
    assert_ne!(ring, p.pixel(8, 20).unwrap());
    for (x, y) in [
        (10, 20),
        (39, 20),
        (40, 20),
        (20, 9),
        (20, 30),
        (9, 9),
        (40, 30),
    ] {
        assert_eq!(
            p.pixel(x, y).unwrap(),
            ring,
            "({x}, {y}): corners blended once"
        );
    }
    let white_px = p.pixel(0, 0).unwrap();
    for (x, y) in [(11, 20), (38, 20), (41, 20), (20, 11), (20, 31), (25, 20)] {
        assert_eq!(
            p.pixel(x, y).unwrap(),
            white_px,
            "({x}, {y}) is off the ring"
        );
    }
}

#[test]
fn boxes_past_the_image_are_cut_to_it() {
    let mut p = white(20, 10);
    let red = Color {
        r: 255,
        g: 0,
        b: 0,
        a: 255,
    };
    blend_box(&mut p, PixelBox::round(-1e12, -5.0, 1e12, 3.0), red);
    assert_eq!(p.pixel(19, 2).unwrap().red(), 255);
    assert_eq!(p.pixel(0, 3).unwrap().green(), 255);
}

#[test]
fn webp_round_trip_keeps_size() {
    let p = white(64, 48);
    let data = encode_webp(&p).unwrap();
    assert_eq!(&data[0..4], b"RIFF");
    assert_eq!(&data[8..12], b"WEBP");
    let decoded = webp::Decoder::new(&data).decode().unwrap();
    assert_eq!((decoded.width(), decoded.height()), (64, 48));
}

/// A page-like frame: white, with boxes and a label drawn on it.
fn flat_page(w: u32, h: u32) -> Pixmap {
    let mut p = white(w, h);
    let color = |r, g, b, a| Color { r, g, b, a };
    let shapes: Vec<Shape> = (0..6)
        .map(|i| {
            let (stroke, fill) = (color(220, 0, 0, 255), color(0, 160, 0, 50));
            boxed(
                10.0 + 50.0 * f64::from(i),
                20.0,
                40.0,
                30.0,
                Some(stroke),
                Some(fill),
            )
        })
        .chain([Shape::Label {
            x: 12.0,
            y: 80.0,
            text: "Button 12".into(),
            color: color(255, 255, 255, 255),
            background: Some(color(30, 30, 30, 255)),
            size: 14.0,
        }])
        .collect();
    draw_shapes(&mut p, &shapes, 1.0);
    p
}

#[test]
fn a_flat_page_encodes_lossless_to_its_exact_pixels() {
    let p = flat_page(320, 120);
    let data = encode_webp(&p).unwrap();
    assert_eq!(&data[12..16], b"VP8L", "a flat page is lossless");
    let decoded = webp::Decoder::new(&data).decode().unwrap();
    assert!(!decoded.is_alpha(), "an opaque screenshot decodes opaque");
    let rgb: Vec<u8> = p
        .data()
        .chunks_exact(4)
        .flat_map(|px| [px[0], px[1], px[2]])
        .collect();
    assert_eq!(&*decoded, &rgb[..], "lossless keeps every pixel");
}

#[test]
fn a_photo_like_frame_encodes_lossy() {
    // Noise: no pixel equals its neighbour, as in a photo.
    let mut p = white(320, 120);
    let mut seed = 0x2545_f491_u32;
    for px in p.data_mut().chunks_exact_mut(4) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        px[..3].copy_from_slice(&seed.to_le_bytes()[..3]);
    }
    let data = encode_webp(&p).unwrap();
    assert_eq!(&data[12..16], b"VP8 ", "a photo is lossy");
    let decoded = webp::Decoder::new(&data).decode().unwrap();
    assert_eq!((decoded.width(), decoded.height()), (320, 120));
}

#[test]
fn a_flat_page_too_large_lossless_falls_back_to_lossy() {
    // Flat rows (every eighth row is sampled) between rows of noise:
    // flat enough to try, far past the size bound lossless.
    let mut p = white(320, 128);
    let mut seed = 0x9e37_79b9_u32;
    for (i, row) in p.data_mut().chunks_exact_mut(320 * 4).enumerate() {
        if i % 8 == 0 {
            continue;
        }
        for px in row.chunks_exact_mut(4) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            px[..3].copy_from_slice(&seed.to_le_bytes()[..3]);
        }
    }
    assert!(flat_share(&p) >= LOSSLESS_MIN_FLAT_SHARE);
    let data = encode_webp(&p).unwrap();
    assert_eq!(&data[12..16], b"VP8 ");
}
