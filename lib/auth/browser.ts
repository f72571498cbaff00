/**
 * Opens the browser for a sign-in: `$BROWSER` when set (a command that gets
 * the URL as its one argument), else the opener of the platform (`xdg-open`,
 * `open`, `cmd /c start`). The opener's output never reaches stdout.
 *
 * @module
 */

/** Opens a URL; resolves false when no browser could be started. */
export type OpenBrowser = (url: string) => Promise<boolean>;

/** The command line that opens `url` on this platform. */
export function browserCommand(
  url: string,
  env: (name: string) => string | undefined,
  os: typeof Deno.build.os = Deno.build.os,
): [string, ...string[]] {
  const browser = env("BROWSER")?.trim();
  if (browser) return [browser, url];
  switch (os) {
    case "darwin":
      return ["open", url];
    case "windows":
      // `start` takes its first quoted argument as a title: give it an empty one.
      return ["cmd", "/c", "start", '""', url.replaceAll("&", "^&")];
    default:
      return ["xdg-open", url];
  }
}

/**
 * The opener of the bridge. It waits for the opener to exit (xdg-open and
 * `open` return at once), but not for a `$BROWSER` that keeps running.
 */
export function systemBrowser(env: (name: string) => string | undefined): OpenBrowser {
  return async (url) => {
    const [command, ...args] = browserCommand(url, env);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(command, {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    } catch {
      return false;
    }
    // A browser that stays open is a browser that opened: wait a moment only.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exit = await Promise.race([
      child.status.then((status) => status.success),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), 2_000)),
    ]);
    clearTimeout(timer);
    child.unref();
    return exit;
  };
}
