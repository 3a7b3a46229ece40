//! DOM key values to the fields CDP's `Input.dispatchKeyEvent` needs, for a
//! US keyboard, as a browser fills them: `key`, `code`, `keyCode`, `text`
//! and `location`. Without the right `code`/`keyCode`/`text`, pages see keys
//! but forms and shortcut handlers don't react (`!` is `Digit1` with Shift,
//! keyCode 49; `~` is `Backquote`).

#[derive(Debug, Clone, PartialEq)]
pub struct KeyDefinition {
    pub key: String,
    pub code: String,
    pub key_code: i64,
    /// What the key types (None for control keys).
    pub text: Option<String>,
    /// 0 standard, 1 left, 2 right, 3 numpad.
    pub location: i64,
}

impl KeyDefinition {
    /// The modifier this key is (`Shift`, `Control`, `Alt`, `Meta`), if any.
    pub fn modifier(&self) -> Option<&str> {
        matches!(self.key.as_str(), "Shift" | "Control" | "Alt" | "Meta").then_some(&self.key)
    }
}

/// Named keys: (name, key, code, keyCode, text, location). A name is the DOM
/// key value, or a `code` a client may use instead (`ShiftRight`, `Numpad5`).
const NAMED: &[(&str, &str, &str, i64, Option<&str>, i64)] = &[
    ("Enter", "Enter", "Enter", 13, Some("\r"), 0),
    ("Tab", "Tab", "Tab", 9, None, 0),
    ("Backspace", "Backspace", "Backspace", 8, None, 0),
    ("Delete", "Delete", "Delete", 46, None, 0),
    ("Escape", "Escape", "Escape", 27, None, 0),
    ("ArrowUp", "ArrowUp", "ArrowUp", 38, None, 0),
    ("ArrowDown", "ArrowDown", "ArrowDown", 40, None, 0),
    ("ArrowLeft", "ArrowLeft", "ArrowLeft", 37, None, 0),
    ("ArrowRight", "ArrowRight", "ArrowRight", 39, None, 0),
    ("Home", "Home", "Home", 36, None, 0),
    ("End", "End", "End", 35, None, 0),
    ("PageUp", "PageUp", "PageUp", 33, None, 0),
    ("PageDown", "PageDown", "PageDown", 34, None, 0),
    ("Insert", "Insert", "Insert", 45, None, 0),
    ("Space", " ", "Space", 32, Some(" "), 0),
    (" ", " ", "Space", 32, Some(" "), 0),
    ("Shift", "Shift", "ShiftLeft", 16, None, 1),
    ("ShiftLeft", "Shift", "ShiftLeft", 16, None, 1),
    ("ShiftRight", "Shift", "ShiftRight", 16, None, 2),
    ("Control", "Control", "ControlLeft", 17, None, 1),
    ("ControlLeft", "Control", "ControlLeft", 17, None, 1),
    ("ControlRight", "Control", "ControlRight", 17, None, 2),
    ("Alt", "Alt", "AltLeft", 18, None, 1),
    ("AltLeft", "Alt", "AltLeft", 18, None, 1),
    ("AltRight", "Alt", "AltRight", 18, None, 2),
    ("AltGraph", "AltGraph", "AltRight", 225, None, 2),
    ("Meta", "Meta", "MetaLeft", 91, None, 1),
    ("MetaLeft", "Meta", "MetaLeft", 91, None, 1),
    ("MetaRight", "Meta", "MetaRight", 92, None, 2),
    ("CapsLock", "CapsLock", "CapsLock", 20, None, 0),
    ("NumLock", "NumLock", "NumLock", 144, None, 0),
    ("ScrollLock", "ScrollLock", "ScrollLock", 145, None, 0),
    ("Pause", "Pause", "Pause", 19, None, 0),
    ("PrintScreen", "PrintScreen", "PrintScreen", 44, None, 0),
    ("ContextMenu", "ContextMenu", "ContextMenu", 93, None, 0),
    ("NumpadEnter", "Enter", "NumpadEnter", 13, Some("\r"), 3),
    ("NumpadMultiply", "*", "NumpadMultiply", 106, Some("*"), 3),
    ("NumpadAdd", "+", "NumpadAdd", 107, Some("+"), 3),
    ("NumpadSubtract", "-", "NumpadSubtract", 109, Some("-"), 3),
    ("NumpadDecimal", ".", "NumpadDecimal", 110, Some("."), 3),
    ("NumpadDivide", "/", "NumpadDivide", 111, Some("/"), 3),
];

/// The US layout's printable keys: (code, keyCode, unshifted, shifted).
const PRINTABLE: &[(&str, i64, char, char)] = &[
    ("Backquote", 192, '`', '~'),
    ("Digit1", 49, '1', '!'),
    ("Digit2", 50, '2', '@'),
    ("Digit3", 51, '3', '#'),
    ("Digit4", 52, '4', '$'),
    ("Digit5", 53, '5', '%'),
    ("Digit6", 54, '6', '^'),
    ("Digit7", 55, '7', '&'),
    ("Digit8", 56, '8', '*'),
    ("Digit9", 57, '9', '('),
    ("Digit0", 48, '0', ')'),
    ("Minus", 189, '-', '_'),
    ("Equal", 187, '=', '+'),
    ("BracketLeft", 219, '[', '{'),
    ("BracketRight", 221, ']', '}'),
    ("Backslash", 220, '\\', '|'),
    ("Semicolon", 186, ';', ':'),
    ("Quote", 222, '\'', '"'),
    ("Comma", 188, ',', '<'),
    ("Period", 190, '.', '>'),
    ("Slash", 191, '/', '?'),
];

/// Looks a key up as typed without Shift held; `None` means "not a key":
/// type it with insertText.
pub fn key_definition(key: &str) -> Option<KeyDefinition> {
    key_definition_with(key, false)
}

/// Looks a key up; with `shift` held, a printable key gives its shifted
/// character (`a` is `A`, `1` is `!`), as a keyboard does.
pub fn key_definition_with(key: &str, shift: bool) -> Option<KeyDefinition> {
    if let Some(&(_, key_value, code, key_code, text, location)) =
        NAMED.iter().find(|(name, ..)| *name == key)
    {
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
            return Some(named(key, key, 111 + n, None, 0));
        }
    }
    // Numpad digits, by code.
    if let Some(d) = key.strip_prefix("Numpad").and_then(single_digit) {
        let text = d.to_string();
        return Some(named(
            &text,
            key,
            96 + (d as i64 - '0' as i64),
            Some(&text),
            3,
        ));
    }
    // A code for a printable key (`KeyA`, `Digit1`, `Backquote`): the
    // character it types.
    if let Some(c) = key.strip_prefix("Key").and_then(single_letter) {
        return Some(printable(c.to_ascii_lowercase(), shift));
    }
    if let Some(&(_, _, unshifted, _)) = PRINTABLE.iter().find(|(code, ..)| *code == key) {
        return Some(printable(unshifted, shift));
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    if c.is_ascii_alphabetic() || PRINTABLE.iter().any(|p| p.2 == c || p.3 == c) {
        return Some(printable(c, shift));
    }
    // Any other single printable character: a key event with text, no code.
    if !c.is_control() {
        let text = c.to_string();
        return Some(named(&text, "", 0, Some(&text), 0));
    }
    None
}

fn named(key: &str, code: &str, key_code: i64, text: Option<&str>, location: i64) -> KeyDefinition {
    KeyDefinition {
        key: key.to_string(),
        code: code.to_string(),
        key_code,
        text: text.map(str::to_string),
        location,
    }
}

fn single_digit(s: &str) -> Option<char> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_digit() => Some(c),
        _ => None,
    }
}

fn single_letter(s: &str) -> Option<char> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_uppercase() => Some(c),
        _ => None,
    }
}

/// A character of the US layout's printable keys (a letter or one of
/// [`PRINTABLE`]); Shift held gives the key's shifted character.
fn printable(c: char, shift: bool) -> KeyDefinition {
    let (code, key_code, c) = if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        let typed = if shift { upper } else { c };
        (format!("Key{upper}"), upper as i64, typed)
    } else {
        let &(code, key_code, unshifted, shifted) = PRINTABLE
            .iter()
            .find(|p| p.2 == c || p.3 == c)
            .expect("a printable key of the US layout");
        let typed = if shift && c == unshifted { shifted } else { c };
        (code.to_string(), key_code, typed)
    };
    let text = c.to_string();
    KeyDefinition {
        key: text.clone(),
        code,
        key_code,
        text: Some(text),
        location: 0,
    }
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
        assert_eq!(key_definition("ShiftRight").unwrap().location, 2);
        assert_eq!(key_definition("é").unwrap().text.as_deref(), Some("é"));
        assert!(key_definition("NotAKey").is_none());
        assert!(key_definition("Keya").is_none());
    }

    #[test]
    fn shifted_characters_have_their_key_s_code() {
        for (c, code, key_code) in [
            ("!", "Digit1", 49),
            ("@", "Digit2", 50),
            ("^", "Digit6", 54),
            (")", "Digit0", 48),
            ("~", "Backquote", 192),
            ("_", "Minus", 189),
            ("+", "Equal", 187),
            ("{", "BracketLeft", 219),
            ("|", "Backslash", 220),
            (":", "Semicolon", 186),
            ("\"", "Quote", 222),
            ("<", "Comma", 188),
            ("?", "Slash", 191),
            ("Z", "KeyZ", 90),
        ] {
            let def = key_definition(c).unwrap();
            assert_eq!(
                (
                    def.key.as_str(),
                    def.code.as_str(),
                    def.key_code,
                    def.text.as_deref()
                ),
                (c, code, key_code, Some(c)),
                "{c}"
            );
        }
    }

    #[test]
    fn shift_held_types_the_shifted_character() {
        let a = key_definition_with("a", true).unwrap();
        assert_eq!((a.key.as_str(), a.code.as_str()), ("A", "KeyA"));
        let one = key_definition_with("1", true).unwrap();
        assert_eq!((one.key.as_str(), one.code.as_str()), ("!", "Digit1"));
        let by_code = key_definition_with("Digit6", true).unwrap();
        assert_eq!(by_code.text.as_deref(), Some("^"));
        let plain = key_definition("KeyQ").unwrap();
        assert_eq!((plain.key.as_str(), plain.key_code), ("q", 81));
        // Named keys don't change with Shift.
        assert_eq!(
            key_definition_with("ArrowLeft", true).unwrap().key,
            "ArrowLeft"
        );
        let five = key_definition("Numpad5").unwrap();
        assert_eq!(
            (five.key.as_str(), five.key_code, five.location),
            ("5", 101, 3)
        );
    }

    #[test]
    fn modifiers_are_known() {
        assert_eq!(
            key_definition("ControlRight").unwrap().modifier(),
            Some("Control")
        );
        assert_eq!(key_definition("Shift").unwrap().modifier(), Some("Shift"));
        assert_eq!(key_definition("a").unwrap().modifier(), None);
    }
}
