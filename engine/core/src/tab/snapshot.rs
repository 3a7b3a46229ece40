//! `GET /tabs/{id}/snapshot`: the accessibility tree (CDP Accessibility
//! domain) of every frame, stitched at the iframes, as YAML-like text with
//! interactive elements annotated `[e7]`, or as JSON.

use std::collections::HashMap;

use serde_json::{Value, json};

mod output;
mod tree;

use output::frame_ordinal;
pub use output::{Window, window};
pub use tree::RefsFor;

use super::refs::{CallOn, PageRefs, numbering_prelude, ref_text};
use crate::error::{Error, ErrorCode, Result};
use tree::{
    assign_numbers, attach_frames, ax_string, child_ids, collect_interactive, convert, count_refs,
    dom_node, frames_of,
};

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

impl PageRefs<'_> {
    /// The page's accessibility tree, every frame's stitched in at its
    /// iframe, with refs for elements (the interactive ones, or every one).
    pub async fn build_snapshot(&self, refs_for: RefsFor, source: SnapshotSource) -> Result<Built> {
        match source {
            SnapshotSource::Dom => self.build_dom_snapshot(refs_for, None).await,
            SnapshotSource::Accessibility => self.build_accessibility_snapshot(refs_for).await,
        }
    }

    /// Every listed frame's accessibility tree; a frame that went away
    /// between the listing and the read is left out.
    async fn read_ax_trees(&self, frame_list: &[(String, Option<String>)]) -> Vec<FrameTree> {
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
        trees
    }

    /// Refs for the elements each frame's tree wants numbered, by frame and
    /// backend node id; a frame whose registration fails gets none.
    async fn register_refs(
        &self,
        trees: &[FrameTree],
        per_frame: HashMap<usize, Vec<i64>>,
    ) -> HashMap<(usize, i64), u32> {
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
        numbers
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
        let trees = self.read_ax_trees(&frame_list).await;
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
        let numbers = self.register_refs(&trees, per_frame).await;
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
