import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ERROR_TABLE } from "../../lib/errors/error_table.ts";

const EXPECTED_CODES: Record<string, number | null> = {
  rpc: -32603,
  canceled: null,
  timeout: -32603,
  closed: -32603,
  transport_failed: -32603,
  invalid_response: -32603,
  too_many_rounds: -32603,
  out_of_memory: -32603,
  undeclared_input_request: -32603,
  hook_failed: -32603,
  not_connected: -32603,
  task_cancelled: -32603,
  invalid_request: -32602,
  invalid_meta: -32602,
  spawn_failed: -32603,
  connect_failed: -32603,
  discover_failed: -32603,
  upstream_exited: -32603,
  not_initialized: -32600,
  already_initialized: -32600,
  too_many_requests: -32603,
  line_too_long: -32600,
  too_deep: -32600,
  parse_error: -32700,
  invalid_request_shape: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  tool_not_allowed: -32602,
  invalid_input_request: -32603,
  too_many_input_requests: -32603,
  input_timeout: -32603,
  invalid_client_answer: -32603,
  sign_in_failed: -32603,
  sign_in_timeout: -32603,
  sign_in_denied: -32603,
  sign_in_error: -32603,
  sign_in_invalid_url: -32603,
  sign_in_start_reused: -32603,
  browser_launch_failed: -32603,
  redirect_port_unavailable: -32603,
  registration_unavailable: -32603,
  registration_failed: -32603,
  issuer_not_registered: -32603,
  invalid_client_metadata_url: -32603,
  access_refused: -32603,
  reauthorization_required: -32603,
  sandbox: -32603,
};

Deno.test("the error table has every cause of the spec with its code", () => {
  deepStrictEqual(
    Object.fromEntries(Object.entries(ERROR_TABLE).map(([cause, row]) => [cause, row.code])),
    EXPECTED_CODES,
  );
});

Deno.test("the error table has the spec's messages", () => {
  strictEqual(
    ERROR_TABLE.timeout.message,
    "The upstream server did not answer in time. See the Output channel of the server.",
  );
  strictEqual(
    ERROR_TABLE.not_initialized.message,
    "The client did not initialize the connection. Send initialize first.",
  );
  strictEqual(
    ERROR_TABLE.too_many_requests.message,
    "The connection has too many requests in flight",
  );
  strictEqual(ERROR_TABLE.parse_error.message, "The request is not valid JSON.");
});
