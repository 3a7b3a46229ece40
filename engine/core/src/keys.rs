//! DOM key values to the fields CDP's `Input.dispatchKeyEvent` needs. Without
//! the right `code`/`keyCode`/`text`, pages see keys but forms don't react.

#[derive(Debug, Clone, PartialEq)]
pub struct KeyDefinition {
    pub key: String,
    pub code: String,
    pub key_code: i64,
    /// What the key types (None for control keys).
    pub text: Option<String>,
    /// 1 = left, 2 = right, for modifier keys.
    pub location: i64,
}

/// Named keys: (key, code, keyCode, text, location).
const NAMED: &[(&str, &str, i64, Option<&str>, i64)] = &[
    ("Enter", "Enter", 13, Some("\r"), 0),
    ("Tab", "Tab", 9, None, 0),
    ("Backspace", "Backspace", 8, None, 0),
    ("Delete", "Delete", 46, None, 0),
    ("Escape", "Escape", 27, None, 0),
    ("ArrowUp", "ArrowUp", 38, None, 0),
    ("ArrowDown", "ArrowDown", 40, None, 0),
    ("ArrowLeft", "ArrowLeft", 37, None, 0),
    ("ArrowRight", "ArrowRight", 39, None, 0),
    ("Home", "Home", 36, None, 0),
    ("End", "End", 35, None, 0),
    ("PageUp", "PageUp", 33, None, 0),
    ("PageDown", "PageDown", 34, None, 0),
    ("Insert", "Insert", 45, None, 0),
    ("Space", "Space", 32, Some(" "), 0),
    (" ", "Space", 32, Some(" "), 0),
    ("Shift", "ShiftLeft", 16, None, 1),
    ("ShiftLeft", "ShiftLeft", 16, None, 1),
    ("ShiftRight", "ShiftRight", 16, None, 2),
    ("Control", "ControlLeft", 17, None, 1),
    ("ControlLeft", "ControlLeft", 17, None, 1),
    ("ControlRight", "ControlRight", 17, None, 2),
    ("Alt", "AltLeft", 18, None, 1),
    ("AltLeft", "AltLeft", 18, None, 1),
    ("AltRight", "AltRight", 18, None, 2),
    ("Meta", "MetaLeft", 91, None, 1),
    ("MetaLeft", "MetaLeft", 91, None, 1),
    ("MetaRight", "MetaRight", 92, None, 2),
    ("CapsLock", "CapsLock", 20, None, 0),
    ("ContextMenu", "ContextMenu", 93, None, 0),
];

/// US-layout punctuation: (char, code, keyCode).
const PUNCTUATION: &[(char, &str, i64)] = &[
    ('-', "Minus", 189),
    ('=', "Equal", 187),
    ('[', "BracketLeft", 219),
    (']', "BracketRight", 221),
    ('\\', "Backslash", 220),
    (';', "Semicolon", 186),
    ('\'', "Quote", 222),
    (',', "Comma", 188),
    ('.', "Period", 190),
    ('/', "Slash", 191),
    ('`', "Backquote", 192),
];

/// Looks a key up; `None` means "not a key": type it with insertText.
pub fn key_definition(key: &str) -> Option<KeyDefinition> {
    // DOM key values are the names as given, with the one alias "Space".
    let key_value = if key == "Space" { " " } else { key };
    if let Some(&(_, code, key_code, text, location)) = NAMED.iter().find(|(name, ..)| *name == key)
    {
        let key_value = match key {
            "ShiftLeft" | "ShiftRight" => "Shift",
            "ControlLeft" | "ControlRight" => "Control",
            "AltLeft" | "AltRight" => "Alt",
            "MetaLeft" | "MetaRight" => "Meta",
            _ => key_value,
        };
        return Some(KeyDefinition {
            key: key_value.to_string(),
            code: code.to_string(),
            key_code,
            text: text.map(str::to_string),
            location,
        });
    }
    if let Some(n) = key.strip_prefix('F').and_then(|n| n.parse::<i64>().ok()) {
        if (1..=24).contains(&n) {
            return Some(KeyDefinition {
                key: key.to_string(),
                code: key.to_string(),
                key_code: 111 + n,
                text: None,
                location: 0,
            });
        }
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let text = Some(c.to_string());
    if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        return Some(KeyDefinition {
            key: c.to_string(),
            code: format!("Key{upper}"),
            key_code: upper as i64,
            text,
            location: 0,
        });
    }
    if c.is_ascii_digit() {
        return Some(KeyDefinition {
            key: c.to_string(),
            code: format!("Digit{c}"),
            key_code: c as i64,
            text,
            location: 0,
        });
    }
    if let Some(&(_, code, key_code)) = PUNCTUATION.iter().find(|(p, ..)| *p == c) {
        return Some(KeyDefinition {
            key: c.to_string(),
            code: code.to_string(),
            key_code,
            text,
            location: 0,
        });
    }
    // Any other single printable character: a key event with text, no code.
    if !c.is_control() {
        return Some(KeyDefinition {
            key: c.to_string(),
            code: String::new(),
            key_code: 0,
            text,
            location: 0,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_printable_keys_resolve() {
        let enter = key_definition("Enter").unwrap();
        assert_eq!((enter.key_code, enter.text.as_deref()), (13, Some("\r")));
        let a = key_definition("a").unwrap();
        assert_eq!((a.code.as_str(), a.key_code), ("KeyA", 65));
        let seven = key_definition("7").unwrap();
        assert_eq!(seven.code, "Digit7");
        assert_eq!(key_definition("F5").unwrap().key_code, 116);
        assert_eq!(key_definition("Space").unwrap().key, " ");
        assert_eq!(key_definition("ShiftRight").unwrap().key, "Shift");
        assert_eq!(key_definition("é").unwrap().text.as_deref(), Some("é"));
        assert!(key_definition("NotAKey").is_none());
    }
}
