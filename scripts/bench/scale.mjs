// Playwright's side of the 50-tab run in `wabp-bench compare`: N pages at
// once, each taking `clicks` turns of screenshot, click, screenshot.
// Usage: node scale.mjs URL CHROMIUM_PATH TABS CLICKS
import { chromium } from 'playwright-core';

const [url, executablePath, tabsArg, clicksArg] = process.argv.slice(2);
const tabs = Number(tabsArg || 50);
const clicks = Number(clicksArg || 10);
const browser = await chromium.launch({ executablePath, headless: true });
try {
  const pages = [];
  for (let i = 0; i < tabs; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url, { waitUntil: 'load' });
    pages.push(page);
  }
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(pages.map(async (page, p) => {
    for (let i = 0; i < clicks; i++) {
      const s = performance.now();
      await page.screenshot({ type: 'png' });
      await page.mouse.click(60 + ((p + i) % 5) * 90, 120);
      await page.waitForLoadState('load');
      await page.screenshot({ type: 'png' });
      latencies.push(performance.now() - s);
    }
  }));
  const wall = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({
    actions: latencies.length,
    wall_ms: wall,
    per_second: latencies.length / (wall / 1000),
    p50_ms: latencies[Math.floor(latencies.length * 0.5)],
    p95_ms: latencies[Math.floor(latencies.length * 0.95)],
  }));
} finally {
  await browser.close();
}
