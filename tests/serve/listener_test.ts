import { strictEqual } from "node:assert/strict";
import { isOutOfDescriptors, Listener } from "../../lib/serve/listener.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";

Deno.test("isOutOfDescriptors: EMFILE and ENFILE of the accept loop, nothing else", () => {
  strictEqual(isOutOfDescriptors(new Error("Error: Too many open files (os error 24)")), true);
  strictEqual(isOutOfDescriptors(new Error("Too many open files in system (os error 23)")), true);
  strictEqual(isOutOfDescriptors(new Error("Connection reset by peer (os error 104)")), false);
  strictEqual(isOutOfDescriptors(new Error("os error 240")), false);
  strictEqual(isOutOfDescriptors("boom"), false);
});

Deno.test("Listener: listens on a free port, serves its handler, and shuts down", async () => {
  const listener = new Listener({
    hostname: "127.0.0.1",
    port: 0,
    handler: () => new Response("here"),
    log: SILENT_LOGGER,
  });
  const response = await fetch(`http://127.0.0.1:${listener.port}/`);
  strictEqual(await response.text(), "here");
  await listener.shutdown();
});
