import { createApp, reactive, computed, watch, onMounted, onUnmounted, ref } from 'vue';
import { createState } from './state.js';
import './vue.css';

const store = createState({});

const VIEWS = { home: 'Home', items: 'Items', settings: 'Settings' };
const viewFromUrl = () => {
  const v = new URLSearchParams(location.search).get('view');
  return v && v in VIEWS ? v : 'home';
};

const App = {
  template: `
  <header>
    <h1>Notebook (Vue)</h1>
    <nav aria-label="Main">
      <a v-for="(label, key) in views" :key="key" :href="'?view=' + key"
         :class="{ active: view === key }" :aria-current="view === key ? 'page' : null"
         @click.prevent="go(key)">{{ label }}</a>
    </nav>
  </header>
  <main>
    <section v-if="view === 'home'" aria-labelledby="home-h">
      <h2 id="home-h">Profile</h2>
      <div class="field"><label for="name">Name</label><input id="name" v-model="form.name" placeholder="Your name"></div>
      <div class="field"><label for="age">Age</label><input id="age" type="number" v-model.number="form.age" min="0" max="130"></div>
      <div class="field"><label><input type="checkbox" v-model="form.newsletter"> Send me the newsletter</label></div>
      <fieldset class="field">
        <legend>Favourite colour</legend>
        <label v-for="c in colours" :key="c"><input type="radio" name="colour" :value="c" v-model="form.colour"> {{ c }}</label>
      </fieldset>
      <div class="field"><label for="size">Size</label>
        <select id="size" v-model="form.size">
          <option disabled value="">Please select one</option>
          <option value="S">Small</option><option value="M">Medium</option><option value="L">Large</option>
        </select>
      </div>
      <div class="field"><label for="toppings">Toppings</label>
        <select id="toppings" multiple v-model="form.toppings" size="4">
          <option>Cheese</option><option>Ham</option><option>Olives</option><option>Peppers</option>
        </select>
      </div>
      <div class="field"><label for="bio">Bio</label><textarea id="bio" v-model="form.bio" rows="3"></textarea></div>
      <p class="summary">Hello {{ form.name || 'stranger' }}<span v-if="form.age !== ''">, age {{ form.age }}</span>.</p>
    </section>

    <section v-else-if="view === 'items'" aria-labelledby="items-h">
      <h2 id="items-h">Items</h2>
      <form @submit.prevent="addItem" class="row">
        <label for="new-item" class="sr">New item</label>
        <input id="new-item" v-model="newItem" placeholder="What needs doing?">
        <button type="submit">Add</button>
      </form>
      <ul class="items">
        <li v-for="item in items" :key="item.id">
          <label><input type="checkbox" v-model="item.done"> <span :class="{ done: item.done }">{{ item.text }}</span></label>
          <button type="button" :aria-label="'Remove ' + item.text" @click="removeItem(item.id)">Remove</button>
        </li>
      </ul>
      <p>{{ remaining }} of {{ items.length }} left</p>
    </section>

    <section v-else aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <div class="field"><label><input type="checkbox" v-model="form.compact"> Compact layout</label></div>
      <p>Visited views: {{ visits.join(', ') }}</p>
    </section>
  </main>
  <footer><p>State:</p><output id="app-state"></output></footer>
  `,
  setup() {
    const view = ref(viewFromUrl());
    const visits = reactive([view.value]);
    const form = reactive({ name: '', age: '', newsletter: false, colour: '', size: '', toppings: [], bio: '', compact: false });
    const items = reactive([
      { id: 1, text: 'Buy milk', done: false },
      { id: 2, text: 'Write report', done: true },
      { id: 3, text: 'Call Alice', done: false },
    ]);
    let nextId = 4;
    const newItem = ref('');
    const go = (key) => {
      if (key === view.value) return;
      history.pushState({ view: key }, '', `?view=${key}`);
      view.value = key;
      visits.push(key);
    };
    const onPop = () => { view.value = viewFromUrl(); visits.push(view.value); };
    onMounted(() => { window.addEventListener('popstate', onPop); store.render(); });
    onUnmounted(() => window.removeEventListener('popstate', onPop));
    const addItem = () => {
      const text = newItem.value.trim();
      if (!text) return;
      items.push({ id: nextId++, text, done: false });
      newItem.value = '';
    };
    const removeItem = (id) => {
      const i = items.findIndex((it) => it.id === id);
      if (i >= 0) items.splice(i, 1);
    };
    const remaining = computed(() => items.filter((i) => !i.done).length);
    watch([view, form, items, visits, newItem], () => {
      store.set({
        view: view.value, url: location.pathname + location.search, form: JSON.parse(JSON.stringify(form)),
        items: items.map((i) => ({ text: i.text, done: i.done })), newItem: newItem.value, visits: [...visits],
      });
    }, { deep: true, immediate: true, flush: 'post' });
    return { view, views: VIEWS, visits, form, items, newItem, go, addItem, removeItem, remaining, colours: ['Red', 'Green', 'Blue'] };
  },
};

createApp(App).mount('#root');
