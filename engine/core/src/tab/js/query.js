// First match of a selector, searching open shadow roots when the document
// itself has none.
function(sel) {
  let found;
  try { found = document.querySelector(sel); } catch (e) { return { error: 'invalid selector ' + JSON.stringify(sel) + ': ' + e.message }; }
  if (found) return found;
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        const hit = el.shadowRoot.querySelector(sel) || walk(el.shadowRoot);
        if (hit) return hit;
      }
    }
    return null;
  };
  return walk(document);
}
