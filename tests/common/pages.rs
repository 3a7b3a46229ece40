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

pub const SECOND: &str = r#"<!doctype html><html><head><title>Second</title></head><body><h1>Second page</h1><p class="note">Hello from the second page</p></body></html>"#;

pub const DIALOG: &str = r#"<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="alert" style="position:absolute; left: 50px; top: 50px; width: 120px; height: 40px" onclick="alert('Hello there')">Alert</button>
<button id="confirm" style="position:absolute; left: 50px; top: 120px; width: 120px; height: 40px" onclick="window.answer = confirm('Sure?')">Confirm</button>
</body></html>"#;

pub const MARKUP: &str = r#"<!doctype html><html><head><title>Markup</title><style>body { margin: 0; background: #fff; }</style></head><body>
<button id="b" style="position:absolute; left: 300px; top: 300px; width: 200px; height: 80px; background: #fff; border: 0">B</button>
</body></html>"#;
