// An element's value, or the text of an editable one.
function() {
  if (!this.isConnected) return { state: 'stale' };
  const tag = this.tagName.toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select') return { state: 'ok', tag, value: String(this.value) };
  if (this.isContentEditable) return { state: 'ok', tag, value: this.innerText };
  return { state: 'ok', tag, value: null };
}
