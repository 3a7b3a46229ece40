// Page-side: keeps media elements muted while the tab is (see
// [`Tab::set_muted`]); called with `true` or `false`.
(muted) => {
  const key = Symbol.for('wabp.muted');
  if (!window[key]) {
    const state = { on: false, ours: new WeakSet() };
    Object.defineProperty(window, key, { value: state });
    state.mute = (el) => {
      if (state.on && el instanceof HTMLMediaElement && !el.muted) { el.muted = true; state.ours.add(el); }
    };
    const play = HTMLMediaElement.prototype.play;
    HTMLMediaElement.prototype.play = function () { state.mute(this); return play.apply(this, arguments); };
    addEventListener('play', (e) => state.mute(e.target), true);
    addEventListener('volumechange', (e) => state.mute(e.target), true);
    // Elements as they arrive, so they read as muted before they play.
    new MutationObserver((records) => {
      if (!state.on) return;
      for (const r of records) for (const n of r.addedNodes) {
        if (n instanceof HTMLMediaElement) state.mute(n);
        else if (n.querySelectorAll) n.querySelectorAll('audio, video').forEach(state.mute);
      }
    }).observe(document, { childList: true, subtree: true });
  }
  const state = window[key];
  state.on = muted;
  for (const el of document.querySelectorAll('audio, video')) {
    if (muted) state.mute(el);
    else if (state.ours.has(el)) { el.muted = false; state.ours.delete(el); }
  }
}
