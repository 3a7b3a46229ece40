//! Pages of the kinds real sites are made of, where input used to go
//! wrong (served at `/faithful/{name}`, tests/faithful.rs): a page that logs
//! every key and pointer event with its flags, links that wrap or are
//! rotated, custom checkboxes, inputs that take no typing, a navigation bar
//! with text between its links.

/// Logs every key event (key, code, keyCode, location, modifier flags) and
/// the button's pointer events into `window.log`.
pub const KEYS: &str = r#"<!doctype html><html><head><title>Keys</title><style>
body { margin: 0; font: 16px sans-serif; height: 3000px; }
#field { position: absolute; left: 20px; top: 20px; width: 300px; }
#btn { position: absolute; left: 20px; top: 100px; width: 120px; height: 40px; }
</style></head><body>
<input id="field" aria-label="Field">
<button id="btn">Button</button>
<script>
window.log = [];
const flags = (e) => ({ shift: e.shiftKey, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey });
for (const type of ['keydown', 'keyup']) {
  document.addEventListener(type, (e) => window.log.push(Object.assign(
    { type, key: e.key, code: e.code, keyCode: e.keyCode, location: e.location }, flags(e))), true);
}
for (const type of ['mousedown', 'mouseup', 'click']) {
  document.getElementById('btn').addEventListener(type, (e) => window.log.push(Object.assign({ type, button: e.button }, flags(e))));
}
document.addEventListener('wheel', (e) => window.log.push(Object.assign({ type: 'wheel' }, flags(e))), { passive: true });
</script></body></html>"#;

/// A link that starts at the end of one line and ends at the start of the
/// next (the centre of its bounding box is on neither part), and a wrapped
/// link in a rotated box. Each click records its link's id in `window.hits`.
pub const LINKS: &str = r#"<!doctype html><html><head><title>Links</title><style>
body { margin: 0; font: 20px/30px monospace; }
#para { position: absolute; left: 20px; top: 20px; width: 20ch; }
#turned { position: absolute; left: 420px; top: 160px; width: 20ch; transform: rotate(35deg); }
a { color: #03c; }
</style></head><body>
<p id="para"><span>aaaaaaaaaaaaaaaa </span><a id="wrapped" href="/second">bb cc</a><span> dddddddddddddddd</span></p>
<div id="turned"><span>aaaaaaaaaaaaaaaa </span><a id="rotated" href="/second">bb cc</a><span> dddddddddddddddd</span></div>
<script>
window.hits = [];
for (const a of document.querySelectorAll('a')) {
  a.addEventListener('click', (e) => { e.preventDefault(); window.hits.push(a.id); });
}
</script></body></html>"#;

/// Custom checkboxes and radios as UI kits make them: the `<input>` is
/// visually hidden (zero-sized and transparent, a 1 px clipped box, or not
/// rendered at all) and its `<label>` is what shows.
pub const CHECKBOXES: &str = r#"<!doctype html><html><head><title>Checkboxes</title><style>
body { margin: 0; font: 16px sans-serif; }
.kit input { position: absolute; opacity: 0; width: 0; height: 0; margin: 0; }
.kit .box { display: inline-block; width: 16px; height: 16px; border: 2px solid #333; vertical-align: middle; }
.kit input:checked + .box { background: #3a3; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
label { display: block; margin: 20px; cursor: pointer; }
</style></head><body>
<label class="kit"><input type="checkbox" id="terms"><span class="box"></span> I accept the terms</label>
<label><input type="radio" name="plan" id="plan-pro" class="sr-only"> Pro plan</label>
<input type="checkbox" id="news" style="display: none"><label for="news">Send me the newsletter</label>
</body></html>"#;

/// Inputs that take a value in a format rather than typing, each logging
/// its `input` and `change` events into `window.seen`.
pub const VALUES: &str = r#"<!doctype html><html><head><title>Values</title></head><body>
<input type="date" id="day" aria-label="Day">
<input type="time" id="at" aria-label="At">
<input type="datetime-local" id="when" aria-label="When">
<input type="month" id="month" aria-label="Month">
<input type="week" id="week" aria-label="Week">
<input type="color" id="colour" aria-label="Colour">
<input type="range" id="volume" min="0" max="10" aria-label="Volume">
<input type="number" id="count" aria-label="Count">
<input type="text" id="nothing" aria-label="Refuses" onbeforeinput="event.preventDefault()">
<script>
window.seen = [];
for (const el of document.querySelectorAll('input')) {
  for (const type of ['input', 'change']) el.addEventListener(type, () => window.seen.push(el.id + ':' + type + ':' + el.value));
}
</script></body></html>"#;

/// A navigation bar with text between its links, and a paragraph of mixed
/// text and emphasis: texts whose holder is in the tree too.
/// A single-page app's router: each click on `#next` pushes a new URL and
/// renders it, loading nothing.
pub const SPA: &str = r#"<!doctype html><html><head><title>Spa</title></head><body>
<button id="next" style="position:fixed;left:10px;top:10px;width:100px;height:40px">next</button>
<main id="view">home</main>
<script>
let page = 0;
document.getElementById('next').onclick = () => {
  page += 1;
  history.pushState({ page }, '', '/faithful/spa/' + page);
  document.getElementById('view').textContent = 'page ' + page;
};
</script></body></html>"#;

pub const NAV: &str = r#"<!doctype html><html><head><title>Nav</title></head><body>
<nav aria-label="Site"><a href="/">Home</a> | <a href="/second">Second</a> | <span>Plain</span></nav>
<main><h1>Heading</h1><p>Some <b>bold</b> words and <a href="/second">a link</a>.</p>
<button>Go</button></main>
</body></html>"#;

/// Opens a window while it loads, as ad and login pages do.
pub const OPENS_WHILE_LOADING: &str = r#"<!doctype html><html><head><title>Opener</title>
<script>window.open('/second', '_blank');</script></head><body><p>opened one</p></body></html>"#;

/// Opens an alert again as soon as one is answered, from its load on.
pub const ALERT_LOOP_ON_LOAD: &str = r#"<!doctype html><html><head><title>Loop</title></head>
<body><p id="text">a page that will not stop asking</p>
<script>addEventListener('load', () => { for (;;) alert('again'); });</script></body></html>"#;

pub fn faithful(name: &str) -> Option<&'static str> {
    Some(match name {
        "keys" => KEYS,
        "links" => LINKS,
        "checkboxes" => CHECKBOXES,
        "values" => VALUES,
        "nav" => NAV,
        "spa" => SPA,
        "opens-while-loading" => OPENS_WHILE_LOADING,
        "alert-loop-on-load" => ALERT_LOOP_ON_LOAD,
        _ => return None,
    })
}
