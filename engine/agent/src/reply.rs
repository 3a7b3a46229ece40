//! Reading the model's answer: one JSON action object, as plain JSON, in a
//! fenced block, or inside prose.

use serde_json::{Map, Value};

/// The action the model chose: `type` and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenAction {
    pub kind: String,
    pub params: Map<String, Value>,
}

impl ChosenAction {
    /// The action as the model would write it, for history and prompts.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("type".into(), Value::String(self.kind.clone()));
        map.extend(self.params.clone());
        Value::Object(map)
    }
}

/// The one action in `text`, or why there is none ("Failed to parse LLM
/// response: <reason>" is made of it).
pub fn parse_action(text: &str) -> Result<ChosenAction, String> {
    let object = find_object(text).ok_or_else(|| {
        let start: String = text.trim().chars().take(120).collect();
        format!("no JSON object in the answer ({start:?})")
    })?;
    normalize(object)
}

fn find_object(text: &str) -> Option<Map<String, Value>> {
    let trimmed = text.trim();
    if let Ok(Value::Object(map)) = serde_json::from_str(trimmed) {
        return Some(map);
    }
    // A fenced block: ```json ... ``` or ``` ... ```.
    let mut rest = trimmed;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        if let Ok(Value::Object(map)) = serde_json::from_str(body[..end].trim()) {
            return Some(map);
        }
        rest = &body[end + 3..];
    }
    // The first balanced object in prose.
    for (start, _) in trimmed.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&trimmed[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(map))) = stream.next() {
            return Some(map);
        }
    }
    None
}

/// `{"type": "click", ...}`; also `{"action": "click", ...}` and
/// `{"click": {...}}`, which models write too.
fn normalize(mut object: Map<String, Value>) -> Result<ChosenAction, String> {
    for key in ["type", "action", "name"] {
        if let Some(Value::String(kind)) = object.get(key).cloned() {
            object.remove(key);
            // {"action": "click", "params": {...}} / "parameters" / "args".
            for nested in ["params", "parameters", "args", "arguments"] {
                if let Some(Value::Object(inner)) = object.get(nested).cloned() {
                    object.remove(nested);
                    object.extend(inner);
                }
            }
            return Ok(ChosenAction {
                kind: kind.trim().to_string(),
                params: object,
            });
        }
    }
    if object.len() == 1 {
        let (kind, params) = object.into_iter().next().expect("one entry");
        if let Value::Object(params) = params {
            return Ok(ChosenAction { kind, params });
        }
        return Err(format!("the object has no \"type\" (found only {kind:?})"));
    }
    Err("the object has no \"type\" naming the action".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_fenced_and_prose() {
        let want = ChosenAction {
            kind: "click".into(),
            params: json!({"index": 3}).as_object().unwrap().clone(),
        };
        assert_eq!(
            parse_action(r#"{"type": "click", "index": 3}"#).unwrap(),
            want
        );
        assert_eq!(
            parse_action("I will click.\n```json\n{\"type\": \"click\", \"index\": 3}\n```\n")
                .unwrap(),
            want
        );
        assert_eq!(
            parse_action("Next: {\"type\": \"click\", \"index\": 3} then done").unwrap(),
            want
        );
        assert_eq!(parse_action(r#"{"click": {"index": 3}}"#).unwrap(), want);
        assert_eq!(
            parse_action(r#"{"action": "click", "params": {"index": 3}}"#).unwrap(),
            want
        );
    }

    #[test]
    fn no_action() {
        assert!(
            parse_action("I think I should click the button")
                .unwrap_err()
                .contains("no JSON object")
        );
        assert!(
            parse_action(r#"{"index": 3, "text": "x"}"#)
                .unwrap_err()
                .contains("type")
        );
        assert!(parse_action("[1, 2]").is_err());
    }
}
