/** The failures of the sign-in (lib/auth/failures.ts): their placeholders and the sandbox line. */

import { ok, strictEqual } from "node:assert/strict";
import { sandboxLine, signInFailure } from "../../lib/auth/failures.ts";

Deno.test("signInFailure: the cause with its placeholders", () => {
  const failure = signInFailure("redirect_port_unavailable", undefined, { port: "20001" });
  strictEqual(failure.signIn?.placeholders?.port, "20001");
});

Deno.test("sandboxLine: names login and the origin, never the URL's path or query", () => {
  const line = sandboxLine("mcp-bridge-vscode", "https://mcp.example/k/secret?key=1");
  ok(line.includes("mcp-bridge-vscode login"), line);
  ok(!line.includes("secret") && !line.includes("key=1"), line);
});
