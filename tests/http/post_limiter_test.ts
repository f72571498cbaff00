/** The bound on the link's own POSTs (lib/http/post_limiter.ts). */

import { strictEqual } from "node:assert/strict";
import { PostLimiter } from "../../lib/http/post_limiter.ts";

Deno.test("PostLimiter: never more than its limit at once; every task runs", async () => {
  const limiter = new PostLimiter(1);
  let running = 0, most = 0, done = 0;
  const task = () =>
    limiter.run(async () => {
      most = Math.max(most, ++running);
      await Promise.resolve();
      running--;
      done++;
    });
  await Promise.all([task(), task(), task()]);
  strictEqual(most, 1);
  strictEqual(done, 3);
});
