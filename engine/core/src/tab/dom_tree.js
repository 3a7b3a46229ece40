// The body of `function(next, every, limit)`, run in a frame's refs world
// after `numbering_prelude!` (which defines `numberOf`). It builds the
// frame's accessibility tree from the DOM: what a screen reader would be
// given (ARIA roles, explicit or implied by the tag; accessible names after
// the accname rules; states; values), hidden content left out, generic
// wrappers folded into their parents, open shadow roots and slots followed
// as they render. Interactive elements (every element, when `every`) carry
// their ref number (`e`); an iframe carries its own number (`f`) so the
// engine can hang the child frame's tree under it.
//
// Answer: { tree, numbers, next }: `numbers` are the refs handed out,
// `tree` is the JSON text (a string crosses the protocol many times faster
// than the same object) of { title, nodes, items, cut }. A node is { r: role, n: name, v: value, l: level, s: [states], e: ref number,
// f: frame owner number, c: [children] }; text is { r: 'text', n }.
const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio',
  'combobox', 'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'switch', 'slider', 'spinbutton', 'treeitem']);
// Roles whose name comes from their content when nothing else names them.
const NAMED_BY_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell',
  'heading', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio',
  'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'term', 'caption']);
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK',
  'TITLE', 'BR', 'WBR', 'DATALIST', 'PARAM', 'SOURCE', 'TRACK']);
const TAG_ROLES = { ARTICLE: 'article', ASIDE: 'complementary', BUTTON: 'button',
  DETAILS: 'group', DIALOG: 'dialog', FIELDSET: 'group', FIGURE: 'figure', FORM: 'form',
  H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading',
  HR: 'separator', LI: 'listitem', UL: 'list', OL: 'list', MENU: 'list', DL: 'list',
  DT: 'term', DD: 'definition', MAIN: 'main', NAV: 'navigation', OPTION: 'option',
  OPTGROUP: 'group', OUTPUT: 'status', P: 'paragraph', PROGRESS: 'progressbar', METER: 'meter',
  TABLE: 'table', THEAD: 'rowgroup', TFOOT: 'rowgroup', TR: 'row', TEXTAREA: 'textbox',
  BLOCKQUOTE: 'blockquote', CAPTION: 'caption', ADDRESS: 'group', MATH: 'math',
  SUMMARY: 'button', IFRAME: 'iframe', FRAME: 'iframe' };
const INPUT_ROLES = { checkbox: 'checkbox', radio: 'radio', range: 'slider',
  number: 'spinbutton', search: 'searchbox', button: 'button', submit: 'button',
  reset: 'button', image: 'button', file: 'button', color: 'button' };
// Emitted nodes nest at most this deep (deeper content joins the deepest
// node), so the answer stays within the engine's JSON reader's 128 levels
// (two per node).
const MAX_NESTING = 60;
// The DOM is walked at most this deep.
const MAX_DOM_DEPTH = 2000;

const clean = (t) => String(t || '').replace(/\s+/g, ' ').trim();
const used = [];
const ref = (el) => { const n = numberOf(el); used.push(n); return n; };
let focused = document.activeElement;
while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;

// What renders inside an element: its open shadow root's content, a slot's
// assigned nodes (or its fallback content), or its children.
const childrenOf = (node) => {
  if (node.shadowRoot) return node.shadowRoot.childNodes;
  if (node instanceof HTMLSlotElement) {
    const assigned = node.assignedNodes();
    if (assigned.length) return assigned;
  }
  // A closed <details> shows its summary only.
  if (node instanceof HTMLDetailsElement && !node.open) {
    const summary = Array.from(node.children).find((c) => c.tagName === 'SUMMARY');
    return summary ? [summary] : [];
  }
  return node.childNodes;
};
// Whether an element's content renders: `content-visibility: hidden` (and
// `hidden=until-found`) keeps the box and hides what is inside.
const contentShown = (style) => style.contentVisibility !== 'hidden';
// `display: contents` has no box of its own: its content flows as if it
// were the parent's.
const isBlock = (style) => !style.display.startsWith('inline') && style.display !== 'contents';

const ancestorIs = (el, tags) => {
  for (let p = el.parentElement; p; p = p.parentElement) if (tags.has(p.tagName)) return true;
  return false;
};
const SECTIONING = new Set(['ARTICLE', 'ASIDE', 'MAIN', 'NAV', 'SECTION']);

const inputRole = (el) => {
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  if (type === 'hidden') return '';
  if (INPUT_ROLES[type]) return INPUT_ROLES[type];
  return el.hasAttribute('list') ? 'combobox' : 'textbox';
};

// An SVG element's <title> child: its name (never rendered, so not walked
// as text).
const svgTitle = (el) => (el instanceof SVGElement ? el.querySelector(':scope > title') : null);

// <a href> in HTML or SVG (whose tag names are lower case; xlink:href too).
const isLink = (el) => el instanceof SVGAElement
  ? el.hasAttribute('href') || el.hasAttributeNS('http://www.w3.org/1999/xlink', 'href')
  : (el.tagName === 'A' || el.tagName === 'AREA') && el.hasAttribute('href');

const implicitRole = (el) => {
  if (el instanceof SVGAElement) return isLink(el) ? 'link' : '';
  const tag = el.tagName;
  switch (tag) {
    case 'A': case 'AREA': return isLink(el) ? 'link' : '';
    case 'INPUT': return inputRole(el);
    case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'IMG': return el.getAttribute('alt') === '' && !el.hasAttribute('title') ? 'none' : 'img';
    case 'HEADER': return ancestorIs(el, SECTIONING) ? '' : 'banner';
    case 'FOOTER': return ancestorIs(el, SECTIONING) ? '' : 'contentinfo';
    case 'SECTION': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title') ? 'region' : '';
    case 'TD': {
      const table = el.closest('table');
      const grid = table && /^(grid|treegrid)$/.test(table.getAttribute('role') || '');
      return grid ? 'gridcell' : 'cell';
    }
    case 'TH': {
      const scope = (el.getAttribute('scope') || '').toLowerCase();
      if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
      if (scope === 'col' || scope === 'colgroup') return 'columnheader';
      const row = el.parentElement;
      const inHead = el.closest('thead');
      return !inHead && row && row.querySelector(':scope > td') ? 'rowheader' : 'columnheader';
    }
    default:
      // An icon is an image; a drawing with links or focusable parts is
      // a container of them (as the browser's tree has it).
      if (el instanceof SVGSVGElement) {
        const actionable = [...el.querySelectorAll('a')].some(isLink) || el.querySelector('[tabindex]');
        return actionable ? '' : 'img';
      }
      // A rich-text editor's root (the editing host) is where text goes:
      // a text box, as `role=textbox` editors say of themselves.
      if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
      return TAG_ROLES[tag] || '';
  }
};

// Native controls keep their role (and ref) under role=none/presentation.
const NATIVE_CONTROLS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA']);
const roleOf = (el) => {
  const explicit = (el.getAttribute('role') || '').trim().toLowerCase().split(/\s+/)[0];
  if ((explicit === 'none' || explicit === 'presentation') && (NATIVE_CONTROLS.has(el.tagName) || (el.tagName !== 'AREA' && isLink(el)))) {
    return implicitRole(el);
  }
  return explicit || implicitRole(el);
};

// Hidden for the tree: not rendered, or hidden from assistive technology.
const styleOf = (el) => {
  const style = getComputedStyle(el);
  if (style.display === 'none') return null;
  if (el.getAttribute('aria-hidden') === 'true') return null;
  // Content of a closed <details>, `hidden=until-found`, content-visibility.
  if (style.display !== 'contents' && el.checkVisibility && !el.checkVisibility()) return null;
  return style;
};

const isTextField = (el, role) => role === 'textbox' || role === 'searchbox' || role === 'combobox' && el.tagName === 'INPUT';
const selectedText = (select) => {
  const chosen = Array.from(select.selectedOptions || []).map(o => clean(o.label || o.text));
  return chosen.join(', ');
};

// The text of content, for names: text, embedded controls by their value,
// hidden parts left out (unless the whole thing is hidden and referenced).
// Names are cut at 150 characters by the engine; content past this is not read.
const NAME_TEXT = 1000;
// A field's value as it may be said: never a password's or a hidden field's.
const sayableValue = (el) => {
  const type = (el.getAttribute('type') || '').toLowerCase();
  return type === 'password' || type === 'hidden' ? '' : el.value;
};
// `referenced`: inside an aria-labelledby target, where a descendant's own
// aria-labelledby is not followed again.
const contentText = (node, depth, skip, referenced) => {
  if (depth > 64) return '';
  let out = '';
  for (const child of childrenOf(node)) {
    if (out.length > NAME_TEXT) break;
    if (child.nodeType === 3) { out += child.data; continue; }
    if (child.nodeType !== 1 || child === skip || SKIPPED.has(child.tagName)) continue;
    const style = styleOf(child);
    if (!style) continue;
    const block = isBlock(style);
    let part, title;
    const label = child.getAttribute('aria-label');
    const labelledBy = referenced ? null : child.getAttribute('aria-labelledby');
    const byLabel = labelledBy ? clean(byIds(child, labelledBy).map(referencedText).join(' ')) : '';
    if (byLabel) part = byLabel;
    else if (label && label.trim()) part = label;
    else if ((title = svgTitle(child))) part = title.textContent;
    else {
      const role = roleOf(child);
      if (child.tagName === 'SELECT') part = selectedText(child);
      else if (child.tagName === 'INPUT' || child.tagName === 'TEXTAREA') {
        const type = (child.getAttribute('type') || '').toLowerCase();
        part = type === 'button' || type === 'submit' || type === 'reset' ? child.value
          : type === 'image' ? child.getAttribute('alt') || ''
          : type === 'checkbox' || type === 'radio' || type === 'file' ? '' : sayableValue(child);
      } else if (child.tagName === 'IMG' || child.tagName === 'AREA') part = child.getAttribute('alt') || '';
      else if (style.visibility === 'hidden' || style.visibility === 'collapse' || !contentShown(style)) part = '';
      else part = contentText(child, depth + 1, skip, referenced) || (role === 'img' ? '' : child.getAttribute('title') || '');
    }
    out += block ? ' ' + part + ' ' : part;
  }
  return out;
};

const byIds = (el, ids) => {
  const root = el.getRootNode();
  return ids.split(/\s+/).filter(Boolean)
    .map(id => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id))
    .filter(Boolean);
};
// The text of an element referenced by aria-labelledby: used even if hidden.
const referencedText = (el) => {
  const label = el.getAttribute('aria-label');
  if (label && label.trim()) return label;
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') return sayableValue(el);
  if (el.tagName === 'SELECT') return selectedText(el);
  return contentText(el, 0, null, true) || '';
};

// `el.labels` scans the document for every element it is asked about
// (minutes on a page of 100,000 elements); one pass over each tree's labels
// instead (the document's, and each shadow root's, whose labels name the
// controls inside it).
const labelMaps = new Map();
const labelsOf = (el) => {
  const root = el.getRootNode();
  let map = labelMaps.get(root);
  if (!map) {
    map = new Map();
    for (const label of (root.querySelectorAll ? root.querySelectorAll('label') : [])) {
      const control = label.control;
      if (!control) continue;
      if (!map.has(control)) map.set(control, []);
      map.get(control).push(label);
    }
    labelMaps.set(root, map);
  }
  return map.get(el) || [];
};

const nameOf = (el, role) => {
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const name = clean(byIds(el, labelledBy).map(referencedText).join(' '));
    if (name) return name;
  }
  const label = el.getAttribute('aria-label');
  if (label && label.trim()) return clean(label);
  const tag = el.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'METER' || tag === 'PROGRESS' || tag === 'OUTPUT' || tag === 'BUTTON') {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'INPUT' && type === 'image') return clean(el.getAttribute('alt') || el.value || el.getAttribute('title') || 'Submit');
    const labels = labelsOf(el);
    const fromLabels = clean(labels.map(l => contentText(l, 0, el)).join(' '));
    if (fromLabels) return fromLabels;
    if (tag === 'INPUT' && (type === 'button' || type === 'submit' || type === 'reset')) {
      return clean(el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '') || el.getAttribute('title'));
    }
    if (tag === 'INPUT' && type === 'file') return clean(el.getAttribute('title')) || 'Choose File';
    if (tag !== 'BUTTON') {
      return clean(el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || '');
    }
  }
  if (tag === 'IMG' || tag === 'AREA') return clean(el.getAttribute('alt') || el.getAttribute('title'));
  if (tag === 'FIELDSET' || tag === 'FIGURE' || tag === 'TABLE') {
    const caption = el.querySelector(tag === 'FIELDSET' ? ':scope > legend' : tag === 'FIGURE' ? ':scope > figcaption' : ':scope > caption');
    const name = caption ? clean(contentText(caption, 0, null)) : '';
    if (name) return name;
  }
  if (tag === 'OPTGROUP') return clean(el.label);
  if (tag === 'OPTION') return clean(el.label || el.text);
  const title = svgTitle(el);
  if (title) return clean(title.textContent);
  if (NAMED_BY_CONTENT.has(role)) {
    const name = clean(contentText(el, 0, null));
    if (name) return name;
  }
  return clean(el.getAttribute('title') || '');
};

const STATE_ATTRIBUTES = ['pressed', 'expanded', 'busy', 'modal', 'invalid'];
const statesOf = (el, role) => {
  const states = [];
  if (el === focused) states.push('focused');
  if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') states.push('disabled');
  const ariaChecked = el.getAttribute('aria-checked');
  // A native checkbox's own state, whatever role it plays (a switch);
  // aria-checked speaks for it only when set.
  if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio') && ariaChecked === null) {
    if (el.indeterminate) states.push('checked=mixed');
    else if (el.checked) states.push('checked');
  } else if (ariaChecked === 'true') states.push('checked');
  else if (ariaChecked === 'mixed') states.push('checked=mixed');
  if (el.tagName === 'OPTION' ? el.selected : el.getAttribute('aria-selected') === 'true') states.push('selected');
  if (el.tagName === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS' && el.parentElement.open) states.push('expanded');
  if (el.required || el.getAttribute('aria-required') === 'true') states.push('required');
  if ((el.readOnly && isTextField(el, role)) || el.getAttribute('aria-readonly') === 'true') states.push('readonly');
  if (el.multiple && el.tagName === 'SELECT' || el.getAttribute('aria-multiselectable') === 'true') states.push('multiselectable');
  if (el.tagName === 'DIALOG' && el.matches(':modal')) states.push('modal');
  // A form control that fails its constraints (the `validity` read fires no
  // `invalid` event, unlike checkValidity()); an empty required text field
  // is not called invalid before anything is typed, as browsers do.
  const v = el.willValidate && el.validity;
  if (v && !v.valid && !(v.valueMissing && isTextField(el, role) || v.valueMissing && el.tagName === 'TEXTAREA')) states.push('invalid');
  for (const a of STATE_ATTRIBUTES) {
    const v = el.getAttribute('aria-' + a);
    if (v === 'true' && !states.includes(a)) states.push(a);
    else if (v === 'mixed' && a === 'pressed') states.push('pressed=mixed');
  }
  return states;
};

const valueOf = (el, role) => {
  const tag = el.tagName;
  if (tag === 'SELECT') return role === 'combobox' ? selectedText(el) : null;
  if (tag === 'TEXTAREA') return el.value;
  if (tag === 'INPUT') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (type === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 16)) : null;
    if (type === 'checkbox' || type === 'radio' || type === 'button' || type === 'submit' || type === 'reset' || type === 'image') return null;
    if (type === 'file') {
      const n = el.files ? el.files.length : 0;
      return n === 0 ? 'No file chosen' : n === 1 ? el.files[0].name : n + ' files';
    }
    return el.value;
  }
  if (tag === 'PROGRESS' || tag === 'METER') return String(el.value);
  const now = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
  return now;
};

const levelOf = (el, role) => {
  const aria = Number(el.getAttribute('aria-level'));
  if (aria > 0) return aria;
  return role === 'heading' && /^H[1-6]$/.test(el.tagName) ? Number(el.tagName[1]) : 0;
};

let items = 0;
let cut = false;
const BOUNDARY = null;

// Adjacent text runs merge (inline content reads as one line); a boundary
// (a block-level wrapper's edge) stops the merge.
const finish = (list) => {
  const out = [];
  let text = null;
  const flush = () => {
    if (text) { const n = clean(text.n); if (n) { text.n = n; out.push(text); } }
    text = null;
  };
  for (const item of list) {
    if (item === BOUNDARY) { flush(); continue; }
    if (item.r === 'text') {
      // Merged text is named by the element that holds its first words.
      if (!text) text = item;
      else if (!text.n.trim()) { item.n = text.n + item.n; text = item; }
      else text.n += item.n;
      continue;
    }
    flush();
    out.push(item);
  }
  flush();
  return out;
};

const walk = (parent, out, visible, nesting, depth) => {
  if (depth > MAX_DOM_DEPTH) return;
  for (const child of childrenOf(parent)) {
    if (items >= limit) { cut = true; return; }
    if (child.nodeType === 3) {
      if (visible && child.data) {
        const item = { r: 'text', n: child.data.replace(/\s+/g, ' ') };
        const words = item.n.trim() !== '';
        if (every && words && child.parentElement) item.e = ref(child.parentElement);
        // A run of text is one line, however many nodes it joins.
        const last = out[out.length - 1];
        if (words && (!last || last.r !== 'text')) items++;
        out.push(item);
      }
      continue;
    }
    if (child.nodeType !== 1 || SKIPPED.has(child.tagName)) continue;
    // Inert content (a dialog's background, a leaving transition) takes
    // no input: nothing in it is offered.
    if (child.inert) continue;
    const style = styleOf(child);
    if (!style) continue;
    const shown = style.visibility !== 'hidden' && style.visibility !== 'collapse';
    const block = isBlock(style);
    const role = shown ? roleOf(child) : '';
    const name = role && role !== 'none' && role !== 'presentation' ? nameOf(child, role) : '';
    if (!role || role === 'none' || role === 'presentation' || (role === 'generic' && !name)) {
      // A label around its control names it; its text is not said twice.
      // (A hidden control, as custom checkboxes have, leaves the text.)
      const naming = child.tagName === 'LABEL' && child.control && child.contains(child.control) && styleOf(child.control);
      if (block) out.push(BOUNDARY);
      if (contentShown(style)) walk(child, out, shown && !naming, nesting, depth + 1);
      if (block) out.push(BOUNDARY);
      continue;
    }
    items++;
    const node = { r: role };
    if (name) node.n = name;
    if (role === 'iframe') {
      node.f = ref(child);
      out.push(node);
      continue;
    }
    const value = valueOf(child, role);
    if (value) node.v = value;
    const level = levelOf(child, role);
    if (level) node.l = level;
    const states = statesOf(child, role);
    if (states.length) node.s = states;
    // A native control takes clicks whatever role it plays (a calendar's
    // day is a <button role=gridcell>).
    if (every || INTERACTIVE.has(role) || NATIVE_CONTROLS.has(child.tagName)) node.e = ref(child);
    // A field's content is its value; an image's is its alternative text.
    const leaf = child.tagName === 'INPUT' || child.tagName === 'TEXTAREA' || child.tagName === 'IMG' || role === 'img' || role === 'progressbar' || role === 'meter';
    if (!leaf && contentShown(style)) {
      if (nesting >= MAX_NESTING) {
        out.push(node);
        walk(child, out, shown, nesting, depth + 1);
        continue;
      }
      const children = [];
      if (child.tagName === 'SELECT') {
        for (const option of child.querySelectorAll('option')) {
          if (items >= limit) { cut = true; break; }
          const o = { r: 'option', n: clean(option.label || option.text) };
          if (option.selected) o.s = ['selected'];
          if (option.disabled) (o.s = o.s || []).push('disabled');
          o.e = ref(option);
          children.push(o);
          items++;
        }
      } else {
        walk(child, children, shown, nesting + 1, depth + 1);
      }
      const kids = finish(children);
      if (kids.length) node.c = kids;
    }
    out.push(node);
  }
};

const top = [];
const root = document.body || document.documentElement;
if (root) walk(root, top, true, 0, 0);
const tree = JSON.stringify({ title: document.title, nodes: finish(top), items, cut });
return { tree, numbers: used, next };
