import Sortable from 'sortablejs';
import { createState } from './state.js';
import './sortable.css';

const ids = (el) => [...el.children].map((li) => li.dataset.id);
const $ = (id) => document.getElementById(id);

const store = createState({});
const snapshot = (note) => store.set({
  pointerOrder: ids($('sortable-pointer')),
  sortableNativeOrder: ids($('sortable-native')),
  html5Order: ids($('html5-list')),
  kanban: { todo: ids($('kanban-todo')), done: ids($('kanban-done')) },
}, note);

store.set({ sortableEvents: [], html5Events: [] });

Sortable.create($('sortable-pointer'), {
  animation: 150,
  forceFallback: true,
  onStart: () => store.state.sortableEvents.push('pointer:start'),
  onEnd: (e) => { store.state.sortableEvents.push(`pointer:end:${e.oldIndex}->${e.newIndex}`); snapshot('pointer:end'); },
});
Sortable.create($('sortable-native'), {
  animation: 150,
  onStart: () => store.state.sortableEvents.push('native:start'),
  onEnd: (e) => { store.state.sortableEvents.push(`native:end:${e.oldIndex}->${e.newIndex}`); snapshot('native:end'); },
});
for (const id of ['kanban-todo', 'kanban-done']) {
  Sortable.create($(id), {
    group: 'kanban',
    animation: 150,
    forceFallback: true,
    onEnd: (e) => { store.state.sortableEvents.push(`kanban:end:${e.from.dataset.col}->${e.to.dataset.col}`); snapshot('kanban:end'); },
  });
}

// Plain HTML5 drag and drop: the dragged item is inserted before or after
// the item under the pointer, depending on which half it is dropped on.
const list = $('html5-list');
let dragged = null;
list.addEventListener('dragstart', (e) => {
  dragged = e.target.closest('li');
  if (!dragged) return;
  e.dataTransfer.effectAllowed = 'move';
  e.dataTransfer.setData('text/plain', dragged.dataset.id);
  dragged.classList.add('dragging');
  store.state.html5Events.push(`dragstart:${dragged.dataset.id}`);
});
list.addEventListener('dragover', (e) => {
  if (!dragged) return;
  e.preventDefault();
  e.dataTransfer.dropEffect = 'move';
  const over = e.target.closest('li');
  list.querySelectorAll('.over').forEach((el) => el.classList.remove('over'));
  if (over && over !== dragged) over.classList.add('over');
});
list.addEventListener('drop', (e) => {
  e.preventDefault();
  const id = e.dataTransfer.getData('text/plain');
  const item = list.querySelector(`[data-id="${id}"]`);
  const over = e.target.closest('li');
  store.state.html5Events.push(`drop:${id}:${over ? over.dataset.id : 'list'}`);
  if (item && over && over !== item) {
    const box = over.getBoundingClientRect();
    const after = e.clientY > box.top + box.height / 2;
    over.parentNode.insertBefore(item, after ? over.nextSibling : over);
  } else if (item && !over) {
    list.appendChild(item);
  }
  snapshot('html5:drop');
});
list.addEventListener('dragend', () => {
  if (dragged) dragged.classList.remove('dragging');
  list.querySelectorAll('.over').forEach((el) => el.classList.remove('over'));
  store.state.html5Events.push('dragend');
  dragged = null;
  store.render();
});

snapshot();
