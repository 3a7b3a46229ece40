// The web UI's own script (no inline script: the CSP allows only files
// from /ui/assets). It shows a tab's frames, forwards a person's input to a
// tab they took over, moves through a timeline with the keyboard, and
// shows refused changes.
"use strict";

function flash(text) {
  const box = document.getElementById("flash");
  if (!box) return;
  box.textContent = text;
  box.classList.toggle("shown", Boolean(text));
}

// A refused change answers {"error": "..."}: say it.
document.addEventListener("htmx:responseError", (event) => {
  let text = event.detail.xhr.statusText;
  try {
    text = JSON.parse(event.detail.xhr.responseText).error || text;
  } catch (_) {}
  flash(text);
});
document.addEventListener("htmx:beforeRequest", () => flash(""));

// The live view: frames arrive on their own event stream as JSON
// {src, width, height, source}.
function liveView() {
  const view = document.getElementById("view");
  const img = document.getElementById("frame");
  if (!view || !img) return;
  let size = { width: 0, height: 0 };
  let frames = 0;
  const stream = new EventSource(view.dataset.frames);
  stream.addEventListener("frame", (event) => {
    const frame = JSON.parse(event.data);
    size = { width: frame.width, height: frame.height };
    img.src = frame.src;
    frames += 1;
    view.dataset.framesSeen = String(frames);
    view.dataset.lastFrameAt = String(Date.now());
    view.dataset.source = frame.source;
  });
  window.addEventListener("pagehide", () => stream.close());

  const takenOver = () => {
    const state = document.getElementById("tab-state");
    return state && state.dataset.takenOver === "true";
  };
  // Input goes in the page's CSS pixels, whatever size the frame is shown at.
  const point = (event) => {
    const rect = img.getBoundingClientRect();
    const width = size.width || img.naturalWidth;
    const height = size.height || img.naturalHeight;
    return {
      x: Math.max(0, ((event.clientX - rect.left) * width) / rect.width),
      y: Math.max(0, ((event.clientY - rect.top) * height) / rect.height),
    };
  };
  const modifiers = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  const buttons = ["left", "middle", "right", "back", "forward"];
  let queue = Promise.resolve();
  const send = (input) => {
    // In order, one at a time: a click's press must land before its release.
    queue = queue.then(() =>
      fetch(view.dataset.input, {
        method: "POST",
        headers: { "Content-Type": "application/json", "HX-Request": "true" },
        body: JSON.stringify(input),
      }).then(async (response) => {
        if (!response.ok) {
          let text = response.statusText;
          try { text = (await response.json()).error || text; } catch (_) {}
          flash(text);
        }
      }).catch((e) => flash(String(e))));
  };
  const mouse = (type, event, extra) => {
    if (!takenOver()) return;
    const { x, y } = point(event);
    send(Object.assign({
      type: "mouse", event: type, x, y,
      button: type === "mouseMoved" ? "none" : (buttons[event.button] || "left"),
      buttons: event.buttons, click_count: event.detail || 1, modifiers: modifiers(event),
    }, extra || {}));
  };
  let moving = null;
  img.addEventListener("pointerdown", (e) => {
    if (!takenOver()) return;
    e.preventDefault();
    view.focus();
    img.setPointerCapture(e.pointerId);
    mouse("mousePressed", e);
  });
  img.addEventListener("pointerup", (e) => mouse("mouseReleased", e));
  img.addEventListener("pointermove", (e) => {
    // Moves only while a button is held (drags), one per animation frame.
    if (!takenOver() || !e.buttons || moving) return;
    moving = requestAnimationFrame(() => { moving = null; mouse("mouseMoved", e); });
  });
  img.addEventListener("dragstart", (e) => e.preventDefault());
  img.addEventListener("contextmenu", (e) => { if (takenOver()) e.preventDefault(); });
  img.addEventListener("wheel", (e) => {
    if (!takenOver()) return;
    e.preventDefault();
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    mouse("mouseWheel", e, { button: "none", delta_x: e.deltaX * scale, delta_y: e.deltaY * scale });
  }, { passive: false });
  const key = (type, e) => {
    if (!takenOver()) return;
    e.preventDefault();
    const printable = e.key.length === 1;
    const input = { type: "key", event: type, key: e.key, code: e.code, key_code: e.keyCode, modifiers: modifiers(e) };
    if (type === "keyDown") {
      input.event = printable && !e.ctrlKey && !e.metaKey ? "keyDown" : "rawKeyDown";
      if (input.event === "keyDown") input.text = e.key === "Enter" ? "\r" : e.key;
      if (e.key === "Enter") input.text = "\r";
    }
    send(input);
  };
  view.addEventListener("keydown", (e) => key("keyDown", e));
  view.addEventListener("keyup", (e) => key("keyUp", e));
  view.addEventListener("paste", (e) => {
    if (!takenOver()) return;
    e.preventDefault();
    send({ type: "text", text: e.clipboardData.getData("text") });
  });
}

// The timeline: the chosen action is marked; ↑/↓ (or k/j) choose another.
function timeline() {
  const list = document.getElementById("actions");
  if (!list) return;
  const choose = (item) => {
    if (!item) return;
    list.querySelectorAll("li.selected").forEach((li) => li.classList.remove("selected"));
    item.classList.add("selected");
    item.scrollIntoView({ block: "nearest" });
    const link = item.querySelector("a");
    if (link) htmx.trigger(link, "click");
  };
  list.addEventListener("click", (e) => {
    const item = e.target.closest("li.action");
    if (!item) return;
    list.querySelectorAll("li.selected").forEach((li) => li.classList.remove("selected"));
    item.classList.add("selected");
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea")) return;
    const items = Array.from(list.querySelectorAll("li.action"));
    const at = items.findIndex((li) => li.classList.contains("selected"));
    if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); choose(items[Math.min(items.length - 1, at + 1)]); }
    if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); choose(items[Math.max(0, at - 1)]); }
  });
}

liveView();
timeline();
