import { ok } from "node:assert/strict";
import { authorizationUrlIsValid } from "../../lib/auth/checks.ts";

Deno.test("the checks of an authorization URL: state, redirect URI, PKCE S256", () => {
  const good =
    "https://as.example/authorize?response_type=code&state=S&redirect_uri=R&code_challenge=C&code_challenge_method=S256";
  ok(authorizationUrlIsValid(new URL(good), "S", "R"));
  ok(
    authorizationUrlIsValid(
      new URL(good.replace("https://as.example", "http://127.0.0.1:9")),
      "S",
      "R",
    ),
  );
  ok(!authorizationUrlIsValid(new URL(good), "other", "R"), "not our state");
  ok(!authorizationUrlIsValid(new URL(good.replace("state=S&", "")), "S", "R"), "no state");
  ok(
    !authorizationUrlIsValid(new URL(good), "S", "http://127.0.0.1:1/callback"),
    "not our redirect",
  );
  ok(!authorizationUrlIsValid(new URL(good.replace("S256", "plain")), "S", "R"), "plain PKCE");
  ok(
    !authorizationUrlIsValid(new URL(good.replace("https", "http")), "S", "R"),
    "http, not loopback",
  );
});
