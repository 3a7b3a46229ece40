// Playwright's ariaSnapshot() on a page, for comparison with wabp's
// GET /snapshot. Usage: node aria-snapshot.mjs URL CHROMIUM_PATH [RUNS]
// Needs playwright-core (npm install playwright-core in this folder).
import { chromium } from 'playwright-core';

const [url, executablePath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 10);
const browser = await chromium.launch({ executablePath, headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(url, { waitUntil: 'load' });
  const times = [];
  let text = '';
  const aiMode = typeof page.ariaSnapshot === 'function';
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    // `mode: 'ai'` adds [ref=eN] markers, the closest to wabp's refs;
    // fall back to the plain locator snapshot on versions without it.
    text = aiMode
      ? await page.ariaSnapshot({ mode: 'ai' }).catch(() => page.locator('body').ariaSnapshot())
      : await page.locator('body').ariaSnapshot();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const refs = (text.match(/\[ref=/g) || []).length;
  console.log(JSON.stringify({
    first_ms: times.length ? times[0] : 0,
    median_ms: times[Math.floor(times.length / 2)],
    chars: text.length,
    refs,
    mode: aiMode ? 'page.ariaSnapshot(ai)' : 'locator(body).ariaSnapshot()',
  }));
} finally {
  await browser.close();
}
