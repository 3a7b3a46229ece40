// The time the document's finite running animations and transitions still
// take, in ms (delays and end delays included; endless ones aside). One past
// its end but still running has a frame to go: the frame that finishes it
// dispatches its transitionend, which a library's callback waits for.
(() => {
  const FRAME_MS = 17;
  let left = 0;
  for (const a of document.getAnimations()) {
    if (a.playState !== 'running' || !a.effect) continue;
    const t = a.effect.getComputedTiming();
    const now = t.localTime;
    if (now === null || now === undefined || !Number.isFinite(t.endTime)) continue;
    const rest = Math.max((t.endTime - now) / Math.abs(a.playbackRate || 1), FRAME_MS);
    if (rest > left) left = rest;
  }
  return left;
})()
