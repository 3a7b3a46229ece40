//! Element refs: one id space for snapshot refs (`e7`), screenshot labels
//! (`7`) and `GET /state` indices (`7`).
//!
//! A ref is bound to the element itself: each frame has an isolated world
//! (invisible to the page's script) holding `number -> WeakRef(element)`.
//! Numbers are never reused within a tab, and the world dies with its
//! document, so a ref either names its own element or fails with
//! `STALE_REF`; it can never act on another element.

use futures::StreamExt;
use serde_json::{Value, json};

use super::observation::{Observation, RefTable};
pub use super::session::CallOn;
use super::session::PageSession;
use crate::error::{Error, ErrorCode, Result};
use crate::plugin::{ElementBox, HostError, HostResult, Located, Rect, Target};

/// `e7` -> (None, 7); `f1e7` -> (Some(1), 7).
pub fn parse_ref(text: &str) -> Option<(Option<u32>, u32)> {
    let (frame, rest) = match text.strip_prefix('f') {
        Some(rest) => {
            let split = rest.find('e')?;
            (Some(rest[..split].parse().ok()?), &rest[split..])
        }
        None => (None, text),
    };
    let n: u32 = rest.strip_prefix('e')?.parse().ok()?;
    (n > 0).then_some((frame, n))
}

/// The ref text for number `n` in a frame (`e7` in the top document).
pub fn ref_text(frame_ordinal: u32, n: u32) -> String {
    if frame_ordinal == 0 {
        format!("e{n}")
    } else {
        format!("f{frame_ordinal}e{n}")
    }
}

/// The start of every script that hands out numbers (its first parameter
/// is `next`): the world's registry, created on first use, and
/// `numberOf(el)`, which registers an element once.
macro_rules! numbering_prelude {
    () => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/tab/js/numbering.js"
        ))
    };
}
pub(crate) use numbering_prelude;

/// The live element a number names, if any (`byNumber(n)`).
macro_rules! lookup_prelude {
    () => {
        "const byNumber = (n) => { const R = globalThis.__wabpRefs; const w = R && R.byId.get(n); return w ? w.deref() : undefined; };"
    };
}
pub(crate) use lookup_prelude;

/// `(next, ...elements) -> { ids, next }`: numbers for elements, new ones
/// from `next` on.
const REGISTER_FN: &str = concat!(
    "function(next, ...els) {",
    numbering_prelude!(),
    r#"  // Text is named by the element that holds it.
  const ids = els.map(el => !el ? 0 : el.nodeType === 1 ? numberOf(el)
    : (el.nodeType === 3 && el.parentElement) ? numberOf(el.parentElement) : 0);
  return { ids, next };
}"#
);

/// The point to act on after scrolling the element into view, or why it
/// can't be acted on. Candidates are the centres of the element's boxes (a
/// link wrapped over two lines has one per line; a rotated box's centre is
/// its bounding rect's), clipped to the viewport, then the centre of the
/// whole: the first one a hit test finds on the element wins, so a click
/// never lands beside its target. An input with no usable box of its own
/// (hidden, zero-sized, or a 1 px "visually hidden" custom checkbox) is
/// reached through a visible `<label>` of its, as a user clicks it.
const LOCATE_FN: &str = include_str!("js/locate.js");

/// Focus, then select everything or put the caret at the end.
const FOCUS_FN: &str = include_str!("js/focus.js");

/// Sets the value of an input that takes no typing, as a picker would. The
/// prototype's setter, not the element's own `value`: a framework that
/// tracks the value on the element (React) would see no change otherwise.
const SET_VALUE_FN: &str = include_str!("js/set_value.js");

/// An element's value, or the text of an editable one.
const VALUE_OF_FN: &str = include_str!("js/value_of.js");

/// First match of a selector, searching open shadow roots when the document
/// itself has none.
const SELECT_FN: &str = include_str!("js/query.js");

/// The refs of one tab, over the two components they need: the page
/// session (to reach the page) and the observation (the ref table).
pub struct PageRefs<'a> {
    session: &'a PageSession,
    observation: &'a Observation,
}

impl<'a> PageRefs<'a> {
    pub fn new(session: &'a PageSession, observation: &'a Observation) -> Self {
        PageRefs {
            session,
            observation,
        }
    }

    pub fn session(&self) -> &'a PageSession {
        self.session
    }

    pub(super) fn with_refs<T>(&self, f: impl FnOnce(&mut RefTable) -> T) -> T {
        self.observation.with_refs(f)
    }

    /// The frame's isolated world, created on first use.
    pub async fn frame_world(&self, frame_id: &str) -> Result<i64> {
        if let Some(id) = self.with_refs(|t| t.world(frame_id)) {
            return Ok(id);
        }
        let created = self
            .session
            .raw_in(
                Some(frame_id),
                "Page.createIsolatedWorld",
                json!({ "frameId": frame_id, "worldName": super::session::ENGINE_WORLD }),
            )
            .await?;
        let id = created
            .get("executionContextId")
            .and_then(Value::as_i64)
            .ok_or_else(|| Error::internal("createIsolatedWorld returned no context"))?;
        self.with_refs(|t| t.set_world(frame_id, id));
        Ok(id)
    }

    /// Numbers for elements given by backend node id, registering new ones.
    /// Unresolvable nodes get `None`.
    pub async fn register_backend_nodes(
        &self,
        frame_id: &str,
        backend_ids: &[i64],
    ) -> Result<Vec<Option<u32>>> {
        if backend_ids.is_empty() {
            return Ok(Vec::new());
        }
        let world = self.frame_world(frame_id).await?;
        let known: Vec<Option<u32>> = self.with_refs(|t| {
            backend_ids
                .iter()
                .map(|&b| t.known(frame_id, b, world))
                .collect()
        });
        let unknown: Vec<i64> = backend_ids
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(&b, _)| b)
            .collect();
        if unknown.is_empty() {
            return Ok(known);
        }
        let fresh = self.register_unknown(frame_id, world, &unknown).await?;
        let mut fresh = fresh.into_iter();
        Ok(known
            .into_iter()
            .map(|k| k.or_else(|| fresh.next().flatten()))
            .collect())
    }

    async fn register_unknown(
        &self,
        frame_id: &str,
        world: i64,
        backend_ids: &[i64],
    ) -> Result<Vec<Option<u32>>> {
        let group = format!("wabp-register-{}", self.session.tab_id());
        // Resolving one node per round trip is the cost of binding a ref to
        // the node itself; pipeline them.
        let objects: Vec<Value> = futures::stream::iter(backend_ids.iter().copied())
            .map(|id| {
                self.session.raw_in(
                    Some(frame_id),
                    "DOM.resolveNode",
                    json!({ "backendNodeId": id, "executionContextId": world, "objectGroup": group }),
                )
            })
            .buffered(256)
            .map(|r| {
                r.ok()
                    .and_then(|v| v.pointer("/object/objectId").cloned())
                    .map(|id| json!({ "objectId": id }))
                    .unwrap_or_else(|| json!({ "value": null }))
            })
            .collect()
            .await;
        let next = self.with_refs(|t| t.next());
        let mut arguments = vec![json!({ "value": next })];
        arguments.extend(objects);
        let result = self
            .session
            .call_function(
                Some(frame_id),
                CallOn::World(world),
                REGISTER_FN,
                arguments,
                true,
            )
            .await;
        let _ = self
            .session
            .raw_in(
                Some(frame_id),
                "Runtime.releaseObjectGroup",
                json!({ "objectGroup": group }),
            )
            .await;
        let value = result?;
        let value = value.get("value").cloned().unwrap_or(Value::Null);
        let ids: Vec<u32> = value
            .get("ids")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_u64().unwrap_or(0) as u32).collect())
            .unwrap_or_default();
        let new_next = value
            .get("next")
            .and_then(Value::as_u64)
            .unwrap_or(next as u64) as u32;
        let pairs: Vec<(u32, Option<i64>)> = ids
            .iter()
            .zip(backend_ids)
            .map(|(&n, &b)| (n, Some(b)))
            .collect();
        self.with_refs(|t| t.record(frame_id, world, &pairs, new_next));
        Ok(ids.into_iter().map(|n| (n > 0).then_some(n)).collect())
    }

    /// Runs `function(next, ...arguments)` in the main frame's refs world.
    /// The function numbers what it reports with `numberOf` (see
    /// `numbering_prelude!`) and answers `{ elements: [{ index, ... }],
    /// next, ... }` (or the bare numbers, `numbers: [n, ...]`); the numbers
    /// are recorded here and `next` is dropped.
    /// A world can die with its document between lookup and call: retry once
    /// in a fresh one.
    pub async fn number_in_main_world(
        &self,
        function: &str,
        arguments: Vec<Value>,
    ) -> Result<Value> {
        let frame = self.session.main_frame_or_target();
        self.number_in_frame(&frame, function, arguments).await
    }

    /// [`Self::number_in_main_world`] in frame `frame`'s refs world (an
    /// out-of-process frame through its own session). Numbers come from
    /// the tab's one counter, so they are unique across frames.
    pub async fn number_in_frame(
        &self,
        frame: &str,
        function: &str,
        arguments: Vec<Value>,
    ) -> Result<Value> {
        let frame = frame.to_string();
        let mut attempt = 0;
        loop {
            let world = self.frame_world(&frame).await?;
            let next = self.with_refs(|t| t.next());
            let mut all = vec![json!({ "value": next })];
            all.extend(arguments.iter().cloned());
            match self
                .session
                .call_function(Some(&frame), CallOn::World(world), function, all, true)
                .await
            {
                Ok(v) => {
                    let mut value = v.get("value").cloned().unwrap_or(Value::Null);
                    let listed = value
                        .get("elements")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.get("index").and_then(Value::as_u64));
                    let bare = value
                        .get("numbers")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_u64);
                    let numbers: Vec<(u32, Option<i64>)> =
                        listed.chain(bare).map(|n| (n as u32, None)).collect();
                    let next = value.get("next").and_then(Value::as_u64).unwrap_or(0) as u32;
                    self.with_refs(|t| t.record(&frame, world, &numbers, next));
                    if let Some(o) = value.as_object_mut() {
                        o.remove("next");
                    }
                    return Ok(value);
                }
                Err(e) if attempt == 0 && e.code != ErrorCode::EvaluationError => {
                    self.with_refs(|t| t.forget_world(&frame, world));
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The remote object of a target's element, or why there is none.
    async fn target_object(&self, target: &Target) -> HostResult<(String, String)> {
        match target {
            Target::Ref(text) => {
                let (frame_ordinal, n) = parse_ref(text).ok_or_else(|| {
                    HostError::Invalid(format!(
                        "ref {text:?} is not a ref; refs look like e7 (or f1e7 inside a frame)"
                    ))
                })?;
                let (entry, next) = self.with_refs(|t| (t.entry(n), t.next()));
                let Some(entry) = entry else {
                    return Err(if n < next {
                        HostError::StaleRef(format!(
                            "ref {text} is stale: its page or frame has navigated since; take a new snapshot"
                        ))
                    } else {
                        HostError::Invalid(format!(
                            "no element has ref {text} in tab {}; refs come from a snapshot of it or its screenshot labels",
                            self.session.tab_id()
                        ))
                    });
                };
                if let Some(f) = frame_ordinal {
                    let actual = self.with_refs(|t| t.ordinal_of(&entry.frame_id));
                    if f != actual {
                        return Err(HostError::Invalid(format!(
                            "ref {text} names frame f{f}, but element {n} is in {}",
                            if actual == 0 {
                                "the top document".to_string()
                            } else {
                                format!("frame f{actual}")
                            }
                        )));
                    }
                }
                let found = self
                    .session
                    .call_function(
                        Some(&entry.frame_id),
                        CallOn::World(entry.context_id),
                        concat!(
                            "function(n) { ",
                            lookup_prelude!(),
                            " const el = byNumber(n); return el && el.isConnected ? el : null; }"
                        ),
                        vec![json!({ "value": n })],
                        false,
                    )
                    .await;
                let stale = || {
                    HostError::StaleRef(format!(
                        "ref {text} is stale: its element is no longer in the page; take a new snapshot"
                    ))
                };
                match found {
                    Ok(object) => match object.get("objectId").and_then(Value::as_str) {
                        Some(id) => Ok((id.to_string(), entry.frame_id)),
                        None => Err(stale()),
                    },
                    // The world died with its document.
                    Err(_) => {
                        self.with_refs(|t| t.forget_world(&entry.frame_id, entry.context_id));
                        Err(stale())
                    }
                }
            }
            Target::Selector(selector) => {
                let frame = self.session.main_frame_or_target();
                let world = self.frame_world(&frame).await?;
                let object = match self
                    .session
                    .call_function(
                        Some(&frame),
                        CallOn::World(world),
                        SELECT_FN,
                        vec![json!({ "value": selector })],
                        false,
                    )
                    .await
                {
                    Ok(o) => o,
                    Err(e) => {
                        self.with_refs(|t| t.forget_world(&frame, world));
                        return Err(e.into());
                    }
                };
                if object.get("subtype").and_then(Value::as_str) == Some("null") {
                    return Err(HostError::SelectorNotFound(format!(
                        "no element matches selector {selector:?}"
                    )));
                }
                if object.get("subtype").and_then(Value::as_str) != Some("node") {
                    let id = object.get("objectId").and_then(Value::as_str).unwrap_or("");
                    let detail = self
                        .session
                        .call_function(
                            Some(&frame),
                            CallOn::Object(id),
                            "function() { return this.error; }",
                            vec![],
                            true,
                        )
                        .await
                        .ok()
                        .and_then(|v| v.get("value").and_then(Value::as_str).map(str::to_string))
                        .unwrap_or_else(|| format!("invalid selector {selector:?}"));
                    return Err(HostError::Invalid(detail));
                }
                let id = object.get("objectId").and_then(Value::as_str).unwrap_or("");
                Ok((id.to_string(), frame))
            }
        }
    }

    fn describe_target(target: &Target) -> String {
        match target {
            Target::Ref(r) => format!("ref {r}"),
            Target::Selector(s) => format!("selector {s:?}"),
        }
    }

    /// Runs a page function on the target's element and reads its answer:
    /// `{state, tag, rect, text, ...}`. A `stale` state is the same error
    /// for every caller; the rect is shifted into top-level coordinates.
    async fn run_on_target(
        &self,
        target: &Target,
        function: &str,
        arguments: Vec<Value>,
    ) -> HostResult<TargetAnswer> {
        let (object, frame) = self.target_object(target).await?;
        let value = self
            .session
            .call_function(
                Some(&frame),
                CallOn::Object(&object),
                function,
                arguments,
                true,
            )
            .await?;
        let value = value.get("value").cloned().unwrap_or(Value::Null);
        let what = Self::describe_target(target);
        if value.get("state").and_then(Value::as_str) == Some("stale") {
            return Err(HostError::StaleRef(format!(
                "{what} is stale: its element left the page; take a new snapshot"
            )));
        }
        // Inside a frame the script sees frame coordinates: shift by where
        // the frame's content box sits in the top-level viewport.
        let offset = if value.get("state").and_then(Value::as_str) == Some("ok")
            && Some(&frame) != self.session.main_frame().as_ref()
        {
            self.frame_offset(&frame).await?
        } else {
            (0.0, 0.0)
        };
        Ok(TargetAnswer {
            value,
            what,
            offset,
        })
    }

    /// The text of a target's element (`innerText`, else `textContent`).
    pub async fn text_of_target(&self, target: &Target) -> HostResult<String> {
        let answer = self
            .run_on_target(
                target,
                "function() { if (!this.isConnected) return { state: 'stale' }; return { state: 'ok', text: String(this.innerText ?? this.textContent ?? '') }; }",
                vec![],
            )
            .await?;
        Ok(answer
            .value
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string())
    }

    /// The visible box of a target's element in top-level viewport
    /// coordinates, scrolled into view first when it is outside.
    pub async fn region_of_target(&self, target: &Target) -> HostResult<crate::capture::Clip> {
        const REGION_FN: &str = r#"function() {
  if (!this.isConnected) return { state: 'stale' };
  let r = this.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return { state: 'hidden', tag: this.tagName.toLowerCase() };
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
    this.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    r = this.getBoundingClientRect();
  }
  const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
  const right = Math.min(r.right, innerWidth), bottom = Math.min(r.bottom, innerHeight);
  if (right <= left || bottom <= top) return { state: 'hidden', tag: this.tagName.toLowerCase() };
  return { state: 'ok', tag: this.tagName.toLowerCase(), rect: { x: left, y: top, width: right - left, height: bottom - top } };
}"#;
        let answer = self.run_on_target(target, REGION_FN, vec![]).await?;
        if answer.state() != "ok" {
            return Err(HostError::ElementNotVisible(format!(
                "{} ({}) has no visible box to capture",
                answer.what,
                answer.tag()
            )));
        }
        let rect = answer.element_box().rect;
        Ok(crate::capture::Clip {
            x: rect.x,
            y: rect.y,
            width: rect.width,
            height: rect.height,
        })
    }

    pub async fn locate_target(&self, target: &Target) -> HostResult<Located> {
        let answer = self.run_on_target(target, LOCATE_FN, vec![]).await?;
        let (value, what, tag) = (&answer.value, &answer.what, answer.tag());
        match answer.state() {
            "ok" => {}
            "hidden" | "outside" => {
                return Err(HostError::ElementNotVisible(format!(
                    "{what} ({tag}) is not visible: it has no rendered box or is hidden"
                )));
            }
            "closed_option" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                return Err(HostError::ElementNotVisible(format!(
                    "{what} is an option of a closed <select>, which shows no options: click the select, then answer its select_open popup with indices [{index}]"
                )));
            }
            "covered" => {
                let by = value
                    .get("covering")
                    .and_then(Value::as_str)
                    .unwrap_or("another element");
                return Err(HostError::ElementNotInteractable(format!(
                    "{what} ({tag}) is covered by {by} wherever it shows; a click there would reach that instead"
                )));
            }
            _ => return Err(HostError::Failed(format!("could not locate {what}"))),
        }
        let number = |k: &str| value.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        Ok(Located {
            x: number("x") + answer.offset.0,
            y: number("y") + answer.offset.1,
            element: answer.element_box(),
        })
    }

    /// Top-left of a child frame's content box in top-level viewport
    /// coordinates. Box models are in the coordinates of their renderer's
    /// root frame: the page's is the top-level viewport; an out-of-process
    /// frame's root adds where its own `<iframe>` sits, and so on up.
    pub async fn frame_offset(&self, frame_id: &str) -> Result<(f64, f64)> {
        let targets = self.session.frame_targets();
        let (mut x, mut y) = (0.0, 0.0);
        let mut frame = frame_id.to_string();
        // Frames nest only so deep.
        for _ in 0..32 {
            // The owner `<iframe>` lives where the frame's parent renders: a
            // frame target's root is owned by its parent's renderer; any
            // other frame by its own.
            let owner_in = match targets {
                Some(t) if t.is_root(&frame) => t.parent_of_root(&frame).await,
                _ => Some(frame.clone()),
            };
            let owner = self
                .session
                .raw_in(
                    owner_in.as_deref(),
                    "DOM.getFrameOwner",
                    json!({ "frameId": frame }),
                )
                .await?;
            let backend = owner
                .get("backendNodeId")
                .and_then(Value::as_i64)
                .ok_or_else(|| Error::internal("frame has no owner element"))?;
            let model = self
                .session
                .raw_in(
                    owner_in.as_deref(),
                    "DOM.getBoxModel",
                    json!({ "backendNodeId": backend }),
                )
                .await?;
            let content = model
                .pointer("/model/content")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::internal("frame owner has no box"))?;
            let at = |i: usize| content.get(i).and_then(Value::as_f64).unwrap_or(0.0);
            x += at(0);
            y += at(1);
            let renderer = owner_in
                .as_deref()
                .and_then(|f| targets.and_then(|t| t.session_of(f)));
            match renderer.and_then(|s| targets.and_then(|t| t.root_of_session(&s))) {
                Some(root) => frame = root,
                None => return Ok((x, y)),
            }
        }
        Ok((x, y))
    }

    pub async fn focus_target(&self, target: &Target, select_all: bool) -> HostResult<ElementBox> {
        let answer = self
            .run_on_target(target, FOCUS_FN, vec![json!({ "value": select_all })])
            .await?;
        let (value, what, tag) = (&answer.value, &answer.what, answer.tag());
        match answer.state() {
            "ok" => Ok(answer.element_box()),
            "not_editable" => {
                let kind = value
                    .get("type")
                    .and_then(Value::as_str)
                    .map(|t| format!(" type={t}"))
                    .unwrap_or_default();
                Err(HostError::ElementNotInteractable(format!(
                    "{what} is a {tag}{kind}, not a text field or editable element; fill replaces text only (use click; a <select> opens as a select prompt, answered by its option indices)"
                )))
            }
            "disabled" => Err(HostError::ElementNotInteractable(format!(
                "{what} ({tag}) is disabled or read-only"
            ))),
            "not_focusable" => Err(HostError::ElementNotInteractable(format!(
                "{what} ({tag}) can't take focus"
            ))),
            _ => Err(HostError::Failed(format!("could not focus {what}"))),
        }
    }

    pub async fn set_value_on(&self, target: &Target, value: &str) -> HostResult<bool> {
        let answer = self
            .run_on_target(target, SET_VALUE_FN, vec![json!({ "value": value })])
            .await?;
        let (value_json, what, tag) = (&answer.value, &answer.what, answer.tag());
        let field = |k: &str| value_json.get(k).and_then(Value::as_str).unwrap_or("");
        match answer.state() {
            "ok" => Ok(true),
            "text" => Ok(false),
            "disabled" => Err(HostError::ElementNotInteractable(format!(
                "{what} ({tag}) is disabled or read-only"
            ))),
            "malformed" => Err(HostError::Invalid(format!(
                "{what} is an <input type={}>, which takes a value as {}: {} is not one",
                field("type"),
                field("format"),
                crate::error::cut(&serde_json::to_string(value).unwrap_or_default())
            ))),
            _ => Err(HostError::Failed(format!(
                "could not set the value of {what}"
            ))),
        }
    }

    pub async fn value_of(&self, target: &Target) -> HostResult<Option<String>> {
        let answer = self.run_on_target(target, VALUE_OF_FN, vec![]).await?;
        match answer.state() {
            "ok" => Ok(answer
                .value
                .get("value")
                .and_then(Value::as_str)
                .map(str::to_string)),
            _ => Err(HostError::Failed(format!(
                "could not read the value of {}",
                answer.what
            ))),
        }
    }

    pub async fn dispatch_change_on(&self, target: &Target) -> HostResult<()> {
        let (object, frame) = self.target_object(target).await?;
        self.session
            .call_function(
                Some(&frame),
                CallOn::Object(&object),
                "function() { this.dispatchEvent(new Event('change', { bubbles: true })); }",
                vec![],
                true,
            )
            .await?;
        Ok(())
    }
}

/// A page function's answer about a target element.
struct TargetAnswer {
    value: Value,
    /// "ref e7" / "selector \"#x\"", for messages.
    what: String,
    /// Frame content offset in the top-level viewport.
    offset: (f64, f64),
}

impl TargetAnswer {
    fn state(&self) -> &str {
        self.value
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn tag(&self) -> &str {
        self.value
            .get("tag")
            .and_then(Value::as_str)
            .unwrap_or("element")
    }

    fn element_box(&self) -> ElementBox {
        let rect = self.value.get("rect").cloned().unwrap_or(Value::Null);
        let number = |k: &str| rect.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        ElementBox {
            rect: Rect {
                x: number("x") + self.offset.0,
                y: number("y") + self.offset.1,
                width: number("width"),
                height: number("height"),
            },
            tag: self.tag().to_string(),
            visible: true,
            in_viewport: true,
            text: self
                .value
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_parse_and_print() {
        assert_eq!(parse_ref("e7"), Some((None, 7)));
        assert_eq!(parse_ref("f2e13"), Some((Some(2), 13)));
        for bad in ["7", "e", "e0", "fe1", "x1", "e-1", "f1", ""] {
            assert_eq!(parse_ref(bad), None, "{bad}");
        }
        assert_eq!(ref_text(0, 7), "e7");
        assert_eq!(ref_text(3, 7), "f3e7");
    }
}
