// Builds one self-contained static page per UI kit into dist/:
//   dist/NAME.html + dist/NAME.js (+ dist/NAME.css)
// Run with `node build.mjs` after `npm ci`. Needs no network: every asset
// comes from node_modules and the pages fetch nothing at run time.
import { build } from 'esbuild';
import { compile } from 'svelte/compiler';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const only = process.argv.slice(2);

const PAGES = [
  { name: 'react-mui', title: 'Trip planner (MUI)', entry: 'react-mui.jsx', body: '<div id="root"></div>' },
  { name: 'headless', title: 'Team settings (Headless UI)', entry: 'headless.jsx', body: '<div id="root"></div>' },
  { name: 'bootstrap', title: 'Shop admin (Bootstrap)', entry: 'bootstrap.js', bodyFile: 'bootstrap.html' },
  { name: 'vue', title: 'Notebook (Vue)', entry: 'vue.js', body: '<div id="root"></div>' },
  { name: 'svelte', title: 'Task board (Svelte)', entry: 'svelte/main.js', body: '<div id="root"></div>' },
  { name: 'sortable', title: 'Reorder lists (SortableJS and HTML5)', entry: 'sortable.js', bodyFile: 'sortable.html' },
  { name: 'angular', title: 'Order form (Angular)', entry: 'angular/main.ts', body: '<app-root></app-root>' },
];

// Compiles .svelte files with svelte/compiler (client output, CSS injected
// by the component at run time).
const sveltePlugin = {
  name: 'svelte',
  setup(b) {
    b.onLoad({ filter: /\.svelte$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, 'utf8');
      const filename = path.relative(root, args.path);
      const { js, warnings } = compile(source, { filename, generate: 'client', css: 'injected', dev: false });
      return {
        contents: js.code,
        loader: 'js',
        resolveDir: path.dirname(args.path),
        warnings: warnings.map((w) => ({ text: w.message, location: w.start && { file: filename, line: w.start.line, column: w.start.column } })),
      };
    });
  },
};

const define = {
  'process.env.NODE_ENV': '"production"',
  // Vue's esm-bundler build reads these compile-time flags.
  __VUE_OPTIONS_API__: 'true',
  __VUE_PROD_DEVTOOLS__: 'false',
  __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
  // Angular's JIT mode: keep the runtime checks that the CLI would define.
  ngDevMode: 'false',
  ngJitMode: 'true',
  ngI18nClosureMode: 'false',
  ngServerMode: 'false',
  ngHmrMode: 'false',
};

function html(page, hasCss) {
  const body = page.bodyFile ? fs.readFileSync(path.join(src, page.bodyFile), 'utf8').trimEnd() : page.body;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
${hasCss ? `<link rel="stylesheet" href="./${page.name}.css">\n` : ''}</head>
<body>
${body}
<script type="module" src="./${page.name}.js"></script>
</body>
</html>
`;
}

async function buildPage(page) {
  const result = await build({
    entryPoints: { [page.name]: path.join(src, page.entry) },
    outdir: dist,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110'],
    minify: true,
    sourcemap: false,
    metafile: true,
    logLevel: 'warning',
    jsx: 'automatic',
    conditions: ['svelte', 'browser', 'production'],
    alias: { vue: 'vue/dist/vue.esm-bundler.js' },
    define,
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
    assetNames: 'assets/[name]-[hash]',
    tsconfigRaw: { compilerOptions: { experimentalDecorators: true, useDefineForClassFields: false } },
    plugins: [sveltePlugin],
  });
  const outputs = Object.keys(result.metafile.outputs).map((o) => path.basename(o));
  const hasCss = outputs.includes(`${page.name}.css`);
  fs.writeFileSync(path.join(dist, `${page.name}.html`), html(page, hasCss));
  const size = (f) => fs.statSync(path.join(dist, f)).size;
  console.log(`${page.name}.html  js ${size(`${page.name}.js`)} B${hasCss ? `, css ${size(`${page.name}.css`)} B` : ''}`);
}

const pages = only.length ? PAGES.filter((p) => only.includes(p.name)) : PAGES;
if (!only.length) fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
let failed = 0;
for (const page of pages) {
  try {
    await buildPage(page);
  } catch (e) {
    failed++;
    console.error(`${page.name}: build failed: ${e.message}`);
  }
}
fs.writeFileSync(path.join(dist, 'index.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>UI kit pages</title></head>
<body><h1>UI kit pages</h1><ul>
${PAGES.map((p) => `<li><a href="./${p.name}.html">${p.title}</a></li>`).join('\n')}
</ul></body></html>
`);
if (failed) process.exit(1);
