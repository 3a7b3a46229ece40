// Focus, then select everything or put the caret at the end.
function(selectAll) {
  if (!this.isConnected) return { state: 'stale' };
  const tag = this.tagName.toLowerCase();
  const textInput = tag === 'textarea' || (tag === 'input' && !/^(checkbox|radio|button|submit|reset|image|file|color|range|hidden)$/i.test(this.type));
  const editable = textInput || this.isContentEditable;
  if (selectAll && !editable) return { state: 'not_editable', tag, type: this.type || null };
  if ((this.disabled || this.readOnly) && editable) return { state: 'disabled', tag };
  this.focus();
  const active = this.getRootNode().activeElement;
  if (active !== this && !this.contains(active)) return { state: 'not_focusable', tag };
  if (textInput) {
    if (selectAll) this.select();
    else { try { const n = this.value.length; this.setSelectionRange(n, n); } catch (e) {} }
  } else if (this.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(this);
    if (!selectAll) range.collapse(false);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  const r = this.getBoundingClientRect();
  return { state: 'ok', rect: { x: r.x, y: r.y, width: r.width, height: r.height }, tag,
    text: String(this.value || this.innerText || '').slice(0, 200) };
}
