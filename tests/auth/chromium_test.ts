/**
 * The sign-in with a real browser: Debian's chromium, driven by
 * playwright-core, signs in through oidc-provider's own login and consent
 * pages and shows the bridge's page after the redirect. Where chromium is
 * not installed the test is ignored and says so on stderr.
 */

import { ok, strictEqual } from "node:assert/strict";
import fs from "node:fs";
import { call, leaks, setup } from "./harness.ts";

// playwright-core asks at load whether it runs in WSL by reading /proc/sys/fs/binfmt_misc,
// which Deno allows only with --allow-all. This test does not run in WSL: answer for it.
const WSL_PROBE = "/proc/sys/fs/binfmt_misc/WSLInterop";
const existsSync = fs.existsSync;
fs.existsSync =
  ((path: fs.PathLike) =>
    String(path) === WSL_PROBE ? false : existsSync(path)) as typeof fs.existsSync;
const { chromium } = await import("playwright-core");

const CHROMIUM = "/usr/bin/chromium";
const installed = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();
if (!installed) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      `skipped: the real-browser sign-in test needs ${CHROMIUM} (apt-get install chromium)\n`,
    ),
  );
}

Deno.test({
  name: installed
    ? "a real browser (chromium) signs in through the provider's pages and reads the bridge's page"
    : "a real browser signs in (skipped: chromium is missing)",
  ignore: !installed,
  fn: async () => {
    const profile = await Deno.makeTempDir({ prefix: "auth-chromium-" });
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    let finalText = "";
    const world = await setup({
      settings: {
        openBrowser: (url) => {
          void (async () => {
            const page = await context.newPage();
            await page.goto(url);
            // oidc-provider's login page, then its consent page.
            await page.fill('input[name="login"]', "alice");
            await page.fill('input[name="password"]', "secret");
            await page.click('button[type="submit"]');
            await page.waitForSelector('button[type="submit"]');
            await page.click('button[type="submit"]');
            await page.waitForURL(/127\.0\.0\.1:\d+\/callback/);
            await page.waitForSelector("h1");
            finalText = await page.textContent("body") ?? "";
          })().catch((error) => finalText = `browser failed: ${error}`);
          return Promise.resolve(true);
        },
      },
    });
    try {
      const response = await call(world);
      strictEqual(response.status, 200);
      await response.body?.cancel();
      const deadline = Date.now() + 10_000;
      while (finalText === "" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      ok(finalText.includes("The sign-in is done"), finalText);
      ok(finalText.includes("close this tab"), finalText);
      strictEqual(leaks(world, finalText + world.log.join("")).length, 0);
    } finally {
      await context.close();
      await world.close();
      await Deno.remove(profile, { recursive: true });
    }
  },
});
