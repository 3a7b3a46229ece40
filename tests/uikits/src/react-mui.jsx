import React, { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  Autocomplete, Box, Button, Checkbox, Container, CssBaseline, Dialog, DialogActions,
  DialogContent, DialogContentText, DialogTitle, FormControl, FormControlLabel, FormGroup,
  InputLabel, MenuItem, Paper, Select, Slider, Stack, Switch, Tab, Tabs, TextField, Typography,
} from '@mui/material';
import { LocalizationProvider } from '@mui/x-date-pickers/LocalizationProvider';
import { AdapterDayjs } from '@mui/x-date-pickers/AdapterDayjs';
import { DatePicker } from '@mui/x-date-pickers/DatePicker';
import { createState } from './state.js';

const store = createState({
  fruit: '', country: null, volume: 30, subscribe: false, darkMode: false, name: '',
  dialog: 'closed', dialogNote: '', startDate: null, tab: 'overview',
});

const FRUITS = ['Apple', 'Banana', 'Cherry', 'Durian', 'Elderberry', 'Fig', 'Grape'];
const COUNTRIES = [
  'Argentina', 'Australia', 'Austria', 'Belgium', 'Brazil', 'Canada', 'Chile', 'Denmark',
  'Finland', 'France', 'Germany', 'Greece', 'Iceland', 'India', 'Ireland', 'Italy', 'Japan',
  'Mexico', 'Netherlands', 'Norway', 'Portugal', 'Spain', 'Sweden', 'Switzerland',
];
const TABS = ['overview', 'details', 'history'];

function App() {
  const [fruit, setFruit] = useState('');
  const [country, setCountry] = useState(null);
  const [volume, setVolume] = useState(30);
  const [subscribe, setSubscribe] = useState(false);
  const [darkMode, setDarkMode] = useState(false);
  const [name, setName] = useState('');
  const [dialogOpen, setDialogOpen] = useState(false);
  const [dialog, setDialog] = useState('closed');
  const [dialogNote, setDialogNote] = useState('');
  const [startDate, setStartDate] = useState(null);
  const [tab, setTab] = useState(0);

  useEffect(() => {
    store.set({
      fruit, country, volume, subscribe, darkMode, name, dialog, dialogNote,
      startDate: startDate && startDate.isValid() ? startDate.format('YYYY-MM-DD') : null,
      tab: TABS[tab],
    });
  }, [fruit, country, volume, subscribe, darkMode, name, dialog, dialogNote, startDate, tab]);

  const closeDialog = (how) => {
    setDialogOpen(false);
    setDialog(how);
  };

  return (
    <LocalizationProvider dateAdapter={AdapterDayjs}>
      <CssBaseline />
      <Container maxWidth="md" sx={{ py: 3 }}>
        <Typography variant="h4" component="h1" gutterBottom>Trip planner (MUI)</Typography>
        <Paper sx={{ p: 2, mb: 2 }}>
          <Stack spacing={2}>
            <TextField id="name" label="Name" value={name} onChange={(e) => setName(e.target.value)} />
            <FormControl fullWidth>
              <InputLabel id="fruit-label">Fruit</InputLabel>
              <Select
                labelId="fruit-label" id="fruit-select" label="Fruit" value={fruit}
                onChange={(e) => setFruit(e.target.value)}
              >
                {FRUITS.map((f) => <MenuItem key={f} value={f}>{f}</MenuItem>)}
              </Select>
            </FormControl>
            <Autocomplete
              id="country" options={COUNTRIES} value={country}
              onChange={(_e, v) => setCountry(v)}
              renderInput={(params) => <TextField {...params} label="Country" />}
            />
            <Box>
              <Typography id="volume-label" gutterBottom>Volume</Typography>
              <Slider
                aria-labelledby="volume-label" value={volume} min={0} max={100} step={1}
                valueLabelDisplay="auto" onChange={(_e, v) => setVolume(v)} sx={{ maxWidth: 400 }}
              />
            </Box>
            <FormGroup row>
              <FormControlLabel
                control={<Checkbox checked={subscribe} onChange={(e) => setSubscribe(e.target.checked)} />}
                label="Subscribe to newsletter"
              />
              <FormControlLabel
                control={<Switch checked={darkMode} onChange={(e) => setDarkMode(e.target.checked)} />}
                label="Dark mode"
              />
            </FormGroup>
            <DatePicker label="Start date" value={startDate} onChange={(v) => setStartDate(v)} />
            <Box>
              <Button variant="contained" onClick={() => { setDialogOpen(true); setDialog('open'); }}>
                Open dialog
              </Button>
            </Box>
          </Stack>
        </Paper>
        <Paper sx={{ p: 2, mb: 2 }}>
          <Tabs value={tab} onChange={(_e, v) => setTab(v)} aria-label="Trip sections">
            <Tab label="Overview" id="tab-0" aria-controls="panel-0" />
            <Tab label="Details" id="tab-1" aria-controls="panel-1" />
            <Tab label="History" id="tab-2" aria-controls="panel-2" />
          </Tabs>
          {TABS.map((t, i) => (
            <div key={t} role="tabpanel" hidden={tab !== i} id={`panel-${i}`} aria-labelledby={`tab-${i}`}>
              {tab === i && <Box sx={{ p: 2 }}><Typography>Panel: {t}</Typography></Box>}
            </div>
          ))}
        </Paper>
        <Dialog open={dialogOpen} onClose={() => closeDialog('dismissed')} aria-labelledby="dlg-title">
          <DialogTitle id="dlg-title">Confirm booking</DialogTitle>
          <DialogContent>
            <DialogContentText>Add a note and confirm the booking.</DialogContentText>
            <TextField
              autoFocus margin="dense" id="dialog-note" label="Note" fullWidth
              value={dialogNote} onChange={(e) => setDialogNote(e.target.value)}
            />
          </DialogContent>
          <DialogActions>
            <Button onClick={() => closeDialog('cancelled')}>Cancel</Button>
            <Button onClick={() => closeDialog('confirmed')} variant="contained">Confirm</Button>
          </DialogActions>
        </Dialog>
        <Typography variant="caption" component="p">State:</Typography>
        <output id="app-state" style={{ fontFamily: 'monospace', fontSize: 12 }} />
      </Container>
    </LocalizationProvider>
  );
}

createRoot(document.getElementById('root')).render(<App />);
