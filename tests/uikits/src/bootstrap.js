import 'bootstrap/dist/css/bootstrap.min.css';
import * as bootstrap from 'bootstrap/dist/js/bootstrap.bundle.min.js';
import { createState } from './state.js';

const store = createState({
  sort: 'newest', modal: 'hidden', displayName: '', savedDisplayName: null,
  openAccordion: ['faq1'], detailsShown: false, brightness: 50, email: '', plan: '',
  agree: false, submitted: 0, formValid: null, wasValidated: false,
});

document.querySelectorAll('[data-sort]').forEach((a) => {
  a.addEventListener('click', (e) => {
    e.preventDefault();
    document.getElementById('sort-label').textContent = a.textContent;
    store.set({ sort: a.dataset.sort }, `sort:${a.dataset.sort}`);
  });
});

const modalEl = document.getElementById('editModal');
const modal = bootstrap.Modal.getOrCreateInstance(modalEl);
for (const ev of ['show', 'shown', 'hide', 'hidden']) {
  modalEl.addEventListener(`${ev}.bs.modal`, () => store.set({ modal: ev }, `modal:${ev}`));
}
document.getElementById('displayName').addEventListener('input', (e) => store.set({ displayName: e.target.value }));
document.getElementById('saveProfile').addEventListener('click', () => {
  store.set({ savedDisplayName: document.getElementById('displayName').value }, 'profile:saved');
  modal.hide();
});

const accordionState = () => [...document.querySelectorAll('#faq .accordion-collapse.show')].map((e) => e.id);
document.getElementById('faq').addEventListener('shown.bs.collapse', () => store.set({ openAccordion: accordionState() }));
document.getElementById('faq').addEventListener('hidden.bs.collapse', () => store.set({ openAccordion: accordionState() }));
const details = document.getElementById('moreDetails');
details.addEventListener('shown.bs.collapse', () => store.set({ detailsShown: true }, 'details:shown'));
details.addEventListener('hidden.bs.collapse', () => store.set({ detailsShown: false }, 'details:hidden'));

const range = document.getElementById('brightness');
range.addEventListener('input', () => {
  document.getElementById('brightness-value').textContent = range.value;
  store.set({ brightness: Number(range.value) });
});
document.getElementById('floatingEmail').addEventListener('input', (e) => store.set({ email: e.target.value }));
document.getElementById('plan').addEventListener('change', (e) => store.set({ plan: e.target.value }));
document.getElementById('agree').addEventListener('change', (e) => store.set({ agree: e.target.checked }));

const form = document.getElementById('signup');
form.addEventListener('submit', (e) => {
  e.preventDefault();
  e.stopPropagation();
  const valid = form.checkValidity();
  form.classList.add('was-validated');
  store.set({ submitted: store.state.submitted + 1, formValid: valid, wasValidated: true }, `submit:${valid}`);
});

store.render();
