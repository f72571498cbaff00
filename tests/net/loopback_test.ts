import { strictEqual } from "node:assert/strict";
import { isLoopbackHost } from "../../lib/net/loopback.ts";

// [host, loopback?, why]. The rows marked "differed" are those where the three
// old copies (input/url_rule.ts, upstream/http_options.ts, auth/checks.ts)
// gave different answers.
const CASES: readonly (readonly [string, boolean, string])[] = [
  ["localhost", true, "the name"],
  ["LOCALHOST", true, "differed: auth/checks.ts was case-sensitive"],
  ["LocalHost", true, "differed: auth/checks.ts was case-sensitive"],
  ["127.0.0.1", true, "the usual address"],
  ["127.255.255.254", true, "any address of 127.0.0.0/8"],
  ["127.0.0.0", true, "the first address of 127.0.0.0/8"],
  ["[::1]", true, "IPv6 as URL.hostname gives it"],
  ["::1", true, "IPv6 without brackets"],
  ["127.00.0.1", false, "differed: a leading zero passed the \\d+ of two copies"],
  ["127.0.0.256", false, "differed: an octet over 255 passed the \\d+ of two copies"],
  ["127.999.999.999", false, "differed: the \\d+ of two copies"],
  ["127.1", false, "a short form"],
  ["0x7f.0.0.1", false, "hexadecimal"],
  ["2130706433", false, "one number"],
  ["128.0.0.1", false, "outside 127.0.0.0/8"],
  ["127.0.0.1.evil.com", false, "a name that starts like the address"],
  ["localhost.evil.com", false, "a name that starts like localhost"],
  ["evil.localhost", false, "a name that ends in localhost"],
  ["localhost.", false, "a trailing dot"],
  ["[0:0:0:0:0:0:0:1]", false, "a long form of ::1 (URL.hostname never gives it)"],
  ["[::ffff:127.0.0.1]", false, "IPv4 mapped in IPv6"],
  ["[::1]:80", false, "a port"],
  ["[::2]", false, "another IPv6 address"],
  ["example.com", false, "a name"],
  ["", false, "nothing"],
];

for (const [host, expected, why] of CASES) {
  Deno.test(`isLoopbackHost(${JSON.stringify(host)}) is ${expected}: ${why}`, () => {
    strictEqual(isLoopbackHost(host), expected);
  });
}

Deno.test("isLoopbackHost: every loopback URL.hostname of http and https is loopback", () => {
  for (
    const url of [
      "http://LOCALHOST:8080/",
      "http://127.00.0.1/",
      "https://127.0.0.1./",
      "http://[0:0:0:0:0:0:0:1]/",
      "http://[::1]:9000/x",
    ]
  ) {
    const hostname = new URL(url).hostname;
    strictEqual(isLoopbackHost(hostname), true, `${url} → ${hostname}`);
  }
});
