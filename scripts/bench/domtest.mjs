import { chromium } from 'playwright-core';
import fs from 'fs';
const prelude = `
  const R = (globalThis.__wabpRefs || (globalThis.__wabpRefs = { byId: new Map(), ids: new WeakMap() }));
  const numberOf = (el) => {
    let n = R.ids.get(el);
    if (!n) { n = next++; R.ids.set(el, n); R.byId.set(n, new WeakRef(el)); }
    return n;
  };`;
let src = fs.readFileSync('/work/main/engine/core/src/tab/dom_tree.js', 'utf8'); if (process.argv[3]) src = src.replace(process.argv[3], process.argv[4] || ''); const fn = 'function(next, every, limit) {' + prelude + src + '\n}';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium-headless-shell', headless: true });
const page = await browser.newPage();
const url = process.argv[2];
await page.goto(url);
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const r = await page.evaluate(`(${fn})(1, false, 100000)`); const t2 = performance.now(); await page.evaluate(`JSON.stringify((${fn})(1, false, 100000)).length`); console.log("as string", (performance.now()-t2).toFixed(1));
  console.log('dom tree', (performance.now() - t).toFixed(1), 'ms items', r.items, 'json', JSON.stringify(r).length);
}
await browser.close();
