// Numbers elements in the refs registry of this world: `numberOf(el)`
// gives an element its number (taken from `next` the first time).
  const R = (globalThis.__wabpRefs || (globalThis.__wabpRefs = { byId: new Map(), ids: new WeakMap() }));
  const numberOf = (el) => {
    let n = R.ids.get(el);
    if (!n) { n = next++; R.ids.set(el, n); R.byId.set(n, new WeakRef(el)); }
    return n;
  };
