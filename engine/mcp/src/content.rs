//! Operation outputs as MCP content: screenshots become image blocks
//! (before first), text answers plain text, the rest pretty JSON.

use base64::Engine as _;
use rmcp::model::ContentBlock;
use serde_json::Value;
use wabp_api::{Output, Presentation};
use wabp_core::{Error, Result};

fn text_json(value: &Value) -> ContentBlock {
    ContentBlock::text(serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()))
}

/// Moves `value[key].data` (a base64 WebP) into an image block.
fn take_image(value: &mut Value, key: &str, content: &mut Vec<ContentBlock>) {
    if let Some(Value::Object(shot)) = value.get_mut(key) {
        if let Some(Value::String(data)) = shot.remove("data") {
            content.push(ContentBlock::image(data, "image/webp"));
        }
    }
}

pub fn content(output: Output, presentation: Presentation) -> Result<Vec<ContentBlock>> {
    let mut content = Vec::with_capacity(3);
    match output {
        Output::Envelope(envelope) => {
            let mut value =
                serde_json::to_value(envelope).map_err(|e| Error::internal(e.to_string()))?;
            take_image(&mut value, "screenshot_before", &mut content);
            take_image(&mut value, "screenshot_after", &mut content);
            content.push(text_json(&value));
        }
        Output::Json(value) => match presentation {
            Presentation::TextField(field) => content.push(ContentBlock::text(
                value.get(field).and_then(Value::as_str).unwrap_or_default(),
            )),
            Presentation::Json => {
                let mut value = value;
                take_image(&mut value, "screenshot", &mut content);
                // A snapshot's tree reads best as plain text; the rest
                // (url, refs, paging) as JSON.
                if let Some(Value::String(text)) =
                    value.as_object_mut().and_then(|o| o.remove("snapshot"))
                {
                    content.push(ContentBlock::text(text));
                }
                content.push(text_json(&value));
            }
        },
        Output::Bytes { mime, bytes } => content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime,
        )),
    }
    Ok(content)
}
