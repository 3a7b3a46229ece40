// The page clock of the compositor driver: freezes a page's own time where
// virtual time can't be used (full Chromium draws no frame while virtual
// time is paused, so input and captures stall). The engine registers this
// script for every new document with the tab's current state, and calls
// `freeze()` / `thaw()` on the main frame, which pass them on to every frame.
//
// While frozen: timers, intervals, requestAnimationFrame and
// requestIdleCallback that come due are held and run after the thaw;
// `Date` and `performance.now()` stand still. Time spent frozen is hidden
// from the page: after a thaw its clock goes on from where it stopped.
// Each page timer keeps its own browser timer, so ordering, nesting clamps
// and microtask checkpoints stay the browser's.
//
// Inside an action's settle the engine fast-forwards the clock (`mark`,
// `advance`): quiet time is skipped, the timers that come due on the way run
// in their order, each at its own time, and CSS and Web Animations skip the
// same time.
//
// Placeholders filled by the engine: the token (a per-tab secret that lets
// cross-origin frames take orders from their parent only through the
// engine's own messages), and the tab's clock for a document that starts
// now: frozen or running, the frozen `Date.now()` or the running shift.
(() => {
  const KEY = '__wabpClock';
  if (Object.prototype.hasOwnProperty.call(window, KEY)) return;
  const TOKEN = '__WABP_CLOCK_TOKEN__';
  const g = window;
  const perf = g.performance;
  const real = {
    setTimeout: g.setTimeout.bind(g),
    clearTimeout: g.clearTimeout.bind(g),
    raf: g.requestAnimationFrame && g.requestAnimationFrame.bind(g),
    caf: g.cancelAnimationFrame && g.cancelAnimationFrame.bind(g),
    ric: g.requestIdleCallback && g.requestIdleCallback.bind(g),
    cic: g.cancelIdleCallback && g.cancelIdleCallback.bind(g),
    now: perf.now.bind(perf),
    Date: g.Date,
    dateNow: g.Date.now,
  };
  // `window.length` as the browser answers it: a page may shadow it (or
  // `frames`) with its own value.
  const lengthGetter = Object.getOwnPropertyDescriptor(g, 'length');
  const frameCount = () => (lengthGetter && lengthGetter.get ? lengthGetter.get.call(g) : 0);
  let frozen = false;
  let frozenAt = 0;
  // Milliseconds added to `Date`: the tab's clock runs behind real time by
  // the time it spent frozen, across documents.
  let shift = __WABP_CLOCK_SHIFT__;
  // Real milliseconds the page did not see (its frozen spans).
  let hidden = 0;
  const pageNow = () => (frozen ? frozenAt : real.now() - hidden);
  const epoch = real.dateNow() - real.now();
  const dateNow = () => Math.floor(epoch + shift + pageNow());

  // ---- timers: one browser timer per page timer, re-armed after a freeze
  const timers = new Map();
  let nextId = 1;
  const arm = (t, delay) => {
    t.real = real.setTimeout(() => fireTimer(t), Math.max(0, delay));
  };
  const fireTimer = (t) => {
    t.real = null;
    if (!timers.has(t.id)) return;
    if (frozen) {
      t.held = true;
      return;
    }
    const left = t.due - pageNow();
    // A freeze since arming shifted the page's time: wait out the rest.
    if (left > 1) return arm(t, left);
    if (t.interval === null) timers.delete(t.id);
    else {
      t.due = pageNow() + t.interval;
      arm(t, t.interval);
    }
    t.callback.apply(g, t.args);
  };
  const addTimer = (callback, delay, args, repeat) => {
    delay = Math.max(0, Number(delay) || 0);
    const id = nextId++;
    const t = { id, callback, args, due: pageNow() + delay, interval: repeat ? delay : null, real: null, held: false };
    timers.set(id, t);
    if (frozen) t.held = true;
    else arm(t, delay);
    return id;
  };
  const clearTimer = (id) => {
    const t = timers.get(id);
    if (!t) return;
    timers.delete(id);
    if (t.real !== null) real.clearTimeout(t.real);
  };
  const wrapTimer = (repeat, fallback) =>
    function (callback, delay, ...args) {
      // A string body is left to the browser (and its CSP), unfrozen.
      if (typeof callback !== 'function') return fallback(callback, delay, ...args);
      return addTimer(callback, delay, args, repeat);
    };
  g.setTimeout = wrapTimer(false, real.setTimeout);
  g.setInterval = wrapTimer(true, g.setInterval.bind(g));
  g.clearTimeout = g.clearInterval = clearTimer;

  // ---- frame and idle callbacks: held while frozen, requested again after
  const deferred = (request, cancel, stamp) => {
    if (!request) return [undefined, undefined];
    const waiting = new Map();
    const held = [];
    let nextCallback = 1;
    const ask = (entry) => {
      entry.real = request((arg) => {
        entry.real = null;
        if (!waiting.has(entry.id)) return;
        if (frozen) return held.push(entry);
        waiting.delete(entry.id);
        entry.callback.call(g, stamp ? stamp(arg) : arg);
      }, entry.options);
    };
    const requestWrapped = function (callback, options) {
      if (typeof callback !== 'function') return request(callback, options);
      const entry = { id: nextCallback++, callback, options, real: null };
      waiting.set(entry.id, entry);
      if (frozen) held.push(entry);
      else ask(entry);
      return entry.id;
    };
    const cancelWrapped = (id) => {
      const entry = waiting.get(id);
      if (!entry) return;
      waiting.delete(id);
      if (entry.real !== null) cancel(entry.real);
    };
    const release = () => {
      for (const entry of held.splice(0)) if (waiting.has(entry.id)) ask(entry);
    };
    return [requestWrapped, cancelWrapped, release];
  };
  const [raf, caf, releaseFrames] = deferred(real.raf, real.caf, (t) => t - hidden);
  const [ric, cic, releaseIdle] = deferred(real.ric, real.cic, null);
  if (raf) {
    g.requestAnimationFrame = raf;
    g.cancelAnimationFrame = caf;
  }
  if (ric) {
    g.requestIdleCallback = ric;
    g.cancelIdleCallback = cic;
  }

  // ---- Date and performance.now on the page's time
  const RealDate = real.Date;
  const PageDate = function Date(...args) {
    if (!new.target) return new RealDate(dateNow()).toString();
    if (args.length === 0) return Reflect.construct(RealDate, [dateNow()], new.target);
    return Reflect.construct(RealDate, args, new.target);
  };
  Object.defineProperty(PageDate, 'length', { value: 7 });
  Object.setPrototypeOf(PageDate, RealDate);
  PageDate.prototype = RealDate.prototype;
  PageDate.now = function now() {
    return dateNow();
  };
  Object.defineProperty(RealDate.prototype, 'constructor', { value: PageDate, writable: true, configurable: true });
  g.Date = PageDate;
  Object.getPrototypeOf(perf).now = function now() {
    return pageNow();
  };

  // ---- orders, passed on to every frame below this one
  const pass = (op, arg) => {
    for (let i = 0, n = frameCount(); i < n; i++) {
      const frame = g[i];
      try {
        frame[KEY][op](arg);
      } catch (_) {
        // Cross-origin: by message, which only this clock's token opens.
        try {
          frame.postMessage({ [KEY]: TOKEN, op, arg }, '*');
        } catch (_) {}
      }
    }
  };

  // ---- fast-forward: the engine skips a settle window's quiet time
  // Moves the page's time to `to` (never back); answers how far it moved.
  const jumpTo = (to) => {
    const by = to - pageNow();
    if (!(by > 0)) return 0;
    if (frozen) frozenAt = to;
    else hidden -= by;
    return by;
  };
  const RealChannel = g.MessageChannel;
  const portProto = g.MessagePort && g.MessagePort.prototype;
  const realPortPost = portProto && portProto.postMessage;
  // Resolves after one macrotask: microtasks the callbacks queued have run,
  // and so have the requests they started; so have the messages the page
  // posted before (their tasks come first).
  const nextTask = () =>
    new Promise((resolve) => {
      if (!RealChannel || !realPortPost) return real.setTimeout(resolve, 0);
      const channel = new RealChannel();
      channel.port1.onmessage = () => resolve();
      realPortPost.call(channel.port2, 0);
    });
  // ---- posted tasks: a message the page posts (a MessageChannel port's, as
  // React's scheduler posts them, or the window's own) queues a task the
  // clock does not hold. Counted, so that the mark waits for them only when
  // the dispatch queued some: after an input event the renderer runs its
  // frame before posted tasks, and waiting costs a frame.
  let posted = 0;
  let postedAtThaw = 0;
  const countPosts = (owner) => {
    const post = owner && owner.postMessage;
    if (typeof post !== 'function') return;
    owner.postMessage = function postMessage(...args) {
      posted++;
      return post.apply(this, args);
    };
  };
  countPosts(portProto);
  countPosts(g);
  // A form's submission navigates from a task of its own too: counted when
  // the form submits (its `submit` event, or `form.submit()`, which has
  // none), whether or not a handler then cancels it.
  if (typeof g.addEventListener === 'function') {
    g.addEventListener('submit', () => { posted++; }, true);
  }
  const formProto = g.HTMLFormElement && g.HTMLFormElement.prototype;
  const realSubmit = formProto && formProto.submit;
  if (typeof realSubmit === 'function') {
    formProto.submit = function submit(...args) {
      posted++;
      return realSubmit.apply(this, args);
    };
  }
  // At most this many callbacks per call: a zero-delay interval must not
  // hold the page.
  const MAX_CALLBACKS = 500;
  // Moves the page's time forward by up to `ms`, running the timers that
  // come due on the way, in their order, each at its own time. `stepwise`
  // stops after the first instant at which callbacks ran, so the engine
  // sees whether they started a request or a navigation before going on.
  // CSS and Web Animations skip the same time; frames below follow.
  const advance = (ms, stepwise) => {
    const target = pageNow() + Math.max(0, Number(ms) || 0);
    let jumped = 0;
    let ran = 0;
    let reached = true;
    while (ran < MAX_CALLBACKS) {
      let next = null;
      for (const t of timers.values()) {
        if (t.due <= target && (next === null || t.due < next.due)) next = t;
      }
      if (next === null) break;
      if (stepwise && ran > 0 && next.due > pageNow()) {
        reached = false;
        break;
      }
      jumped += jumpTo(next.due);
      if (next.real !== null) real.clearTimeout(next.real);
      next.real = null;
      next.held = false;
      if (next.interval === null) timers.delete(next.id);
      else {
        next.due = pageNow() + Math.max(1, next.interval);
        if (frozen) next.held = true;
        else arm(next, next.due - pageNow());
      }
      ran++;
      try {
        next.callback.apply(g, next.args);
      } catch (e) {
        // Reported as an uncaught error, as the browser's timer would.
        real.setTimeout(() => {
          throw e;
        }, 0);
      }
    }
    if (ran >= MAX_CALLBACKS) reached = false;
    if (reached) jumped += jumpTo(target);
    if (jumped > 0) {
      // Browser timers still armed for the old time come due sooner now.
      if (!frozen) {
        for (const t of timers.values()) {
          if (t.real === null) continue;
          real.clearTimeout(t.real);
          arm(t, t.due - pageNow());
        }
      }
      try {
        for (const a of document.getAnimations()) {
          if (a.playState === 'running' && typeof a.currentTime === 'number') {
            a.currentTime += jumped * a.playbackRate;
          }
        }
      } catch (_) {}
      pass('advanceAll', jumped);
    }
    return { jumped, ran, since: mark === null ? null : pageNow() - mark };
  };
  // The engine's budget `ms`, made up to `until` ms since the mark when the
  // page saw less of the time since than the engine counts (its clock
  // resumes a frame after a thaw): the settle then ends in one step.
  const catchUp = (ms, until) => {
    const budget = Math.max(0, Number(ms) || 0);
    if (mark === null || typeof until !== 'number') return budget;
    return Math.max(budget, until - (pageNow() - mark));
  };
  // A thaw takes effect one frame later: a short command (a script, a read)
  // runs with the clock still, as on the deterministic driver, and a freeze
  // that comes first cancels it.
  const THAW_DELAY_MS = 16;
  let resuming = null;
  // The page's time at the engine's mark (the end of an action's
  // dispatch): a fast-forward answers the page time since, exactly.
  let mark = null;
  const resume = () => {
    resuming = null;
    if (!frozen) return;
    hidden = real.now() - frozenAt;
    frozen = false;
    for (const t of timers.values()) if (t.held) {
      t.held = false;
      arm(t, t.due - pageNow());
    }
    releaseFrames && releaseFrames();
    releaseIdle && releaseIdle();
  };
  const api = {
    // Freezes; `at` (ms since the epoch) sets where `Date` stands. Answers
    // the frozen `Date.now()`.
    freeze(at) {
      if (resuming !== null) {
        real.clearTimeout(resuming);
        resuming = null;
      }
      if (!frozen) {
        frozenAt = real.now() - hidden;
        frozen = true;
      }
      if (typeof at === 'number') shift += at - dateNow();
      pass('freeze');
      return dateNow();
    },
    thaw() {
      if (frozen && resuming === null) resuming = real.setTimeout(resume, THAW_DELAY_MS);
      pass('thaw');
      postedAtThaw = posted;
      return true;
    },
    // The engine's fast-forward: a promise when callbacks ran (it resolves
    // once their microtasks and the next task have run).
    advance(ms, until) {
      const step = advance(catchUp(ms, until), true);
      return step.ran > 0 ? nextTask().then(() => step) : step;
    },
    // The engine's fast-forward when it expects the settle to end there: as
    // `advance`, and when no callback ran, the page freezes in the same
    // task (it ran nothing, so it started nothing), answering the frozen
    // `Date.now()` as `frozenAt`. One round trip instead of three, each of
    // which could land behind the page's next frame.
    settle(ms, until) {
      const step = advance(catchUp(ms, until), true);
      if (step.ran > 0) return nextTask().then(() => step);
      step.frozenAt = api.freeze();
      return step;
    },
    // Marks the end of an action's dispatch. When the page posted messages
    // since the thaw, answers a task later: the tasks they queued have run
    // by then, and the requests they started are signalled to the engine
    // before the answer.
    mark() {
      mark = pageNow();
      return posted === postedAtThaw ? true : nextTask().then(() => true);
    },
    // A frame below follows its parent's fast-forward whole.
    advanceAll(ms) {
      advance(ms, false);
      return true;
    },
    frozen: () => frozen,
    now: () => dateNow(),
  };
  g.addEventListener(
    'message',
    (e) => {
      const data = e.data;
      if (e.source !== g.parent || !data || typeof data !== 'object' || data[KEY] !== TOKEN) return;
      e.stopImmediatePropagation();
      if (data.op === 'freeze' || data.op === 'thaw') api[data.op]();
      else if (data.op === 'advanceAll' && typeof data.arg === 'number') api.advanceAll(data.arg);
    },
    true,
  );
  Object.defineProperty(g, KEY, { value: Object.freeze(api), enumerable: false });
  // A document starts in its parent frame's state and time when it can see
  // them, else in the tab's (filled in by the engine).
  let start = __WABP_CLOCK_FROZEN__;
  let at = __WABP_CLOCK_AT__;
  try {
    if (g.parent !== g && g.parent[KEY]) {
      start = g.parent[KEY].frozen();
      at = g.parent[KEY].now();
    }
  } catch (_) {}
  if (typeof at === 'number') shift += at - dateNow();
  if (start) api.freeze();
})();
