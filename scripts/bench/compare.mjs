// Playwright's side of `wabp-bench compare`: the same pages, the same
// browser binary, the nearest equivalent of each wabp operation.
// Usage: node compare.mjs BASE_URL CHROMIUM_PATH [RUNS]
//   BASE_URL/ : 120 buttons and an input; BASE_URL/big : 2,000 links and buttons.
import { chromium } from 'playwright-core';

const [base, executablePath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 30);
const WARMUP = 3;
const TEXT = 'abcdefghijklmnopqrst';

const median = (v) => { v.sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
async function time(f) {
  const out = [];
  for (let i = 0; i < runs + WARMUP; i++) {
    const t0 = performance.now();
    await f(i);
    if (i >= WARMUP) out.push(performance.now() - t0);
  }
  return median(out);
}

const browser = await chromium.launch({ executablePath, headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base + '/', { waitUntil: 'load' });
  const result = {};
  result.click = await time(async (i) => {
    await page.screenshot({ type: 'png' });
    await page.mouse.click(60 + (i % 5) * 90, 120);
    await page.waitForLoadState('load');
    await page.screenshot({ type: 'png' });
  });
  result.navigate = await time(() => page.goto(base + '/', { waitUntil: 'load' }));
  // The nearest equivalent of a navigation that answers with the page's
  // picture.
  result.navigate_screenshot = await time(async () => {
    await page.goto(base + '/', { waitUntil: 'load' });
    await page.screenshot({ type: 'png' });
  });
  result.screenshot = await time(() => page.screenshot({ type: 'png' }));
  const input = page.locator('input').first();
  result.fill = await time(() => input.fill(TEXT));
  result.type = await time(async () => { await input.fill(''); await input.pressSequentially(TEXT); });
  await page.goto(base + '/big', { waitUntil: 'load' });
  result.snapshot = await time(() =>
    (typeof page.ariaSnapshot === 'function'
      ? page.ariaSnapshot({ mode: 'ai' }).catch(() => page.locator('body').ariaSnapshot())
      : page.locator('body').ariaSnapshot()));
  // The floor under any engine on this browser, over a bare CDP session in
  // this process: Page.navigate until the load event; then one round trip
  // to the new page (the least a freeze after the load needs); or a
  // screenshot (the least an answer with the page's picture needs).
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Page.enable');
  const cdpNavigate = async () => {
    const loaded = new Promise((resolve) => cdp.once('Page.loadEventFired', resolve));
    await cdp.send('Page.navigate', { url: base + '/' });
    await loaded;
  };
  await cdpNavigate();
  result.cdp_navigate = await time(cdpNavigate);
  result.cdp_navigate_round_trip = await time(async () => {
    await cdpNavigate();
    await cdp.send('Runtime.evaluate', { expression: '0' });
  });
  result.cdp_navigate_screenshot = await time(async () => {
    await cdpNavigate();
    await cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true });
  });
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
