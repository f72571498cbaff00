/**
 * The error table of the bridge: each cause with its JSON-RPC code and its
 * fixed message. VS Code shows the message to the user after "MPC : ", and
 * the model reads it too, so the messages are short, plain sentences and
 * never hold a secret, the URL of the upstream server or the stderr of the
 * child. `deno task lint-messages` checks them.
 *
 * @module
 */

/**
 * JSON-RPC 2.0 error codes.
 */
export const CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** The sentence of the messages whose error has a line in the Output channel (the log). */
export const SEE_OUTPUT = "See the Output channel of the server.";
const REGISTER =
  "Register a client with the redirect URI {redirect_uri} at the authorization server. " +
  "Then give its client ID with --client-id and its issuer with --client-issuer.";

/** One row of the table. `code: null` is the canceled row: it has no response. */
export interface ErrorRow {
  readonly code: number | null;
  readonly message: string;
}

/** Every cause of the spec's error table, as data. */
export const ERROR_TABLE = {
  rpc: { code: -32603, message: `The upstream server sent an error. ${SEE_OUTPUT}` },
  canceled: { code: null, message: "The client canceled the request." },
  timeout: { code: -32603, message: `The upstream server did not answer in time. ${SEE_OUTPUT}` },
  closed: { code: -32603, message: `The upstream server process stopped. ${SEE_OUTPUT}` },
  transport_failed: {
    code: -32603,
    message: `The connection to the upstream server failed. ${SEE_OUTPUT}`,
  },
  invalid_response: {
    code: -32603,
    message: `The upstream server sent a response that is not valid. ${SEE_OUTPUT}`,
  },
  too_many_rounds: {
    code: -32603,
    message: `The upstream server asked for input too many times. ${SEE_OUTPUT}`,
  },
  out_of_memory: {
    code: -32603,
    message: "The bridge does not have sufficient memory for the request.",
  },
  undeclared_input_request: {
    code: -32603,
    message: "The upstream server asked for input that the client did not declare.",
  },
  hook_failed: {
    code: -32603,
    message: "The bridge cannot give the input that the upstream server asked for.",
  },
  not_connected: {
    code: -32603,
    message: `The bridge has no connection to the upstream server. ${SEE_OUTPUT}`,
  },
  task_cancelled: {
    code: -32603,
    message: "The upstream server canceled the task of the request.",
  },
  invalid_request: {
    code: -32602,
    message: "The bridge cannot send the parameters of the request to the upstream server.",
  },
  invalid_meta: {
    code: -32602,
    message: "The request has a _meta key that the bridge cannot send to the upstream server.",
  },
  spawn_failed: {
    code: -32603,
    message: "The bridge cannot start the upstream server. " +
      `Examine the command in the configuration of the server. ${SEE_OUTPUT}`,
  },
  connect_failed: {
    code: -32603,
    message: "The bridge cannot make the client for the URL of the upstream server. " +
      `Examine the URL, the proxy variables and the CA certificates. ${SEE_OUTPUT}`,
  },
  discover_failed: {
    code: -32603,
    message: "The upstream server did not answer server/discover. " +
      "It is not an MCP server of revision 2026-07-28, or it does not respond. " + SEE_OUTPUT,
  },
  upstream_exited: { code: -32603, message: `The upstream server process stopped. ${SEE_OUTPUT}` },
  not_initialized: {
    code: -32600,
    message: "The client did not initialize the connection. Send initialize first.",
  },
  already_initialized: {
    code: -32600,
    message: "The client already sent initialize on this connection.",
  },
  too_many_requests: { code: -32603, message: "The connection has too many requests in flight" },
  line_too_long: {
    code: -32600,
    message: "The request is longer than the line limit of the bridge.",
  },
  too_deep: {
    code: -32600,
    message: "The request has more levels of nesting than the limit of the bridge.",
  },
  parse_error: { code: -32700, message: "The request is not valid JSON." },
  invalid_request_shape: {
    code: -32600,
    message: "The message is not a valid JSON-RPC 2.0 request.",
  },
  method_not_found: { code: -32601, message: "The server does not have this method." },
  invalid_params: { code: -32602, message: "The parameters of the request are not valid." },
  tool_not_allowed: {
    code: -32602,
    message:
      "The tool {name} is not available: the --tool and --ignore-tool options of the bridge hide it.",
  },
  invalid_input_request: {
    code: -32603,
    message:
      `The upstream server sent an input request that is not valid for the client. ${SEE_OUTPUT}`,
  },
  too_many_input_requests: {
    code: -32603,
    message: "The upstream server asked for more inputs at one time than the limit of the bridge.",
  },
  input_timeout: {
    code: -32603,
    message: "The client did not answer the input request of the upstream server in time.",
  },
  invalid_client_answer: {
    code: -32603,
    message:
      "The client sent an answer that is not valid for the input request of the upstream server.",
  },
  sign_in_failed: {
    code: -32603,
    message: `The sign-in at the authorization server of the upstream server failed. ${SEE_OUTPUT}`,
  },
  sign_in_timeout: {
    code: -32603,
    message: "The sign-in did not complete in {seconds} s. " +
      "The URL of the sign-in is in the Output channel of the server. " +
      "To get more time, set --sign-in-timeout. During initialize, also set --discover-timeout. " +
      "When the authorization server shows no sign-in page, it possibly does not know the stored client. " +
      'Then run "{name} logout <url>" with the URL of this server, and restart the server.',
  },
  sign_in_denied: {
    code: -32603,
    message: "The authorization server refused the access. Restart the server to sign in again.",
  },
  sign_in_error: {
    code: -32603,
    message: `The authorization server sent an error for the sign-in. ${SEE_OUTPUT}`,
  },
  sign_in_invalid_url: {
    code: -32603,
    message: "The authorization server sent an authorization URL that is not valid. " +
      `The bridge did not open it. ${SEE_OUTPUT}`,
  },
  sign_in_start_reused: {
    code: -32603,
    message:
      "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. " +
      "Another program on the host of the bridge possibly opened the URL. " +
      "Restart the server to sign in again. " +
      "When this occurs again on a host that other users share, use --no-browser.",
  },
  browser_launch_failed: {
    code: -32603,
    message: `The bridge cannot open a browser for the sign-in. ${SEE_OUTPUT}`,
  },
  redirect_port_unavailable: {
    code: -32603,
    message: "The bridge cannot listen on the redirect port {port}. " +
      "Stop the program that uses the port, or set a different port with --redirect-port. " +
      "Each server with a sign-in needs its own port.",
  },
  registration_unavailable: {
    code: -32603,
    message: "The authorization server has no client registration that the bridge can use. " +
      REGISTER,
  },
  registration_failed: {
    code: -32603,
    message: "The authorization server refused the registration of the client. " + REGISTER,
  },
  issuer_not_registered: {
    code: -32603,
    message:
      "The client ID of --client-id is not for the authorization server of the upstream server. " +
      "Give a client ID of this authorization server with --client-id, and its issuer with --client-issuer.",
  },
  invalid_client_metadata_url: {
    code: -32603,
    message: "The URL of --client-metadata-url is not valid for a client ID metadata document. " +
      "Use an https URL with a path.",
  },
  access_refused: {
    code: -32603,
    message: "The upstream server refused the access after the sign-in. " +
      `The account possibly does not have the necessary permissions. ${SEE_OUTPUT}`,
  },
  reauthorization_required: {
    code: -32603,
    message:
      "The upstream server needs a new sign-in, and the client did not open the URL of the sign-in. " +
      "Restart the server to sign in again.",
  },
  sandbox: {
    code: -32603,
    message:
      "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. " +
      "The sandbox blocks the browser and the redirect port of the sign-in. " +
      "Disable the sandbox for this server.",
  },
} as const satisfies Record<string, ErrorRow>;

/**
 * The name of a cause of the error table.
 *
 * @example
 * ```ts
 * import { type Cause, ERROR_TABLE } from "./error_table.ts";
 * const cause: Cause = "timeout";
 * if (ERROR_TABLE[cause].code !== -32603 || ERROR_TABLE.canceled.code !== null) throw new Error();
 * ```
 */
export type Cause = keyof typeof ERROR_TABLE;
