// Shared helper: every page keeps its current values in `window.appState`
// and mirrors them as JSON into `<output id="app-state">`, so a test can
// read them with a script or as page text.
export function createState(initial) {
  const state = { ...initial, log: [] };
  window.appState = state;
  const render = () => {
    const out = document.getElementById('app-state');
    if (out) out.textContent = JSON.stringify({ ...state, log: undefined });
  };
  return {
    state,
    set(patch, note) {
      Object.assign(state, patch);
      if (note) state.log.push(note);
      render();
    },
    render,
  };
}
