import React, { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  Combobox, ComboboxButton, ComboboxInput, ComboboxOption, ComboboxOptions,
  Dialog, DialogPanel, DialogTitle, Description, Field, Label,
  Listbox, ListboxButton, ListboxOption, ListboxOptions,
  Menu, MenuButton, MenuItem, MenuItems, Switch,
} from '@headlessui/react';
import { createState } from './state.js';
import './headless.css';

const store = createState({
  assignee: 'Durward Reynolds', city: null, cityQuery: '', lastMenuAction: null,
  notifications: false, dialog: 'closed',
});

const PEOPLE = [
  'Durward Reynolds', 'Kenton Towne', 'Therese Wunsch', 'Benedict Kessler', 'Katelyn Rohan',
];
const CITIES = [
  'Amsterdam', 'Athens', 'Barcelona', 'Berlin', 'Bern', 'Brussels', 'Budapest', 'Copenhagen',
  'Dublin', 'Helsinki', 'Lisbon', 'London', 'Madrid', 'Oslo', 'Paris', 'Prague', 'Rome',
  'Stockholm', 'Vienna', 'Warsaw',
];

function App() {
  const [assignee, setAssignee] = useState(PEOPLE[0]);
  const [city, setCity] = useState(null);
  const [query, setQuery] = useState('');
  const [lastMenuAction, setLastMenuAction] = useState(null);
  const [notifications, setNotifications] = useState(false);
  const [dialogOpen, setDialogOpen] = useState(false);
  const [dialog, setDialog] = useState('closed');

  useEffect(() => {
    store.set({ assignee, city, cityQuery: query, lastMenuAction, notifications, dialog });
  }, [assignee, city, query, lastMenuAction, notifications, dialog]);

  const filtered = query === ''
    ? CITIES
    : CITIES.filter((c) => c.toLowerCase().includes(query.toLowerCase()));

  const closeDialog = (how) => { setDialogOpen(false); setDialog(how); };

  return (
    <main>
      <h1>Team settings (Headless UI)</h1>

      <section>
        <Field>
          <Label className="label">Assignee</Label>
          <Listbox value={assignee} onChange={setAssignee}>
            <ListboxButton className="btn select-btn">{assignee}</ListboxButton>
            <ListboxOptions anchor="bottom start" className="popover options">
              {PEOPLE.map((p) => (
                <ListboxOption key={p} value={p} className="option">{p}</ListboxOption>
              ))}
            </ListboxOptions>
          </Listbox>
        </Field>
      </section>

      <section>
        <Field>
          <Label className="label">City</Label>
          <Combobox value={city} onChange={setCity} onClose={() => setQuery('')}>
            <div className="combo">
              <ComboboxInput
                className="input"
                placeholder="Type a city"
                displayValue={(c) => c ?? ''}
                onChange={(e) => setQuery(e.target.value)}
              />
              <ComboboxButton className="btn combo-btn" aria-label="Show cities">▾</ComboboxButton>
            </div>
            <ComboboxOptions anchor="bottom start" className="popover options">
              {filtered.length === 0 && <div className="empty">No city found</div>}
              {filtered.map((c) => (
                <ComboboxOption key={c} value={c} className="option">{c}</ComboboxOption>
              ))}
            </ComboboxOptions>
          </Combobox>
        </Field>
      </section>

      <section>
        <span className="label">Actions</span>
        <Menu>
          <MenuButton className="btn">Options</MenuButton>
          <MenuItems anchor="bottom start" className="popover options">
            {['Edit', 'Duplicate', 'Archive', 'Delete'].map((a) => (
              <MenuItem key={a}>
                <button type="button" className="option menu-item" onClick={() => setLastMenuAction(a)}>{a}</button>
              </MenuItem>
            ))}
          </MenuItems>
        </Menu>
      </section>

      <section>
        <Field className="row">
          <Switch checked={notifications} onChange={setNotifications} className="switch">
            <span className="knob" />
          </Switch>
          <Label>Enable notifications</Label>
        </Field>
      </section>

      <section>
        <button type="button" className="btn danger" onClick={() => { setDialogOpen(true); setDialog('open'); }}>
          Deactivate account
        </button>
        <Dialog open={dialogOpen} onClose={() => closeDialog('dismissed')} className="dialog-root">
          <div className="backdrop" aria-hidden="true" />
          <div className="dialog-wrap">
            <DialogPanel className="dialog-panel">
              <DialogTitle>Deactivate account</DialogTitle>
              <Description>This will deactivate your account.</Description>
              <p>Are you sure? All of your data will be kept for 30 days.</p>
              <div className="row">
                <button type="button" className="btn" onClick={() => closeDialog('cancelled')}>Cancel</button>
                <button type="button" className="btn danger" onClick={() => closeDialog('deactivated')}>Deactivate</button>
              </div>
            </DialogPanel>
          </div>
        </Dialog>
      </section>

      <p className="label">State:</p>
      <output id="app-state" />
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
