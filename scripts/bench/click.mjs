// Playwright's nearest equivalent of a wabp click with its envelope:
// screenshot, mouse.click, waitForLoadState, screenshot. For comparison
// with wabp-bench's click, on the same page and browser binary.
// Usage: node click.mjs URL CHROMIUM_PATH [RUNS]
import { chromium } from 'playwright-core';

const [url, executablePath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 50);
const browser = await chromium.launch({ executablePath, headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(url, { waitUntil: 'load' });
  const times = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    await page.screenshot({ type: 'png' });
    await page.mouse.click(60 + (i % 5) * 90, 120);
    await page.waitForLoadState('load');
    await page.screenshot({ type: 'png' });
    if (i >= 3) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], runs }));
} finally {
  await browser.close();
}
