//! From the browser's accessibility nodes (or the DOM script's) to the
//! snapshot's tree: roles kept or unwrapped, names cut, states read, frames
//! stitched in at their iframes, and which nodes get refs. No browser here.

use std::collections::HashMap;

use serde_json::Value;

use super::{FrameTree, Node};

/// Accessible names longer than this are cut (a link around a paragraph).
pub(super) const NAME_CHARS: usize = 150;
/// Deeper trees are cut here rather than risk the stack.
const MAX_DEPTH: usize = 256;

/// Roles an agent acts on; these get refs.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "MenuListOption",
    "PopUpButton",
    "ToggleButton",
    "DisclosureTriangle",
];

/// Roles that only wrap their children; unnamed ones are left out and their
/// children take their place.
const WRAPPERS: &[&str] = &[
    "none",
    "generic",
    "presentation",
    "LineBreak",
    "InlineTextBox",
];

/// States read from AX properties (true-valued booleans and tristates).
const STATES: &[&str] = &[
    "focused",
    "disabled",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "required",
    "readonly",
    "invalid",
    "multiselectable",
    "busy",
    "modal",
];

pub(super) fn ax_string(node: &Value, field: &str) -> String {
    node.get(field)
        .and_then(|v| v.get("value"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

pub(super) fn child_ids(node: &Value) -> Vec<String> {
    node.get("childIds")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn convert(tree: &FrameTree, id: &str, frame: usize, depth: usize, out: &mut Vec<Node>) {
    let Some(node) = tree.nodes.get(id) else {
        return;
    };
    let children_ids = child_ids(node);
    let mut children = Vec::new();
    if depth < MAX_DEPTH {
        for child in &children_ids {
            convert(tree, child, frame, depth + 1, &mut children);
        }
    }
    let role = ax_string(node, "role");
    let name = ax_string(node, "name").trim().to_string();
    let ignored = node
        .get("ignored")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if ignored || (WRAPPERS.contains(&role.as_str()) && name.is_empty()) || role.is_empty() {
        out.extend(children);
        return;
    }
    if role == "StaticText" {
        if !name.is_empty() {
            out.push(Node {
                role: "text".into(),
                name,
                frame,
                // The text node: its ref is the element that holds it.
                backend: node.get("backendDOMNodeId").and_then(Value::as_i64),
                ..Default::default()
            });
        }
        return;
    }
    let mut states = Vec::new();
    let mut level = None;
    for p in node
        .get("properties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let pname = p.get("name").and_then(Value::as_str).unwrap_or("");
        let pvalue = p.pointer("/value/value");
        if pname == "level" {
            level = pvalue.and_then(Value::as_i64);
        } else if STATES.contains(&pname) {
            match pvalue {
                Some(Value::Bool(true)) => states.push(pname.to_string()),
                Some(Value::String(s)) if s == "true" => states.push(pname.to_string()),
                Some(Value::String(s)) if s == "mixed" => states.push(format!("{pname}=mixed")),
                _ => {}
            }
        }
    }
    let value = Some(ax_string(node, "value")).filter(|v| !v.is_empty());
    // A name repeated by its only text child says it twice.
    if children.len() == 1 && children[0].role == "text" && children[0].name == name {
        children.clear();
    }
    out.push(Node {
        role,
        name,
        value,
        states,
        level,
        backend: node.get("backendDOMNodeId").and_then(Value::as_i64),
        frame,
        children,
        ..Default::default()
    });
}

/// Frames in tree order: (frame id, parent id).
pub(super) fn frames_of(
    tree: &Value,
    parent: Option<&str>,
    out: &mut Vec<(String, Option<String>)>,
) {
    let Some(id) = tree.pointer("/frame/id").and_then(Value::as_str) else {
        return;
    };
    out.push((id.to_string(), parent.map(str::to_string)));
    for child in tree
        .get("childFrames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        frames_of(child, Some(id), out);
    }
}

/// Puts each child frame's tree under its iframe node. `owner_key` names
/// an iframe node's owner (what `owners` maps to the child frame's index).
pub(super) fn attach_frames<K: std::hash::Hash + Eq>(
    nodes: &mut Vec<Node>,
    owners: &HashMap<K, usize>,
    owner_key: &impl Fn(&Node) -> Option<K>,
    frames: &mut Vec<Option<Vec<Node>>>,
    ordinals: &[u32],
) {
    for node in nodes.iter_mut() {
        if node.role.eq_ignore_ascii_case("iframe")
            && let Some(&index) = owner_key(node).and_then(|k| owners.get(&k))
            && let Some(mut content) = frames.get_mut(index).and_then(Option::take)
        {
            attach_frames(&mut content, owners, owner_key, frames, ordinals);
            node.frame_label = Some(ordinals[index]);
            node.children = content;
            continue;
        }
        attach_frames(&mut node.children, owners, owner_key, frames, ordinals);
    }
}

/// Which elements get refs: the interactive ones (the text snapshot), or
/// every element (the JSON snapshot, as Aleph's has it: headings, text and
/// images too; text is named by the element that holds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefsFor {
    Interactive,
    Every,
}

impl RefsFor {
    fn wants(self, node: &Node) -> bool {
        self == RefsFor::Every || INTERACTIVE.contains(&node.role.as_str())
    }
}

pub(super) fn collect_interactive(
    nodes: &mut [Node],
    refs_for: RefsFor,
    per_frame: &mut HashMap<usize, Vec<i64>>,
) {
    for node in nodes.iter_mut() {
        if refs_for.wants(node)
            && let Some(b) = node.backend
        {
            per_frame.entry(node.frame).or_default().push(b);
        }
        collect_interactive(&mut node.children, refs_for, per_frame);
    }
}

pub(super) fn assign_numbers(
    nodes: &mut [Node],
    refs_for: RefsFor,
    numbers: &HashMap<(usize, i64), u32>,
    count: &mut usize,
    focused: &mut Option<(usize, u32)>,
) {
    for node in nodes.iter_mut() {
        if node.role.is_empty() {
            continue;
        }
        if refs_for.wants(node)
            && let Some(&n) = node.backend.and_then(|b| numbers.get(&(node.frame, b)))
        {
            node.number = Some(n);
            *count += 1;
            if node.states.iter().any(|s| s == "focused") {
                *focused = Some((node.frame, n));
            }
        }
        assign_numbers(&mut node.children, refs_for, numbers, count, focused);
    }
}

/// A node of a DOM-built tree (`DOM_TREE_FN`'s answer).
pub(super) fn dom_node(value: &Value, frame: usize, depth: usize) -> Node {
    let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_string);
    let number = |k: &str| value.get(k).and_then(Value::as_u64).map(|n| n as u32);
    let children = match value.get("c").and_then(Value::as_array) {
        Some(list) if depth < MAX_DEPTH => {
            list.iter().map(|c| dom_node(c, frame, depth + 1)).collect()
        }
        _ => Vec::new(),
    };
    let mut node = Node {
        role: text("r").unwrap_or_default(),
        name: text("n").unwrap_or_default(),
        value: text("v"),
        states: value
            .get("s")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        level: value.get("l").and_then(Value::as_i64),
        number: number("e"),
        owner: number("f"),
        frame,
        children,
        ..Default::default()
    };
    // A name repeated by its only text child says it twice.
    if node.children.len() == 1
        && node.children[0].role == "text"
        && node.children[0].name == node.name
    {
        node.children.clear();
    }
    node
}

/// Counts the refs (and which
/// one has focus).
pub(super) fn count_refs(
    nodes: &mut [Node],
    count: &mut usize,
    focused: &mut Option<(usize, u32)>,
) {
    for node in nodes.iter_mut() {
        if let Some(n) = node.number {
            *count += 1;
            if node.states.iter().any(|s| s == "focused") {
                *focused = Some((node.frame, n));
            }
        }
        count_refs(&mut node.children, count, focused);
    }
}
