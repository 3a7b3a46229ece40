//! Operation outputs as MCP content: the text first (plain text answers,
//! the rest pretty JSON), as ABP's clients read `content[0].text`; then the
//! screenshots as image blocks, before first.

use base64::Engine as _;
use rmcp::model::ContentBlock;
use serde_json::Value;
use wabp_api::{Output, Presentation};
use wabp_core::{Error, Result};

fn text_json(value: &Value) -> ContentBlock {
    ContentBlock::text(serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()))
}

/// Moves `value[key].data` (base64, WebP unless `value[key].mime` says
/// otherwise) into an image block.
fn take_image(value: &mut Value, key: &str, content: &mut Vec<ContentBlock>) {
    if let Some(Value::Object(shot)) = value.get_mut(key) {
        if let Some(Value::String(data)) = shot.remove("data") {
            let mime = match shot.remove("mime") {
                Some(Value::String(mime)) => mime,
                _ => "image/webp".to_string(),
            };
            content.push(ContentBlock::image(data, mime));
        }
    }
}

pub fn content(output: Output, presentation: Presentation) -> Result<Vec<ContentBlock>> {
    let mut content = Vec::with_capacity(3);
    let mut images = Vec::with_capacity(2);
    match output {
        Output::Envelope(envelope) => {
            let mut value =
                serde_json::to_value(envelope).map_err(|e| Error::internal(e.to_string()))?;
            // The after image again, for REST clients: once is enough here.
            if let Some(fields) = value.as_object_mut() {
                fields.remove("data");
            }
            take_image(&mut value, "screenshot_before", &mut images);
            take_image(&mut value, "screenshot_after", &mut images);
            content.push(text_json(&value));
        }
        Output::Json(value) => match presentation {
            Presentation::TextField(field) => content.push(ContentBlock::text(
                value.get(field).and_then(Value::as_str).unwrap_or_default(),
            )),
            Presentation::Json => {
                let mut value = value;
                take_image(&mut value, "screenshot", &mut images);
                // A snapshot's tree reads best as plain text; the rest
                // (url, refs, paging) as JSON.
                if let Some(Value::String(text)) =
                    value.as_object_mut().and_then(|o| o.remove("snapshot"))
                {
                    content.push(ContentBlock::text(text));
                }
                content.push(text_json(&value));
            }
            Presentation::ImageFirst => {
                let mut value = value;
                take_image(&mut value, "screenshot", &mut content);
                if let Some(fields) = value.as_object_mut() {
                    fields.remove("screenshot");
                }
                content.push(ContentBlock::text(value.to_string()));
            }
        },
        Output::Events(_) => {
            return Err(Error::invalid(
                "this operation streams server-sent events over REST only",
            ));
        }
        Output::Bytes { mime, bytes } => content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime,
        )),
    }
    content.extend(images);
    Ok(content)
}
