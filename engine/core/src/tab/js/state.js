// browser-use's state of a frame (after the numbering prelude, inside
// `function(next, limit) {`): visible interactive elements in DOM order.
  const INTERACTIVE = 'a[href],button,input:not([type=hidden]),textarea,select,summary,[contenteditable=""],[contenteditable=true],[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=combobox],[role=textbox],[onclick],[tabindex]:not([tabindex="-1"])';
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const s = getComputedStyle(el);
    // A checkbox or radio at opacity 0 is the usual custom one: its
    // wrapper draws it, and it takes the clicks.
    const drawnByWrapper = el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio');
    return s.visibility !== 'hidden' && s.display !== 'none' && (s.opacity !== '0' || drawnByWrapper);
  };
  const elements = [];
  // A password's value is never said, only how long it is (as the
  // snapshot does); a hidden field's not at all.
  const fieldValue = (el) => {
    if (!('value' in el) || typeof el.value !== 'string' || el.tagName === 'BUTTON') return null;
    const type = String(el.type || '').toLowerCase();
    if (type === 'hidden') return null;
    if (type === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 16)) : '';
    return el.value;
  };
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (elements.length >= limit) return;
      if (el.matches(INTERACTIVE) && !el.disabled && visible(el)) {
        const text = String(el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 100);
        const attr = (name) => el.getAttribute(name);
        elements.push({
          index: numberOf(el),
          tag: el.tagName.toLowerCase(),
          type: attr('type'),
          text,
          placeholder: attr('placeholder'),
          value: fieldValue(el),
          href: el.href ? String(el.href) : null,
          ariaLabel: attr('aria-label'),
          className: (typeof el.className === 'string' && el.className) ? el.className : null,
          id: el.id || null,
        });
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  if (document.body) walk(document.body);
  const d = document.documentElement;
  return {
    url: location.href,
    title: document.title,
    elements,
    textContent: String(document.body ? document.body.innerText : '').slice(0, 2000),
    scrollY: scrollY,
    scrollHeight: d ? d.scrollHeight : 0,
    viewportHeight: innerHeight,
    next,
  };
}