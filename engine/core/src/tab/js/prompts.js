// Page-side: catches a `<select>` before its popup opens (mouse or keyboard),
// reports its options through the binding, and keeps the element for
// `__wabpSelect.apply`. Installed in every document.
(() => {
  if (window.__wabpSelect) return;
  const pending = new Map();
  let seq = 0;
  const open = (el) => {
    const token = 's' + (++seq) + '_' + Math.random().toString(36).slice(2, 8);
    pending.set(token, el);
    const options = Array.from(el.options).map((o, i) => ({ index: i, label: o.label || o.text, selected: o.selected, disabled: o.disabled || !!(o.parentElement && o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled) }));
    try { window.__wabpSelectOpen(JSON.stringify({ token, multiple: el.multiple, options })); } catch (e) {}
  };
  // Only a select that pops its list up: a list box (multiple, or size
  // above 1) is drawn in the page and takes its clicks and keys there.
  const selectOf = (t) => {
    const el = t instanceof HTMLSelectElement ? t : (t && t.closest ? t.closest('select') : null);
    return el && !el.multiple && el.size <= 1 ? el : null;
  };
  addEventListener('mousedown', (e) => {
    const el = selectOf(e.target);
    if (!el || el.disabled || e.button !== 0) return;
    e.preventDefault();
    el.focus();
    open(el);
  }, true);
  addEventListener('keydown', (e) => {
    const el = selectOf(e.target);
    if (!el || el.disabled) return;
    if (e.key === ' ' || e.key === 'Enter' || e.key === 'F4' || (e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp'))) {
      e.preventDefault();
      open(el);
    }
  }, true);
  Object.defineProperty(window, '__wabpSelect', { enumerable: false, value: {
    apply(token, indices) {
      const el = pending.get(token);
      pending.delete(token);
      if (!el || !el.isConnected) return { error: 'the <select> is no longer in the page' };
      const off = indices.find((i) => { const o = el.options[i]; return o && (o.disabled || (o.parentElement && o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled)); });
      if (off !== undefined) { pending.set(token, el); return { refused: 'option ' + off + ' (' + JSON.stringify(el.options[off].label || el.options[off].text) + ') is disabled: a person could not choose it' }; }
      Array.from(el.options).forEach((o, i) => { o.selected = indices.includes(i); });
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return { value: el.value };
    },
    cancel(token) { pending.delete(token); return {}; },
  } });
  // Native date/time and colour pickers: asked for by a click on the
  // input's indicator (its right end; anywhere on a colour input), by
  // Alt+Down or F4, or by showPicker(). Intercepted, never opened: a native
  // picker is a popup the frame driver can't draw past.
  const TYPES = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color']);
  const INDICATOR_PX = 28;
  const pickers = new Map();
  const pickerOf = (t) => t instanceof HTMLInputElement && TYPES.has(t.type) && !t.disabled && !t.readOnly ? t : null;
  const openPicker = (el) => {
    for (const [t, e] of pickers) if (e === el) pickers.delete(t);
    const token = 'p' + (++seq) + '_' + Math.random().toString(36).slice(2, 8);
    pickers.set(token, el);
    try { window.__wabpPickerOpen(JSON.stringify({ token, type: el.type, value: el.value, min: el.min, max: el.max, step: el.step })); } catch (e) {}
  };
  addEventListener('click', (e) => {
    const el = pickerOf(e.target);
    if (!el) return;
    if (el.type !== 'color') {
      const r = el.getBoundingClientRect();
      if (e.detail === 0 || e.clientX < r.right - INDICATOR_PX) return;
    }
    e.preventDefault();
    openPicker(el);
  }, true);
  addEventListener('keydown', (e) => {
    const el = pickerOf(e.target);
    if (!el || el.type === 'color') return;
    if (e.key === 'F4' || (e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp'))) {
      e.preventDefault();
      openPicker(el);
    }
  }, true);
  const inputShow = HTMLInputElement.prototype.showPicker;
  if (inputShow) Object.defineProperty(HTMLInputElement.prototype, 'showPicker', { configurable: true, writable: true, value: function showPicker() {
    if (TYPES.has(this.type)) { if (!this.disabled && !this.readOnly) openPicker(this); return; }
    return inputShow.call(this);
  } });
  if (HTMLSelectElement.prototype.showPicker) Object.defineProperty(HTMLSelectElement.prototype, 'showPicker', { configurable: true, writable: true, value: function showPicker() {
    if (!this.disabled) open(this);
  } });
  Object.defineProperty(window, '__wabpPicker', { enumerable: false, value: {
    apply(token, value) {
      const el = pickers.get(token);
      if (!el || !el.isConnected) { pickers.delete(token); return { error: 'the input is no longer in the page' }; }
      const before = el.value;
      el.value = value;
      if (value !== '' && el.value === '') { el.value = before; return { invalid: true }; }
      pickers.delete(token);
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return { value: el.value };
    },
    cancel(token) { pickers.delete(token); return {}; },
  } });
})()
