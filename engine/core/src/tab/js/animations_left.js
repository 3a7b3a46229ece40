// The time the document's finite running animations and transitions still
// take, in ms (delays and end delays included; endless ones aside).
(() => {
  let left = 0;
  for (const a of document.getAnimations()) {
    if (a.playState !== 'running' || !a.effect) continue;
    const t = a.effect.getComputedTiming();
    const now = t.localTime;
    if (now === null || now === undefined || !Number.isFinite(t.endTime)) continue;
    const rest = (t.endTime - now) / Math.abs(a.playbackRate || 1);
    if (rest > left) left = rest;
  }
  return left;
})()
