// Sets the value of an input that takes no typing, as a picker would. The
// prototype's setter, not the element's own `value`: a framework that
// tracks the value on the element (React) would see no change otherwise.
function(value) {
  if (!this.isConnected) return { state: 'stale' };
  const tag = this.tagName.toLowerCase();
  const formats = { date: 'yyyy-mm-dd', time: 'hh:mm, hh:mm:ss or hh:mm:ss.sss',
    'datetime-local': 'yyyy-mm-ddThh:mm', month: 'yyyy-mm', week: 'yyyy-Www',
    color: '#rrggbb', range: 'a number', number: 'a number (such as 12, -3.5 or 1e3)' };
  const type = tag === 'input' ? String(this.type).toLowerCase() : '';
  if (!(type in formats)) return { state: 'text', tag };
  if (this.disabled || this.readOnly) return { state: 'disabled', tag };
  const wanted = type === 'color' ? value.trim().toLowerCase() : value.trim();
  const malformed = { state: 'malformed', tag, type, format: formats[type] };
  if (type === 'range' && (wanted === '' || !Number.isFinite(Number(wanted)))) return malformed;
  // Checked before the page sees anything: a refused value changes nothing.
  if (type === 'number' && wanted !== '' && !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(wanted)) return malformed;
  if (type === 'color' && !/^#[0-9a-f]{6}$/.test(wanted)) return malformed;
  this.focus();
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  setter.call(this, wanted);
  if (wanted !== '' && this.value === '') return malformed;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { state: 'ok', tag, value: this.value };
}
