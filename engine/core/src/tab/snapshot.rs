//! `GET /tabs/{id}/snapshot`: the accessibility tree (CDP Accessibility
//! domain) of every frame, stitched at the iframes, as YAML-like text with
//! interactive elements annotated `[e7]`, or as JSON.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::refs::{CallOn, PageRefs, lookup_prelude, numbering_prelude, ref_text};
use crate::error::{Error, ErrorCode, Result};

/// A text snapshot is served in windows of this many characters...
pub const WINDOW_CHARS: usize = 80_000;
/// ...the last this many of which are the snapshot's tail, on every window,
/// so pagination and footer links stay reachable.
pub const TAIL_CHARS: usize = 5_000;
/// How long one frame's accessibility tree may take to read.
const AX_TREE_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);
/// Past this many elements in the top document, the browser's accessibility
/// tree takes tens of seconds to read (a 100,000-node page: 15-25 s, 67 MB
/// of JSON); a `source=accessibility` snapshot is then built from the DOM.
const LARGE_PAGE_ELEMENTS: u64 = 20_000;
/// At most this many nodes in a snapshot built from the DOM, all frames
/// together.
const DOM_ITEMS: usize = 100_000;

/// How many elements the top document has (open shadow roots not counted).
const ELEMENT_COUNT_FN: &str = "function() { return document.getElementsByTagName('*').length; }";

/// The accessibility tree of one frame, built from its DOM in its refs
/// world (see the script for what it reads and answers).
const DOM_TREE_FN: &str = concat!(
    "function(next, every, limit) {",
    numbering_prelude!(),
    include_str!("dom_tree.js"),
    "\n}"
);

/// Accessible names longer than this are cut (a link around a paragraph).
const NAME_CHARS: usize = 150;
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

/// Where a snapshot's tree comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SnapshotSource {
    /// Built from the DOM in an isolated world: what the browser's own
    /// tree would say for ARIA roles, names and states, in a fraction of
    /// its time.
    #[default]
    Dom,
    /// The browser's accessibility tree (the Accessibility domain): slower,
    /// and it also has text CSS generates and closed shadow roots.
    Accessibility,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Default)]
struct Node {
    role: String,
    name: String,
    value: Option<String>,
    states: Vec<String>,
    level: Option<i64>,
    backend: Option<i64>,
    /// An iframe's own number in its frame's refs world (DOM-built trees).
    owner: Option<u32>,
    frame: usize,
    number: Option<u32>,
    frame_label: Option<u32>,
    children: Vec<Node>,
}

/// What an AX tree walk yields for one frame.
struct FrameTree {
    id: String,
    ordinal: u32,
    nodes: HashMap<String, Value>,
    root: Option<String>,
}

pub struct Built {
    /// Why this snapshot is not the whole accessibility tree, if it isn't.
    truncated: Option<String>,
    roots: Vec<Node>,
    title: String,
    url: String,
    focused: Option<String>,
    refs_count: usize,
    frames: Vec<(String, u32)>,
}

fn ax_string(node: &Value, field: &str) -> String {
    node.get(field)
        .and_then(|v| v.get("value"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

fn child_ids(node: &Value) -> Vec<String> {
    node.get("childIds")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn convert(tree: &FrameTree, id: &str, frame: usize, depth: usize, out: &mut Vec<Node>) {
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
fn frames_of(tree: &Value, parent: Option<&str>, out: &mut Vec<(String, Option<String>)>) {
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
fn attach_frames<K: std::hash::Hash + Eq>(
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

fn collect_interactive(
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

fn assign_numbers(
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
fn dom_node(value: &Value, frame: usize, depth: usize) -> Node {
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
fn count_refs(nodes: &mut [Node], count: &mut usize, focused: &mut Option<(usize, u32)>) {
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

impl PageRefs<'_> {
    /// The page's accessibility tree, every frame's stitched in at its
    /// iframe, with refs for elements (the interactive ones, or every one).
    pub async fn build_snapshot(&self, refs_for: RefsFor, source: SnapshotSource) -> Result<Built> {
        match source {
            SnapshotSource::Dom => self.build_dom_snapshot(refs_for, None).await,
            SnapshotSource::Accessibility => self.build_accessibility_snapshot(refs_for).await,
        }
    }

    /// Reads every frame's tree from the browser's accessibility domain.
    async fn build_accessibility_snapshot(&self, refs_for: RefsFor) -> Result<Built> {
        let elements = self
            .in_main_world(ELEMENT_COUNT_FN)
            .await
            .ok()
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        if elements > LARGE_PAGE_ELEMENTS {
            let note = format!(
                "the page has {elements} elements, too many for its accessibility tree to be read in time: \
                 this snapshot is built from the DOM"
            );
            return self.build_dom_snapshot(refs_for, Some(note)).await;
        }
        let started = std::time::Instant::now();
        let frame_list = self.snapshot_frames().await?;
        let mut trees = Vec::new();
        for (i, (id, _)) in frame_list.iter().enumerate() {
            // A frame can go away between the listing and the read.
            let Ok(ax) = self
                .session()
                // A page of 100,000 nodes takes seconds to serialize.
                .raw_in_within(
                    Some(id),
                    "Accessibility.getFullAXTree",
                    json!({ "frameId": id }),
                    AX_TREE_LIMIT,
                )
                .await
            else {
                continue;
            };
            let list = ax
                .get("nodes")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let root = list
                .iter()
                .find(|n| n.get("parentId").is_none())
                .or_else(|| list.first())
                .and_then(|n| n.get("nodeId").and_then(Value::as_str).map(str::to_string));
            let nodes = list
                .into_iter()
                .filter_map(|n| Some((n.get("nodeId")?.as_str()?.to_string(), n)))
                .collect();
            let ordinal = self.with_refs(|t| t.ordinal(id, i == 0));
            trees.push(FrameTree {
                id: id.clone(),
                ordinal,
                nodes,
                root,
            });
        }
        let read_ms = started.elapsed().as_secs_f64() * 1000.0;
        if trees.is_empty() {
            return Err(Error::new(
                ErrorCode::NotReady,
                "the page's accessibility tree could not be read",
            ));
        }
        let title = trees
            .first()
            .and_then(|t| t.root.as_ref().and_then(|r| t.nodes.get(r)))
            .map(|n| ax_string(n, "name"))
            .unwrap_or_default();
        let parents: HashMap<&str, Option<&str>> = frame_list
            .iter()
            .map(|(f, p)| (f.as_str(), p.as_deref()))
            .collect();
        // Backend node ids are per renderer: an owner is known by the
        // renderer (session) of its frame and its id there.
        let renderer_of = |frame: &str| {
            self.session()
                .frame_targets()
                .and_then(|t| t.session_of(frame))
        };
        let renderers: Vec<Option<String>> = trees.iter().map(|t| renderer_of(&t.id)).collect();
        let mut converted: Vec<Option<Vec<Node>>> = Vec::new();
        let mut owners = HashMap::new();
        for (i, tree) in trees.iter().enumerate() {
            let mut nodes = Vec::new();
            if let Some(root) = &tree.root {
                // The document node itself is the page: print its content.
                if let Some(r) = tree.nodes.get(root) {
                    let ids = child_ids(r);
                    for id in ids {
                        convert(tree, &id, i, 1, &mut nodes);
                    }
                }
            }
            converted.push(Some(nodes));
            // The owner `<iframe>` lives in the parent frame's renderer.
            let parent = parents.get(tree.id.as_str()).copied().flatten();
            if i > 0
                && let Ok(owner) = self
                    .session()
                    .raw_in(parent, "DOM.getFrameOwner", json!({ "frameId": tree.id }))
                    .await
                && let Some(b) = owner.get("backendNodeId").and_then(Value::as_i64)
            {
                owners.insert((parent.and_then(renderer_of), b), i);
            }
        }
        let ordinals: Vec<u32> = trees.iter().map(|t| t.ordinal).collect();
        let mut roots = converted[0].take().unwrap_or_default();
        let owner_key = |node: &Node| {
            let renderer = renderers.get(node.frame).cloned().flatten();
            node.backend.map(|b| (renderer, b))
        };
        attach_frames(&mut roots, &owners, &owner_key, &mut converted, &ordinals);
        let mut per_frame = HashMap::new();
        collect_interactive(&mut roots, refs_for, &mut per_frame);
        let converted_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut numbers = HashMap::new();
        for (frame, backends) in per_frame {
            let ids = match self
                .register_backend_nodes(&trees[frame].id, &backends)
                .await
            {
                Ok(ids) => ids,
                Err(e) => {
                    tracing::debug!("refs for a frame could not be registered: {}", e.message);
                    continue;
                }
            };
            for (b, n) in backends.iter().zip(ids) {
                if let Some(n) = n {
                    numbers.insert((frame, *b), n);
                }
            }
        }
        let mut refs_count = 0;
        let mut focused = None;
        assign_numbers(
            &mut roots,
            refs_for,
            &numbers,
            &mut refs_count,
            &mut focused,
        );
        let (url, _) = self.session().info().await.unwrap_or_default();
        tracing::debug!(
            "snapshot: AX trees read in {read_ms:.1} ms, converted by {converted_ms:.1} ms, refs by {:.1} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
        Ok(Built {
            truncated: None,
            roots,
            title,
            url,
            focused: focused.map(|(frame, n)| ref_text(ordinals[frame], n)),
            refs_count,
            frames: trees.iter().map(|t| (t.id.clone(), t.ordinal)).collect(),
        })
    }
}

impl PageRefs<'_> {
    /// The page's frames in tree order, the main one first, out-of-process
    /// ones included: (frame id, parent id).
    pub async fn frame_list(&self) -> Result<Vec<(String, Option<String>)>> {
        let frame_tree = self.session().raw("Page.getFrameTree", json!({})).await?;
        let mut frame_list = Vec::new();
        if let Some(tree) = frame_tree.get("frameTree") {
            frames_of(tree, None, &mut frame_list);
        }
        self.add_out_of_process_frames(&mut frame_list).await;
        Ok(frame_list)
    }

    /// [`Self::frame_list`], or why there is nothing to snapshot.
    async fn snapshot_frames(&self) -> Result<Vec<(String, Option<String>)>> {
        let frames = self.frame_list().await?;
        if frames.is_empty() {
            return Err(Error::new(
                ErrorCode::NotReady,
                "the tab has no document yet",
            ));
        }
        Ok(frames)
    }

    /// A frame's `f<n>` label (its ordinal in the tab's refs).
    pub fn frame_label(&self, frame_id: &str) -> u32 {
        self.with_refs(|t| t.ordinal(frame_id, false))
    }

    /// Builds every frame's tree from its DOM, in its refs world
    /// (`DOM_TREE_FN`), numbering elements as it goes; `note` says why,
    /// when this stands in for the accessibility tree.
    async fn build_dom_snapshot(&self, refs_for: RefsFor, note: Option<String>) -> Result<Built> {
        let started = std::time::Instant::now();
        let frame_list = self.snapshot_frames().await?;
        let every = refs_for == RefsFor::Every;
        let mut trees: Vec<Option<Vec<Node>>> = Vec::with_capacity(frame_list.len());
        let mut frames = Vec::with_capacity(frame_list.len());
        let mut title = String::new();
        let mut budget = DOM_ITEMS;
        let mut cut = false;
        // One frame at a time: numbers come from the tab's one counter.
        for (i, (id, _)) in frame_list.iter().enumerate() {
            frames.push((id.clone(), self.with_refs(|t| t.ordinal(id, i == 0))));
            let answer = match self
                .number_in_frame(
                    id,
                    DOM_TREE_FN,
                    vec![json!({ "value": every }), json!({ "value": budget })],
                )
                .await
            {
                Ok(answer) => answer,
                Err(e) if i == 0 => return Err(e),
                // A frame can go away between the listing and the read.
                Err(e) => {
                    tracing::debug!("frame {id} could not be read: {}", e.message);
                    trees.push(None);
                    continue;
                }
            };
            let answer: Value = match answer
                .get("tree")
                .and_then(Value::as_str)
                .map(serde_json::from_str)
            {
                Some(Ok(tree)) => tree,
                Some(Err(e)) if i == 0 => {
                    return Err(Error::internal(format!(
                        "the page's tree did not parse: {e}"
                    )));
                }
                _ => {
                    trees.push(None);
                    continue;
                }
            };
            if i == 0 {
                title = answer
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
            }
            let items = answer.get("items").and_then(Value::as_u64).unwrap_or(0) as usize;
            budget = budget.saturating_sub(items);
            cut |= answer.get("cut").and_then(Value::as_bool).unwrap_or(false);
            let nodes = answer
                .get("nodes")
                .and_then(Value::as_array)
                .map(|list| list.iter().map(|v| dom_node(v, i, 0)).collect())
                .unwrap_or_default();
            trees.push(Some(nodes));
        }
        let read_ms = started.elapsed().as_secs_f64() * 1000.0;
        // Each child frame hangs under its `<iframe>`, known by the number
        // the parent frame's world gave it.
        let index_of: HashMap<&str, usize> = frame_list
            .iter()
            .enumerate()
            .map(|(i, (f, _))| (f.as_str(), i))
            .collect();
        // Per parent frame: its children's `<iframe>`s asked for at once,
        // then numbered in one call (a page of many frames pays a few round
        // trips, not three per frame).
        let mut children: Vec<(usize, Vec<(usize, &str)>)> = Vec::new();
        for (i, (id, parent)) in frame_list.iter().enumerate().skip(1) {
            let Some(&parent_index) = parent.as_deref().and_then(|p| index_of.get(p)) else {
                continue;
            };
            match children.iter_mut().find(|(p, _)| *p == parent_index) {
                Some((_, list)) => list.push((i, id.as_str())),
                None => children.push((parent_index, vec![(i, id.as_str())])),
            }
        }
        let mut owners = HashMap::new();
        for (parent_index, list) in children {
            let parent = frame_list[parent_index].0.as_str();
            let asked = futures::future::join_all(list.iter().map(|(_, id)| {
                self.session()
                    .raw_in(Some(parent), "DOM.getFrameOwner", json!({ "frameId": id }))
            }))
            .await;
            let (found, backends): (Vec<usize>, Vec<i64>) = list
                .iter()
                .zip(asked)
                .filter_map(|((i, _), owner)| {
                    Some((*i, owner.ok()?.get("backendNodeId")?.as_i64()?))
                })
                .unzip();
            if backends.is_empty() {
                continue;
            }
            if let Ok(numbers) = self.register_backend_nodes(parent, &backends).await {
                for (i, number) in found.into_iter().zip(numbers) {
                    if let Some(n) = number {
                        owners.insert((parent_index, n), i);
                    }
                }
            }
        }
        let ordinals: Vec<u32> = frames.iter().map(|(_, o)| *o).collect();
        let mut roots = trees.first_mut().and_then(Option::take).unwrap_or_default();
        let owner_key = |node: &Node| node.owner.map(|n| (node.frame, n));
        attach_frames(&mut roots, &owners, &owner_key, &mut trees, &ordinals);
        let mut refs_count = 0;
        let mut focused = None;
        count_refs(&mut roots, &mut refs_count, &mut focused);
        let (url, _) = self.session().info().await.unwrap_or_default();
        tracing::debug!(
            "snapshot: frames built in {read_ms:.1} ms, stitched by {:.1} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
        let truncated = match (note, cut) {
            (Some(note), true) => Some(format!("{note}; cut at {DOM_ITEMS} nodes")),
            (Some(note), false) => Some(note),
            (None, true) => Some(format!(
                "the page has more than {DOM_ITEMS} nodes: this snapshot is cut there"
            )),
            (None, false) => None,
        };
        Ok(Built {
            truncated,
            roots,
            title,
            url,
            focused: focused.map(|(frame, n)| ref_text(frame_ordinal(&frames, frame), n)),
            refs_count,
            frames,
        })
    }

    /// Adds the frames rendered out of the page's process (site isolation)
    /// to `frames` (frame id, parent id), from each frame target's own tree;
    /// their inner same-site frames are routed through that target from now
    /// on.
    async fn add_out_of_process_frames(&self, frames: &mut Vec<(String, Option<String>)>) {
        let Some(targets) = self.session().frame_targets() else {
            return;
        };
        // Every frame target is a root here, nested ones included.
        for (root, session) in targets.roots() {
            let Ok(tree) = targets
                .navigator()
                .send(
                    Some(&session),
                    "Page.getFrameTree",
                    json!({}),
                    super::session::COMMAND_BOUND,
                )
                .await
            else {
                continue;
            };
            let Some(tree) = tree.get("frameTree") else {
                continue;
            };
            let parent = tree
                .pointer("/frame/parentId")
                .and_then(Value::as_str)
                .map(str::to_string);
            targets.set_root_parent(&root, parent.clone());
            let mut inner = Vec::new();
            frames_of(tree, None, &mut inner);
            targets.learn_frames(
                &session,
                inner.iter().map(|(f, _)| f.clone()).filter(|f| f != &root),
            );
            for (i, (frame, frame_parent)) in inner.into_iter().enumerate() {
                let frame_parent = if i == 0 { parent.clone() } else { frame_parent };
                match frames.iter_mut().find(|(f, _)| *f == frame) {
                    Some(known) => known.1 = known.1.take().or(frame_parent),
                    None => frames.push((frame, frame_parent)),
                }
            }
        }
    }

    /// Runs a function without arguments in the main frame's refs world.
    async fn in_main_world(&self, function: &str) -> Result<Value> {
        let frame = self.session().main_frame_or_target();
        let world = self.frame_world(&frame).await?;
        let value = self
            .session()
            .call_function(Some(&frame), CallOn::World(world), function, vec![], true)
            .await?;
        Ok(value.get("value").cloned().unwrap_or(Value::Null))
    }
}

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

fn frame_ordinal(frames: &[(String, u32)], frame: usize) -> u32 {
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
