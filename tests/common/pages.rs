//! Fixture pages served on 127.0.0.1.

pub const MAIN: &str = r#"<!doctype html><html><head><title>Fixture</title>
<style>body { margin: 0; font: 16px sans-serif; height: 2400px; } #btn { position: absolute; left: 100px; top: 100px; width: 160px; height: 50px; }
#name { position: absolute; left: 100px; top: 200px; width: 200px; } #box { position: absolute; left: 400px; top: 100px; width: 200px; height: 100px; overflow: auto; }
#fetch { position: absolute; left: 100px; top: 300px; } #link { position: absolute; left: 100px; top: 400px; }</style></head>
<body>
<button id="btn">Click me</button>
<input id="name" placeholder="Your name">
<div id="box"><div style="height: 600px">scrollable content</div></div>
<button id="fetch">Load data</button>
<a id="link" href="/second">Second page</a>
<div id="out" style="position:absolute; left: 100px; top: 500px">idle</div>
<div id="data" style="position:absolute; left: 100px; top: 540px"></div>
<script>
window.events = [];
const btn = document.getElementById('btn');
let clicks = 0;
btn.addEventListener('click', e => { clicks++; document.getElementById('out').textContent = 'clicked ' + clicks; window.events.push({ type: 'click', shift: e.shiftKey, detail: e.detail }); });
btn.addEventListener('dblclick', () => window.events.push({ type: 'dblclick' }));
btn.addEventListener('contextmenu', e => { e.preventDefault(); window.events.push({ type: 'contextmenu' }); });
document.addEventListener('mousemove', e => { window.lastMove = [e.clientX, e.clientY]; });
document.getElementById('name').addEventListener('keydown', e => window.events.push({ type: 'keydown', key: e.key, ctrl: e.ctrlKey }));
document.getElementById('fetch').addEventListener('click', () => {
  fetch('/api/slow?ms=400').then(r => r.json()).then(d => { document.getElementById('data').textContent = d.message; });
});
</script></body></html>"#;

/// What drags, buttons held, shortcuts, inserted text and a hover delay do:
/// an HTML5 draggable and its drop zone, a box moved by pointer events, a
/// slider, a text field, a textarea, a paragraph to select, a tooltip shown
/// 300 ms after the pointer enters its button.
pub const INPUT_LAB: &str = r#"<!doctype html><html><head><title>Input lab</title><style>
body { margin: 0; font: 16px sans-serif; }
#src { position: absolute; left: 20px; top: 20px; width: 80px; height: 80px; background: #c33; }
#dst { position: absolute; left: 300px; top: 20px; width: 120px; height: 120px; background: #ccc; }
#box { position: absolute; left: 500px; top: 20px; width: 60px; height: 60px; background: #33c; touch-action: none; }
#range { position: absolute; left: 20px; top: 180px; width: 200px; margin: 0; }
#field { position: absolute; left: 20px; top: 230px; width: 200px; }
#area { position: absolute; left: 300px; top: 230px; width: 300px; height: 80px; }
#para { position: absolute; left: 20px; top: 340px; margin: 0; font: 20px monospace; }
#tip-btn { position: absolute; left: 20px; top: 400px; width: 120px; height: 40px; }
#tip { position: absolute; left: 160px; top: 400px; display: none; }
</style></head><body>
<div id="src" draggable="true">drag me</div>
<div id="dst">drop here</div>
<div id="box"></div>
<input id="range" type="range" min="0" max="100" value="0">
<input id="field" value="hello world">
<textarea id="area"></textarea>
<p id="para">select some text here</p>
<button id="tip-btn">hover me</button>
<div id="tip">the tooltip</div>
<script>
window.log = [];
const src = document.getElementById('src'), dst = document.getElementById('dst'), box = document.getElementById('box');
src.addEventListener('dragstart', e => { log.push('dragstart'); e.dataTransfer.setData('text/plain', 'payload'); });
src.addEventListener('dragend', () => log.push('dragend'));
dst.addEventListener('dragover', e => e.preventDefault());
dst.addEventListener('drop', e => { e.preventDefault(); log.push('drop:' + e.dataTransfer.getData('text/plain')); });
let grab = null;
box.addEventListener('pointerdown', e => { grab = [e.clientX - box.offsetLeft, e.clientY - box.offsetTop]; box.setPointerCapture(e.pointerId); });
box.addEventListener('pointermove', e => { if (grab && e.buttons & 1) { box.style.left = (e.clientX - grab[0]) + 'px'; box.style.top = (e.clientY - grab[1]) + 'px'; } });
box.addEventListener('pointerup', () => { grab = null; });
document.addEventListener('keydown', e => log.push('keydown:' + e.key + (e.ctrlKey ? '+ctrl' : '')));
document.getElementById('area').addEventListener('keydown', () => log.push('area-key'));
const tipBtn = document.getElementById('tip-btn');
let tipTimer = null;
tipBtn.addEventListener('mouseenter', () => { tipTimer = setTimeout(() => { document.getElementById('tip').style.display = 'block'; }, 300); });
tipBtn.addEventListener('mouseleave', () => { clearTimeout(tipTimer); document.getElementById('tip').style.display = 'none'; });
</script></body></html>"#;

/// A 6,000 px page with a red band on top and a blue one at the bottom, a
/// green square, a button that navigates 300 ms after its click, one that
/// loads two slow requests 200 ms after its click, and a video.
pub const SURFACE: &str = r#"<!doctype html><html><head><title>Surface</title><style>
body { margin: 0; height: 6000px; background: #fff; }
#top { position: absolute; left: 0; top: 0; width: 100%; height: 100px; background: rgb(255, 0, 0); }
#bottom { position: absolute; left: 0; top: 5900px; width: 100%; height: 100px; background: rgb(0, 0, 255); }
#green { position: absolute; left: 400px; top: 150px; width: 60px; height: 60px; background: rgb(0, 255, 0); }
button { position: absolute; left: 20px; width: 200px; height: 40px; }
</style></head><body>
<div id="top"></div><div id="bottom"></div><div id="green"></div>
<button id="later" style="top: 150px" onclick="setTimeout(() => { location.href = '/second'; }, 300)">navigate later</button>
<button id="load" style="top: 200px" onclick="setTimeout(() => Promise.all([fetch('/api/slow?ms=300'), fetch('/api/slow?ms=600')]).then(() => { document.title = 'loaded'; }), 200)">load later</button>
<video id="video" style="position: absolute; left: 20px; top: 260px; width: 10px; height: 10px"></video>
</body></html>"#;

pub const SECOND: &str = r#"<!doctype html><html><head><title>Second</title></head><body><h1>Second page</h1><p class="note">Hello from the second page</p></body></html>"#;

pub const DIALOG: &str = r#"<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="alert" style="position:absolute; left: 50px; top: 50px; width: 120px; height: 40px" onclick="alert('Hello there')">Alert</button>
<button id="confirm" style="position:absolute; left: 50px; top: 120px; width: 120px; height: 40px" onclick="window.answer = confirm('Sure?')">Confirm</button>
</body></html>"#;

pub const MARKUP: &str = r#"<!doctype html><html><head><title>Markup</title><style>body { margin: 0; background: #fff; }</style></head><body>
<button id="b" style="position:absolute; left: 300px; top: 300px; width: 200px; height: 80px; background: #fff; border: 0">B</button>
</body></html>"#;

/// Timers, the clock, a CSS animation and a rAF animation, all visible.
pub const TIMER: &str = r#"<!doctype html><html><head><title>Timer</title><style>
body { margin: 0; font: 16px monospace; }
#spin { position: absolute; left: 300px; top: 200px; width: 80px; height: 80px; background: #c33; animation: spin 1s linear infinite; }
#slide { position: absolute; left: 0; top: 350px; width: 40px; height: 40px; background: #33c; }
@keyframes spin { from { transform: rotate(0deg); } to { transform: rotate(360deg); } }
</style></head><body>
<div id="state">count=0</div><div id="spin"></div><div id="slide"></div>
<script>
window.count = 0; window.frames = 0;
const started = Date.now();
setInterval(() => { window.count++; document.getElementById('state').textContent = 'count=' + window.count + ' now=' + Date.now() + ' elapsed=' + (Date.now() - started); }, 100);
function frame(t) { window.frames++; document.getElementById('slide').style.left = ((t / 4) % 800) + 'px'; requestAnimationFrame(frame); }
requestAnimationFrame(frame);
</script></body></html>"#;

/// Buttons whose clicks set work off later on the page's clock: a timer
/// that starts an 800 ms request, a timer that navigates, a timer seconds
/// away, a CSS transition; and a link.
pub const SETTLE: &str = r#"<!doctype html><html><head><title>Settle</title><style>
button, a { position: absolute; left: 20px; width: 200px; height: 36px; display: block; }
#fade { position: absolute; left: 300px; top: 20px; width: 100px; height: 100px; background: rgb(0, 0, 255); transition: background-color 400ms linear; }
#fade.on { background: rgb(255, 0, 0); }
</style></head><body>
<button id="fetch-later" style="top: 20px" onclick="setTimeout(() => fetch('/api/slow?ms=800').then(r => r.json()).then(j => { document.getElementById('out').textContent = j.message; }), 100)">fetch later</button>
<button id="go-later" style="top: 70px" onclick="setTimeout(() => { location.href = '/second'; }, 100)">navigate later</button>
<button id="far" style="top: 120px" onclick="window.t0 = Date.now(); setTimeout(() => { window.t1 = Date.now(); }, 4000)">timer in 4 s</button>
<button id="fade-on" style="top: 170px" onclick="document.getElementById('fade').classList.add('on')">fade</button>
<a id="link" style="top: 220px" href="/second">a link</a>
<button id="alert-later" style="top: 320px" onclick="setTimeout(() => { alert('later'); document.getElementById('out').textContent = 'alert answered'; }, 50)">alert later</button>
<div id="out" style="position: absolute; left: 20px; top: 270px">nothing yet</div>
<div id="fade"></div>
</body></html>"#;

/// A file input, selects, popups, a download link and a long page.
pub const EVENTS: &str = r#"<!doctype html><html><head><title>Events</title><style>
body { margin: 0; font: 16px sans-serif; height: 3000px; }
.at { position: absolute; left: 40px; width: 220px; height: 36px; }
</style></head><body>
<input type="file" id="file" class="at" style="top: 20px" accept=".txt,.csv,image/*">
<input type="file" id="files" class="at" style="top: 70px" multiple>
<select id="single" class="at" style="top: 120px"><option>Apple</option><option>Banana</option><option>Cherry</option></select>
<select id="multi" class="at" style="top: 170px; height: 80px" multiple><option>Red</option><option>Green</option><option>Blue</option></select>
<button id="openwin" class="at" style="top: 270px" onclick="window.open('/closer', 'win', 'width=400,height=300')">Open window</button>
<a id="newtab" class="at" style="top: 320px; display: block" href="/second" target="_blank">New tab</a>
<a id="download" class="at" style="top: 370px; display: block" href="/download/report.txt">Download</a>
<a id="slowdl" class="at" style="top: 420px; display: block" href="/download/slow.bin">Slow download</a>
<div id="log" style="position: absolute; left: 300px; top: 20px"></div>
<script>
window.log = [];
const note = (e) => { window.log.push(e.type + ':' + e.target.id + ':' + (e.target.files ? Array.from(e.target.files).map(f => f.name).join('|') : Array.from(e.target.selectedOptions || []).map(o => o.text).join('|'))); };
for (const id of ['file', 'files', 'single', 'multi']) {
  document.getElementById(id).addEventListener('input', note);
  document.getElementById(id).addEventListener('change', note);
}
</script></body></html>"#;

/// A page that closes itself when asked (works in a script-opened window).
pub const CLOSER: &str = r#"<!doctype html><html><head><title>Closer</title></head><body>
<button id="close" style="position:absolute; left: 20px; top: 20px; width: 120px; height: 40px" onclick="window.close()">Close</button>
</body></html>"#;

/// Buttons that call a JSON API: GET, POST with a body, and a 404.
pub const API: &str = r#"<!doctype html><html><head><title>API</title></head><body>
<button id="get" style="position:absolute; left: 20px; top: 20px; width: 120px; height: 40px" onclick="fetch('/api/data?item=42').then(r => r.json()).then(d => document.getElementById('out').textContent = d.name)">Get</button>
<button id="post" style="position:absolute; left: 20px; top: 80px; width: 120px; height: 40px" onclick="fetch('/api/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'ada' }) }).then(r => r.text()).then(t => document.getElementById('out').textContent = t)">Post</button>
<button id="missing" style="position:absolute; left: 20px; top: 140px; width: 120px; height: 40px" onclick="fetch('/api/missing').then(r => document.getElementById('out').textContent = r.status)">Missing</button>
<div id="out" style="position:absolute; left: 200px; top: 20px"></div>
</body></html>"#;

/// A labelled form, a far-away button, a hidden one, a covered one and a
/// picker-like field the snapshot leaves out.
pub const FORM: &str = r#"<!doctype html><html><head><title>Form</title><style>body { margin: 8px; font: 16px sans-serif; }</style></head><body>
<h1>Sign up</h1>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'submitted ' + document.getElementById('email').value;">
<label for="email">Email</label> <input id="email" type="email" value="old@example.com">
<label for="name">Name</label> <input id="name" type="text" placeholder="Your name" value="Ada">
<label><input id="agree" type="checkbox"> I agree</label>
<select id="country" aria-label="Country"><option>France</option><option>Peru</option></select>
<button id="submit" type="submit">Submit</button>
</form>
<p id="out"></p>
<input id="when" type="text" aria-label="Pick a date">
<button id="hidden" style="display: none">Hidden</button>
<button id="covered" style="position: absolute; left: 10px; top: 500px; width: 100px; height: 30px" onclick="window.log.push('covered clicked')">Covered</button>
<div style="position: absolute; left: 0; top: 490px; width: 300px; height: 60px; background: rgba(0,0,0,0.1)"></div>
<div style="height: 2400px"></div>
<button id="far" onclick="this.textContent = 'far clicked'">Far button</button>
<script>
window.log = [];
for (const id of ['email', 'name']) {
  const el = document.getElementById(id);
  el.addEventListener('input', () => window.log.push('input:' + id));
  el.addEventListener('change', () => window.log.push('change:' + id));
}
</script>
</body></html>"#;

/// Names, roles and states from every source ARIA has: labels (for= and
/// around), aria-label, aria-labelledby, legends, captions, placeholders,
/// values, titles; hidden content four ways; custom ARIA widgets.
pub const ARIA: &str = r##"<!doctype html><html><head><meta charset="utf-8"><title>Aria</title></head><body>
<header><nav aria-label="Main"><a href="/">Home</a> <a href="/about">About <b>us</b></a></nav></header>
<main><h1>Shop</h1><p>Welcome to the <strong>best</strong> shop. <a href="#more">Read more</a></p>
<section aria-labelledby="filters"><h2 id="filters">Filters</h2>
<form><fieldset><legend>Size</legend><label><input type="radio" name="s" checked> Small</label><label><input type="radio" name="s"> Large</label></fieldset>
<label for="q">Search</label><input id="q" type="search" placeholder="Find">
<input type="number" aria-label="Quantity" value="2"><input type="text" placeholder="Coupon code">
<input type="text" title="Gift note"><span id="hint">Zip code</span><input type="text" aria-labelledby="hint">
<select aria-label="Sort"><option>Price</option><option selected>Name</option></select>
<textarea aria-label="Notes">hello</textarea><input type="password" aria-label="Pin" value="1234">
<input type="checkbox" id="news" required><label for="news">News</label><input type="email" aria-label="Email" required>
<button type="submit" disabled>Apply</button><button aria-pressed="true">Favourite</button>
<button aria-label="Close">×</button><button><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="Cart"> 3</button>
<div role="button" tabindex="0">Custom</div><div role="checkbox" aria-checked="mixed" tabindex="0">Mixed</div>
<div role="tablist"><div role="tab" aria-selected="true">First tab</div><div role="tab">Second tab</div></div>
<input type="submit" value="Send"><input type="reset"><input type="button" value="Plain">
</form></section>
<ul><li><a href="/1">One</a> – cheap</li><li>Two <button>Buy two</button></li></ul>
<div style="display: none"><button>Gone</button></div><div aria-hidden="true"><button>Aria gone</button></div>
<div hidden><button>Hidden gone</button></div>
<div style="visibility: hidden">Invisible <button style="visibility: visible">Visible inside</button></div>
<a href="/long">A link <span>with <em>nested</em> words</span></a>
<table><tr><td>Secret <input type="password" value="hunter2" aria-label="Code"></td></tr></table>
<details><summary>More</summary>Closed answer</details>
<label><input type="checkbox" style="display: none"> Remember me</label>
<p>Price: <span style="display: contents">$5</span> each</p>
<a href="/home-icon"><svg width="16" height="16" viewBox="0 0 16 16"><title>Home page</title><rect width="16" height="16" fill="#369"></rect></svg></a>
<svg width="40" height="20" viewBox="0 0 40 20"><a href="/map"><title>Open the map</title><rect width="20" height="20" fill="#693"></rect></a><a><rect x="20" width="20" height="20" fill="#963"></rect></a></svg>
<button><span aria-labelledby="trash-word"></span></button><span id="trash-word" hidden>Move to trash</span>
<div id="shadow-form"></div>
<script>document.getElementById('shadow-form').attachShadow({ mode: 'open' }).innerHTML = '<label for="city">Shadow city</label><input id="city"><label>Shadow zip <input></label>';</script>
</main><footer>© 2026 <a href="/terms">Terms</a></footer></body></html>"##;

/// A login form: a user name and a password.
pub const LOGIN: &str = r#"<!doctype html><html><head><title>Login</title></head><body>
<input id="user" type="text" aria-label="User" style="position: absolute; left: 20px; top: 20px; width: 200px">
<input id="pw" type="password" aria-label="Password" style="position: absolute; left: 20px; top: 60px; width: 200px">
</body></html>"#;

/// `n` list items, each a link and a button: a snapshot far above one window.
pub fn big(n: usize) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><title>Big</title></head><body><h1>Catalogue</h1><ul>",
    );
    for i in 0..n {
        out.push_str(&format!(
            "<li><a href=\"/item/{i}\">Item {i:05} with a descriptive name</a> <button onclick=\"this.textContent='added {i}'\">Add {i:05}</button> <span>In stock, ships in {} days</span></li>",
            i % 7 + 1
        ));
    }
    out.push_str("</ul><footer><a href=\"/next\">Next page</a></footer></body></html>");
    out
}

/// A same-origin iframe, a cross-site one (`localhost` vs `127.0.0.1`) and
/// an open shadow root.
pub fn frames(cross_origin: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Frames</title></head><body>
<h1>Frames</h1>
<iframe id="same" src="/frame-inner?label=Same" style="width: 400px; height: 120px"></iframe>
<iframe id="cross" src="{cross_origin}/frame-inner?label=Cross" style="width: 400px; height: 120px"></iframe>
<div id="host"></div>
<script>
const root = document.getElementById('host').attachShadow({{ mode: 'open' }});
root.innerHTML = '<button id="shadow-btn" onclick="this.textContent = \'shadow clicked\'">Shadow button</button>';
</script>
</body></html>"#
    )
}

/// Timers in a same-origin and a cross-site frame, each reporting its tick
/// count to the top page (`#ticks`).
pub fn frame_timers(cross_origin: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Frame timers</title></head><body>
<iframe src="/frame-ticker?label=same" style="width: 200px; height: 60px"></iframe>
<iframe src="{cross_origin}/frame-ticker?label=cross" style="width: 200px; height: 60px"></iframe>
<div id="ticks">{{}}</div>
<script>
window.ticks = {{}};
addEventListener('message', e => {{
  if (!e.data || !e.data.label) return;
  window.ticks[e.data.label] = e.data.n;
  document.getElementById('ticks').textContent = JSON.stringify(window.ticks);
}});
</script>
</body></html>"#
    )
}

pub fn frame_ticker(label: &str) -> String {
    let label: String = label
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!(
        r#"<!doctype html><html><body><script>
let n = 0;
setInterval(() => {{ n++; parent.postMessage({{ label: '{label}', n }}, '*'); }}, 50);
</script></body></html>"#
    )
}

pub fn frame_inner(label: &str) -> String {
    let label: String = label
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!(
        r#"<!doctype html><html><head><title>{label} frame</title></head><body style="margin: 4px">
<button id="inner" onclick="this.textContent = '{label} clicked'; fetch('/api/data?item={label}')">{label} button</button>
<input id="inner-input" aria-label="{label} input">
<select id="inner-select" aria-label="{label} select"><option>one</option><option>two</option></select>
<input type="file" id="inner-file" aria-label="{label} file">
</body></html>"#
    )
}

/// A hostile page: its script and a form try to drive the engine that
/// shows it (`?engine=<api base>&victim=<another tab id>`). `window.sent`
/// counts the requests that came back (opaque, whatever their status).
pub const ATTACK: &str = r#"<!doctype html><html><head><title>Attack</title></head><body>
<iframe name="sink" style="width: 10px; height: 10px"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink"><input name='{"url": "about:blank", "userId": "attack-probe", "x": "' value='"}'></form>
<script>
const q = new URLSearchParams(location.search);
const engine = q.get('engine'), victim = q.get('victim');
window.sent = 0;
const done = () => { window.sent++; };
fetch(engine + '/tabs', { method: 'POST', mode: 'no-cors', body: '{"url": "about:blank", "userId": "attack-probe"}' }).then(done, done);
fetch(engine + '/tabs/' + victim + '/execute', { method: 'POST', mode: 'no-cors',
  body: JSON.stringify({ script: "document.title = 'pwned'" }) }).then(done, done);
fetch(engine + '/tabs/' + victim + '/execute', { method: 'POST', mode: 'no-cors',
  headers: { 'Content-Type': 'text/plain' },
  body: JSON.stringify({ script: "document.title = 'pwned'" }) }).then(done, done);
const form = document.getElementById('f');
form.action = engine + '/tabs';
document.querySelector('iframe').addEventListener('load', () => { window.formAnswered = true; });
form.submit();
</script></body></html>"#;

/// Pages that try to wedge a tab, by name (`/hostile/{name}`).
pub fn hostile(name: &str) -> Option<&'static str> {
    Some(match name {
        "pickers" => {
            r##"<!doctype html><html><head><title>Pickers</title><style>body { margin: 0 } input, button, select { position: absolute; left: 40px; width: 220px; height: 32px; }</style></head><body>
<input id="date" type="date" style="top: 20px">
<input id="time" type="time" style="top: 70px">
<input id="datetime-local" type="datetime-local" style="top: 120px" min="2026-01-01T00:00" max="2027-12-31T23:59" step="60">
<input id="month" type="month" style="top: 170px">
<input id="week" type="week" style="top: 220px">
<input id="color" type="color" style="top: 270px" value="#112233">
<button id="show" style="top: 320px" onclick="document.getElementById('date').showPicker()">show date</button>
<select id="sel" style="top: 370px"><option>a</option><option>b</option></select>
<button id="showsel" style="top: 420px" onclick="document.getElementById('sel').showPicker()">show select</button>
<script>
window.changes = [];
for (const el of document.querySelectorAll('input')) {
  el.addEventListener('input', () => window.changes.push('input:' + el.id));
  el.addEventListener('change', () => window.changes.push('change:' + el.id + '=' + el.value));
}
</script></body></html>"##
        }
        "storm" => {
            r##"<!doctype html><html><head><title>Storm</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="for (let i = 0; i < 10; i++) alert('storm ' + i); document.title = 'after storm'">go</button></body></html>"##
        }
        "alert-loop" => {
            r##"<!doctype html><html><head><title>Loop</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="while (true) alert('again')">go</button></body></html>"##
        }
        "alert-on-load" => {
            r##"<!doctype html><html><head><title>Alert on load</title></head><body><script>alert('loading')</script><p>loaded</p></body></html>"##
        }
        "slow-image" => {
            r##"<!doctype html><html><head><title>Slow image</title></head><body><p>text first</p><img src="/sleep?ms=60000"></body></html>"##
        }
        "busy" => {
            r##"<!doctype html><html><head><title>Busy</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="while (true) {}">go</button></body></html>"##
        }
        "busy-later" => {
            r##"<!doctype html><html><head><title>Busy later</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="setTimeout(() => { while (true) {} }, 50)">go</button></body></html>"##
        }
        "busy-on-load" => {
            r##"<!doctype html><html><head><title>Busy on load</title></head><body><script>while (true) {}</script></body></html>"##
        }
        "huge-dom" => {
            r##"<!doctype html><html><head><title>Huge</title></head><body><script>
const f = document.createDocumentFragment();
for (let i = 0; i < 100000; i++) { const d = document.createElement(i % 10 ? 'span' : 'button'); d.textContent = 'n' + i; f.appendChild(d); }
document.body.appendChild(f);
</script></body></html>"##
        }
        "beforeunload" => {
            r##"<!doctype html><html><head><title>Leave?</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="document.title = 'armed'">arm</button>
<script>addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = ''; });</script></body></html>"##
        }
        "print" => {
            r##"<!doctype html><html><head><title>Print</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="window.print(); document.title = 'printed'">print</button></body></html>"##
        }
        "modal" => {
            r##"<!doctype html><html><head><title>Modal</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="document.getElementById('box').showModal()">open</button>
<dialog id="box"><p>A modal</p><button id="close" onclick="document.getElementById('box').close()">close</button></dialog></body></html>"##
        }
        "sync-xhr" => {
            r##"<!doctype html><html><head><title>XHR</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="const x = new XMLHttpRequest(); x.open('GET', '/sleep?ms=3000', false); x.send(); document.title = 'xhr ' + x.responseText">go</button></body></html>"##
        }
        "worker" => {
            r##"<!doctype html><html><head><title>Worker</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="document.title = 'clicked'">go</button>
<script>new Worker(URL.createObjectURL(new Blob(['let n = 0; while (true) { n++; }'], { type: 'text/javascript' })));</script></body></html>"##
        }
        "popup-storm" => {
            r##"<!doctype html><html><head><title>Popups</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="for (let i = 0; i < 10; i++) window.open('/second?popup=' + i, '_blank')">go</button></body></html>"##
        }
        "permissions" => {
            r##"<!doctype html><html><head><title>Ask</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="navigator.geolocation.getCurrentPosition(() => document.title = 'geo granted', e => document.title = 'geo refused'); if (window.Notification) Notification.requestPermission()">ask</button></body></html>"##
        }
        "canvas" => {
            r##"<!doctype html><html><head><title>Canvas</title><style>
@keyframes spin { to { transform: rotate(360deg) } } #spinner { width: 60px; height: 60px; background: #c33; animation: spin 0.2s linear infinite; }
</style></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="window.clicked = true">go</button>
<canvas id="c" width="800" height="500" style="position:absolute; top: 100px"></canvas><div id="spinner"></div>
<script>
const ctx = document.getElementById('c').getContext('2d');
window.drawn = 0;
function draw() {
  window.drawn++;
  for (let i = 0; i < 300; i++) { ctx.fillStyle = 'hsl(' + ((window.drawn * 7 + i) % 360) + ',80%,50%)'; ctx.fillRect(Math.random() * 800, Math.random() * 500, 30, 30); }
  requestAnimationFrame(draw);
}
requestAnimationFrame(draw);
setInterval(() => { document.body.dataset.tick = String(window.drawn); }, 0);
</script></body></html>"##
        }
        "event-source" => {
            r##"<!doctype html><html><head><title>Stream</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="window.clicked = true">go</button>
<p id="n" style="position:absolute; top: 100px">0</p>
<script>
window.received = 0;
new EventSource('/event-flood').onmessage = e => { window.received++; document.getElementById('n').textContent = e.data; };
</script></body></html>"##
        }
        "download-storm" => {
            r##"<!doctype html><html><head><title>Downloads</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="for (let i = 0; i < 20; i++) { const a = document.createElement('a'); a.href = '/download/report.txt?n=' + i; a.download = 'report-' + i + '.txt'; document.body.appendChild(a); a.click(); } document.title = 'stormed'">go</button></body></html>"##
        }
        "oom" => {
            r##"<!doctype html><html><head><title>Hungry</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="const kept = []; while (true) kept.push(new Array(1 << 20).fill(1.5))">eat</button></body></html>"##
        }
        _ => return None,
    })
}

/// A page flooded by a WebSocket server at `socket` (`ws://...`).
pub fn socket_flood(socket: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Socket</title></head><body>
<button id="go" style="position:absolute; left: 40px; top: 40px; width: 200px; height: 40px" onclick="window.clicked = true">go</button>
<p id="n" style="position:absolute; top: 100px">0</p>
<script>
window.received = 0;
new WebSocket({socket:?}).onmessage = e => {{ window.received++; document.getElementById('n').textContent = String(window.received); }};
</script></body></html>"#
    )
}

/// Frames nested `depth` deep, each level on the other site: `level N`
/// holds the frame of `level N-1`.
pub fn deep_frames(depth: u32, other_origin: &str) -> String {
    let inner = if depth == 0 {
        String::new()
    } else {
        format!(
            r#"<iframe src="{other_origin}/deep-frames?depth={}" style="width: 95%; height: 80vh; border: 1px solid #888"></iframe>"#,
            depth - 1
        )
    };
    format!(
        r#"<!doctype html><html><head><title>Level {depth}</title></head><body style="margin: 2px"><p>level {depth}</p>{inner}</body></html>"#
    )
}

/// An alert raised while a cross-site frame loads.
pub fn cross_frame_alert(cross_origin: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Frame alert</title></head><body>
<iframe src="{cross_origin}/hostile/alert-on-load" style="width: 300px; height: 100px"></iframe></body></html>"#
    )
}
