// Starts the browserless platform on the Chromium it finds through
// PLAYWRIGHT_BROWSERS_PATH (scripts/test-browserless.sh links Debian's
// there): the routes of browsers not installed (Chrome, Edge, Firefox,
// WebKit) are turned off, as browserless refuses to start with them.
import { Browserless, BrowserlessRoutes } from '@browserless.io/browserless';

const browserless = new Browserless();
browserless.disableRoutes(
  ...Object.values(BrowserlessRoutes).filter((name) => /^(Chrome|Edge|Firefox|WebKit)/.test(name)),
);
await browserless.start();
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await browserless.stop();
    process.exit(0);
  });
}
