import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { browserCommand, systemBrowser } from "../../lib/auth/browser.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("the opener: $BROWSER with the URL as its one argument, else the platform's", () => {
  const url = "http://127.0.0.1:20001/start/abc?x=1&y=2";
  deepStrictEqual(browserCommand(url, env({ BROWSER: "/opt/my browser" }), "linux"), [
    "/opt/my browser",
    url,
  ]);
  deepStrictEqual(browserCommand(url, env({}), "linux"), ["xdg-open", url]);
  deepStrictEqual(browserCommand(url, env({}), "darwin"), ["open", url]);
  deepStrictEqual(browserCommand(url, env({}), "windows"), [
    "cmd",
    "/c",
    "start",
    '""',
    "http://127.0.0.1:20001/start/abc?x=1^&y=2",
  ]);
});

Deno.test("a $BROWSER that cannot start, or that fails, is a browser that did not open", async () => {
  strictEqual(
    await systemBrowser(env({ BROWSER: "/nonexistent/browser" }))("http://127.0.0.1:1/"),
    false,
  );
  strictEqual(await systemBrowser(env({ BROWSER: "false" }))("http://127.0.0.1:1/"), false);
  strictEqual(await systemBrowser(env({ BROWSER: "true" }))("http://127.0.0.1:1/"), true);
});
