import { strictEqual } from "node:assert/strict";
import { isAllowedUrl } from "../../lib/input/url_rule.ts";

const ALLOWED = [
  "https://example.com/",
  "HTTPS://Example.com/path?q=1#f",
  "https://user@example.com/", // https needs no more
  "http://localhost/",
  "http://LOCALHOST:8080/cb",
  "HtTp://127.0.0.1:3000/x",
  "http://127.255.255.254/",
  "http://[::1]:9000/",
  "https://example.com/%41%42",
];
const REFUSED = [
  "http://example.com/",
  "http://127.1/",
  "http://0x7f.0.0.1/",
  "http://2130706433/",
  "http://127.0.0.1.evil.com/",
  "http://localhost.evil.com/",
  "http://[::ffff:127.0.0.1]/",
  "http://user@localhost/",
  "http://user:pw@127.0.0.1/",
  "http://@localhost/",
  "http://%6cocalhost/",
  "http://localhost%2eevil.com/",
  "https://example.com/%zz",
  "http://localhost\\@evil.com/",
  "https://evil.com\\@good.com/",
  "http://local host/",
  "https://exa mple.com/",
  "https:example.com",
  "https:///path",
  "//example.com/",
  "javascript:alert(1)",
  "file:///etc/passwd",
  "ftp://localhost/",
  "http://127.0.0.256/",
  "http://127.00.0.1/",
  "http://localhost:80a/",
  "",
];

for (const url of ALLOWED) {
  Deno.test(`URL rule allows ${url}`, () => strictEqual(isAllowedUrl(url), true));
}
for (const url of REFUSED) {
  Deno.test(`URL rule refuses ${JSON.stringify(url)}`, () => strictEqual(isAllowedUrl(url), false));
}
