/** The sign-in options of the command line (lib/auth/options.ts). */

import { strictEqual } from "node:assert/strict";
import { readAuthOptions } from "../../lib/auth/options.ts";

Deno.test("readAuthOptions: the redirect port and --no-browser", () => {
  const settings = readAuthOptions({ "redirect-port": "20123", "no-browser": true });
  strictEqual(settings.redirectPort, 20123);
  strictEqual(settings.noBrowser, true);
});
