// The point to act on after scrolling the element into view, or why it
// can't be acted on. Candidates are the centres of the element's boxes (a
// link wrapped over two lines has one per line; a rotated box's centre is
// its bounding rect's), clipped to the viewport, then the centre of the
// whole: the first one a hit test finds on the element wins, so a click
// never lands beside its target. An input with no usable box of its own
// (hidden, zero-sized, or a 1 px "visually hidden" custom checkbox) is
// reached through a visible `<label>` of its, as a user clicks it.
function() {
  if (!this.isConnected) return { state: 'stale' };
  const tag = this.tagName.toLowerCase();
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return !(r.width <= 0 || r.height <= 0 || s.visibility === 'hidden' || s.display === 'none');
  };
  const unusable = (el) => {
    if (!shown(el)) return true;
    const r = el.getBoundingClientRect();
    return r.width < 2 || r.height < 2;
  };
  // An option of a select that pops up has no box until the select opens.
  const owner = this.tagName === 'OPTION' && this.closest('select');
  if (owner && !owner.multiple && owner.size <= 1) return { state: 'closed_option', tag, index: this.index };
  let el = this;
  let via = null;
  if (this.labels && this.labels.length && unusable(this)) {
    const label = Array.from(this.labels).find(l => shown(l) && !unusable(l));
    if (label) { el = label; via = 'label'; }
  }
  if (!shown(el)) return { state: 'hidden', tag };
  let r = el.getBoundingClientRect();
  const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  if (!inside) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    r = el.getBoundingClientRect();
  }
  const clip = (b) => {
    const left = Math.max(b.left, 0), top = Math.max(b.top, 0);
    const right = Math.min(b.right, innerWidth), bottom = Math.min(b.bottom, innerHeight);
    return (right - left >= 1 && bottom - top >= 1) ? [(left + right) / 2, (top + bottom) / 2] : null;
  };
  const points = Array.from(el.getClientRects()).map(clip).filter(Boolean);
  const whole = clip(r);
  if (whole) points.push(whole);
  if (!points.length) return { state: 'outside', tag };
  const root = el.getRootNode();
  const hitAt = ([x, y]) => (root && root.elementFromPoint ? root : document).elementFromPoint(x, y);
  const lands = (hit) => hit && (hit === this || this.contains(hit) || hit === el || el.contains(hit)
    || (hit.control && hit.control === this)
    || (this.labels && Array.from(this.labels).some(l => l === hit || l.contains(hit)))
    // A label that lets clicks through reaches its own control.
    || (this.control && (hit === this.control || this.control.contains(hit)))
    // An input drawn by its wrapper (a slider's thumb, a switch's track):
    // a click on the wrapper there is the click a person makes.
    || (this.tagName === 'INPUT' && hit.contains(this) && hit !== document.body && hit !== document.documentElement));
  let point = null, first = null;
  for (const p of points.slice(0, 16)) {
    const hit = hitAt(p);
    if (first === null) first = hit;
    if (lands(hit)) { point = p; break; }
  }
  const describe = (e) => e ? e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '') : 'nothing';
  const text = String(this.innerText || this.value || this.getAttribute('aria-label') || (via ? el.innerText : '') || '').trim().slice(0, 200);
  const [x, y] = point || points[0];
  return { state: point ? 'ok' : 'covered', covering: point ? null : describe(first), x, y, via,
    rect: { x: r.x, y: r.y, width: r.width, height: r.height }, tag, text,
    in_viewport: true };
}
