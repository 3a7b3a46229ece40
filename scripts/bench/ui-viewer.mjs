// A person watching a tab in wabp's web UI, for `wabp-bench ui`: signs in
// with the link `serve` prints, opens the live view, and notes when each
// frame arrives (Date.now(), the clock the bench reads too).
// Usage: node ui-viewer.mjs LOGIN_URL CHROMIUM_PATH
// Reads commands on stdin, one per line, and answers each with a JSON line:
//   watch URL   open a live view            -> {"ready": true}
//   open URL    open any page               -> {"ready": true}
//   report      frames since the last report -> {"arrivals": [ms, ...]}
//   load URL    open a page, wait for its first after screenshot -> {"ms": n}
//   quit
import { chromium } from 'playwright-core';
import readline from 'node:readline';

const [login, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
await page.goto(login);
const say = (v) => process.stdout.write(JSON.stringify(v) + '\n');
say({ signed_in: page.url() });

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command, arg] = line.trim().split(/\s+/, 2);
  if (command === 'watch') {
    await page.goto(arg);
    await page.waitForSelector('#view');
    await page.evaluate(() => {
      window.__arrivals = [];
      const view = document.getElementById('view');
      new MutationObserver(() => window.__arrivals.push(Date.now()))
        .observe(view, { attributes: true, attributeFilter: ['data-frames-seen'] });
    });
    say({ ready: true });
  } else if (command === 'open') {
    await page.goto(arg);
    say({ ready: true });
  } else if (command === 'report') {
    say({ arrivals: await page.evaluate(() => window.__arrivals.splice(0)) });
  } else if (command === 'load') {
    const t0 = Date.now();
    await page.goto(arg, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(async () => {
      const img = document.querySelector('#detail img.shot[data-which=after]');
      if (!img) return false;
      try { await img.decode(); } catch (e) { return false; }
      return img.naturalWidth > 0;
    }, null, { polling: 10 });
    say({ ms: Date.now() - t0 });
  } else if (command === 'quit') {
    break;
  }
}
await browser.close();
