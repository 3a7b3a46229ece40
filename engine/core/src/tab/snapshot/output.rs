//! A built snapshot as its client reads it: the YAML-like text (served in
//! windows with the tail on each) or JSON with bounds.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::tree::NAME_CHARS;
use super::{Built, Node, TAIL_CHARS, WINDOW_CHARS};
use crate::error::{Error, ErrorCode, Result};
use crate::tab::refs::{CallOn, PageRefs, lookup_prelude, ref_text};

impl Built {
    /// Why this snapshot is not the whole accessibility tree, if it isn't.
    pub fn truncated(&self) -> Option<&str> {
        self.truncated.as_deref()
    }

    pub fn refs_count(&self) -> usize {
        self.refs_count
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The YAML-like text: `- role "name" [e7] [checked]: value`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for node in &self.roots {
            write_node(&mut out, node, 0, &self.frames);
        }
        out
    }

    /// The JSON shape: elements with ref_id, role, name, value, state,
    /// bounds (for elements with refs), children.
    pub async fn json(&self, refs: &PageRefs<'_>) -> Value {
        let bounds = self.bounds(refs).await;
        // A text is named by the element that holds it: where that element
        // (or another text of it) is in the tree too, the text gets no ref,
        // so that every ref names one node.
        let mut seen: HashMap<(usize, u32), usize> = HashMap::new();
        fn count(node: &Node, seen: &mut HashMap<(usize, u32), usize>) {
            if let Some(n) = node.number {
                *seen.entry((node.frame, n)).or_default() += 1;
            }
            for child in &node.children {
                count(child, seen);
            }
        }
        for node in &self.roots {
            count(node, &mut seen);
        }
        let shared: HashSet<(usize, u32)> = seen
            .into_iter()
            .filter(|(_, times)| *times > 1)
            .map(|(key, _)| key)
            .collect();
        let elements: Vec<Value> = self
            .roots
            .iter()
            .filter_map(|n| json_node(n, &self.frames, &bounds, &shared))
            .collect();
        let mut out = json!({
            "elements": elements,
            "page_title": self.title,
            "page_url": self.url,
            "focused_ref": self.focused,
            "refs_count": self.refs_count,
        });
        if let Some(note) = &self.truncated {
            out["truncated"] = json!(true);
            out["note"] = json!(note);
        }
        out
    }

    /// Viewport boxes of numbered elements, read from each frame's world.
    async fn bounds(&self, refs: &PageRefs<'_>) -> HashMap<u32, Value> {
        let mut by_frame: HashMap<usize, Vec<u32>> = HashMap::new();
        collect_numbers(&self.roots, &mut by_frame);
        let mut out = HashMap::new();
        for (frame, numbers) in by_frame {
            let Some((frame_id, ordinal)) = self.frames.get(frame) else {
                continue;
            };
            let Ok(world) = refs.frame_world(frame_id).await else {
                continue;
            };
            let (dx, dy) = if *ordinal == 0 {
                (0.0, 0.0)
            } else {
                refs.frame_offset(frame_id).await.unwrap_or((0.0, 0.0))
            };
            let Ok(result) = refs
                .session()
                .call_function(
                    Some(frame_id),
                    CallOn::World(world),
                    concat!("function(ids) { ", lookup_prelude!(), " return ids.map(n => { const el = byNumber(n); if (!el) return null; const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }); }"),
                    vec![json!({ "value": numbers })],
                    true,
                )
                .await
            else {
                continue;
            };
            let rects = result
                .get("value")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (n, rect) in numbers.iter().zip(rects) {
                if let Some(r) = rect.as_array() {
                    let at = |i: usize| r.get(i).and_then(Value::as_f64).unwrap_or(0.0);
                    out.insert(*n, json!({ "x": at(0) + dx, "y": at(1) + dy, "width": at(2), "height": at(3) }));
                }
            }
        }
        out
    }
}

fn collect_numbers(nodes: &[Node], out: &mut HashMap<usize, Vec<u32>>) {
    for node in nodes {
        if let Some(n) = node.number {
            out.entry(node.frame).or_default().push(n);
        }
        collect_numbers(&node.children, out);
    }
}

fn short(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        return name.to_string();
    }
    let mut cut: String = name.chars().take(NAME_CHARS).collect();
    cut.push('…');
    cut
}

pub(super) fn frame_ordinal(frames: &[(String, u32)], frame: usize) -> u32 {
    frames.get(frame).map(|f| f.1).unwrap_or(0)
}

fn write_node(out: &mut String, node: &Node, depth: usize, frames: &[(String, u32)]) {
    if node.role.is_empty() {
        return;
    }
    let indent = "  ".repeat(depth);
    if node.role == "text" {
        out.push_str(&format!(
            "{indent}- text: {}\n",
            serde_json::to_string(&short(&node.name)).unwrap_or_default()
        ));
        return;
    }
    let role = if node.role == "Iframe" {
        "iframe"
    } else {
        node.role.as_str()
    };
    out.push_str(&format!("{indent}- {role}"));
    if !node.name.is_empty() {
        out.push(' ');
        out.push_str(&serde_json::to_string(&short(&node.name)).unwrap_or_default());
    }
    if let Some(n) = node.number {
        out.push_str(&format!(
            " [{}]",
            ref_text(frame_ordinal(frames, node.frame), n)
        ));
    }
    if let Some(f) = node.frame_label {
        out.push_str(&format!(" [frame=f{f}]"));
    }
    if let Some(level) = node.level {
        out.push_str(&format!(" [level={level}]"));
    }
    for state in &node.states {
        if state != "focused" || node.number.is_some() {
            out.push_str(&format!(" [{state}]"));
        }
    }
    if let Some(value) = &node.value {
        out.push_str(": ");
        out.push_str(&serde_json::to_string(&short(value)).unwrap_or_default());
    }
    let visible_children = node.children.iter().any(|c| !c.role.is_empty());
    if visible_children {
        if node.value.is_none() {
            out.push(':');
        }
        out.push('\n');
        for child in &node.children {
            write_node(out, child, depth + 1, frames);
        }
    } else {
        out.push('\n');
    }
}

fn json_node(
    node: &Node,
    frames: &[(String, u32)],
    bounds: &HashMap<u32, Value>,
    shared: &HashSet<(usize, u32)>,
) -> Option<Value> {
    if node.role.is_empty() {
        return None;
    }
    let children: Vec<Value> = node
        .children
        .iter()
        .filter_map(|c| json_node(c, frames, bounds, shared))
        .collect();
    let mut v = json!({
        "role": if node.role == "Iframe" { "iframe" } else { node.role.as_str() },
        "name": if node.name.is_empty() { Value::Null } else { Value::String(short(&node.name)) },
        "value": node.value,
        "state": node.states,
        "children": children,
    });
    let number = node
        .number
        .filter(|n| node.role != "text" || !shared.contains(&(node.frame, *n)));
    if let Some(n) = number {
        v["ref_id"] = json!(ref_text(frame_ordinal(frames, node.frame), n));
        v["bounds"] = bounds.get(&n).cloned().unwrap_or(Value::Null);
    }
    if let Some(f) = node.frame_label {
        v["frame"] = json!(format!("f{f}"));
    }
    if let Some(level) = node.level {
        v["level"] = json!(level);
    }
    Some(v)
}

/// One window of a text snapshot.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Window {
    pub snapshot: String,
    pub truncated: bool,
    #[serde(rename = "totalChars")]
    pub total_chars: usize,
    #[serde(rename = "hasMore")]
    pub has_more: bool,
    #[serde(rename = "nextOffset", skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// The window at `offset` (characters): the body from `offset`, cut at a line
/// end, plus the snapshot's last `TAIL_CHARS` characters.
pub fn window(text: &str, offset: usize) -> Result<Window> {
    let chars: Vec<char> = text.chars().collect();
    let total = chars.len();
    if total <= WINDOW_CHARS {
        if offset > 0 {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "offset {offset} is past the end: this snapshot has {total} characters and fits in one window"
                ),
            ));
        }
        return Ok(Window {
            snapshot: text.to_string(),
            truncated: false,
            total_chars: total,
            has_more: false,
            next_offset: None,
        });
    }
    let tail_start = total - TAIL_CHARS;
    if offset >= tail_start {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "offset {offset} is past the paged part of the snapshot (0..{tail_start}); its last {TAIL_CHARS} characters come with every window"
            ),
        ));
    }
    let budget = WINDOW_CHARS - TAIL_CHARS - 200;
    let mut end = (offset + budget).min(tail_start);
    if end < tail_start {
        // Whole lines only, when there is a line end in the window.
        if let Some(nl) = chars[offset..end].iter().rposition(|&c| c == '\n') {
            if nl > 0 {
                end = offset + nl + 1;
            }
        }
    }
    let body: String = chars[offset..end].iter().collect();
    let tail: String = chars[tail_start..].iter().collect();
    let has_more = end < tail_start;
    let note = if has_more {
        format!(
            "\n# ... characters {end}..{tail_start} of {total} not shown; GET again with offset={end}. The snapshot's last {TAIL_CHARS} characters follow.\n"
        )
    } else {
        format!("\n# ... the snapshot's last {TAIL_CHARS} characters follow.\n")
    };
    Ok(Window {
        snapshot: format!("{body}{note}{tail}"),
        truncated: true,
        total_chars: total,
        has_more,
        next_offset: has_more.then_some(end),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_text(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("- button \"Item {i:05}\" [e{i}]\n"))
            .collect()
    }

    #[test]
    fn small_snapshots_are_one_window() {
        let w = window("- button \"a\"\n", 0).unwrap();
        assert!(!w.truncated && !w.has_more && w.next_offset.is_none());
        assert!(window("- x\n", 5).is_err());
    }

    #[test]
    fn windows_page_through_with_the_tail_on_each() {
        let text = big_text(8000);
        let total = text.chars().count();
        assert!(total > 2 * WINDOW_CHARS);
        let tail: String = text.chars().skip(total - TAIL_CHARS).collect();
        let mut offset = 0;
        let mut seen = String::new();
        let mut windows = 0;
        loop {
            let w = window(&text, offset).unwrap();
            windows += 1;
            assert!(
                w.snapshot.chars().count() <= WINDOW_CHARS,
                "window {windows} too large"
            );
            assert!(
                w.snapshot.ends_with(&tail),
                "tail missing from window {windows}"
            );
            assert_eq!(w.total_chars, total);
            let body_len = match w.next_offset {
                Some(next) => next - offset,
                None => total - TAIL_CHARS - offset,
            };
            seen.extend(text.chars().skip(offset).take(body_len));
            match w.next_offset {
                Some(next) => {
                    assert!(w.has_more);
                    assert!(next > offset);
                    // Cut at a line end.
                    assert_eq!(text.chars().nth(next - 1), Some('\n'));
                    offset = next;
                }
                None => break,
            }
        }
        assert!(windows >= 3);
        seen.push_str(&tail);
        assert_eq!(seen, text, "windows plus tail cover the snapshot exactly");
        assert!(window(&text, total).is_err());
    }

    #[test]
    fn text_lines_show_role_name_ref_and_state() {
        let built = Built {
            truncated: None,
            roots: vec![Node {
                role: "form".into(),
                children: vec![
                    Node {
                        role: "textbox".into(),
                        name: "Email".into(),
                        value: Some("a@b.c".into()),
                        number: Some(3),
                        states: vec!["required".into()],
                        ..Default::default()
                    },
                    Node {
                        role: "checkbox".into(),
                        name: "Remember".into(),
                        number: Some(4),
                        states: vec!["checked".into()],
                        frame: 1,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            title: String::new(),
            url: String::new(),
            focused: None,
            refs_count: 2,
            frames: vec![("main".into(), 0), ("child".into(), 2)],
        };
        assert_eq!(
            built.text(),
            "- form:\n  - textbox \"Email\" [e3] [required]: \"a@b.c\"\n  - checkbox \"Remember\" [f2e4] [checked]\n"
        );
    }
}
