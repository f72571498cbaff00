/**
 * The client of the bridge at the authorization server: `--client-id` (its
 * issuer must match), else the client ID metadata document of
 * `--client-metadata-url` when the server supports it, else a stored or a
 * new dynamic registration (keyed by issuer and redirect URI), else
 * registration_unavailable.
 *
 * @module
 */

import {
  type OAuthClientInformationMixed,
  registerClient,
  RegistrationRejectedError,
  resolveClientMetadata,
  validateClientMetadataUrl,
} from "@modelcontextprotocol/client";
import { sameIssuer, type ServerInfo } from "./discovery.ts";
import { isSignInFailure, signInFailure } from "./failures.ts";
import type { SignInHttp } from "./sign_in_fetch.ts";
import { safeErrorCode } from "./redirect.ts";
import type { ServerEntry, StoredClient } from "./store.ts";

/** The client settings of the command line. */
export interface ClientSettings {
  readonly clientId?: string;
  readonly clientIssuer?: string;
  readonly clientSecret?: string;
  readonly clientMetadataUrl?: string;
}

/** The client to use, and a new registration to store. */
export interface ClientChoice {
  readonly client: OAuthClientInformationMixed;
  readonly registered?: StoredClient;
}

/** The name the bridge registers with. */
export const CLIENT_NAME = "mcp-bridge-vscode";

function errorCodeOf(body: string): string | undefined {
  try {
    const value = JSON.parse(body) as { error?: unknown };
    return typeof value.error === "string" ? safeErrorCode(value.error) : undefined;
  } catch {
    return undefined;
  }
}

/** Chooses (or registers) the client for one sign-in. */
export async function chooseClient(
  settings: ClientSettings,
  info: ServerInfo,
  redirectUri: string,
  entry: ServerEntry,
  http: SignInHttp,
): Promise<ClientChoice> {
  const issuer = info.metadata.issuer;
  if (settings.clientId !== undefined) {
    if (settings.clientIssuer !== undefined && !sameIssuer(settings.clientIssuer, issuer)) {
      throw signInFailure("issuer_not_registered");
    }
    return {
      client: {
        client_id: settings.clientId,
        ...(settings.clientSecret !== undefined && { client_secret: settings.clientSecret }),
      },
    };
  }
  if (settings.clientMetadataUrl !== undefined) {
    try {
      validateClientMetadataUrl(settings.clientMetadataUrl);
    } catch {
      throw signInFailure("invalid_client_metadata_url");
    }
  }
  if (
    settings.clientMetadataUrl !== undefined &&
    info.metadata.client_id_metadata_document_supported === true
  ) {
    return { client: { client_id: settings.clientMetadataUrl } };
  }
  const stored = entry.clients.find((c) =>
    sameIssuer(c.issuer, issuer) && c.redirectUri === redirectUri
  );
  if (stored !== undefined) return { client: stored.client as OAuthClientInformationMixed };
  const placeholders = { redirect_uri: redirectUri };
  if (info.metadata.registration_endpoint === undefined) {
    throw signInFailure("registration_unavailable", undefined, placeholders);
  }
  const step = http.step("registration");
  let client;
  try {
    client = await registerClient(info.authorizationServerUrl, {
      metadata: info.metadata,
      clientMetadata: resolveClientMetadata({
        clientMetadata: {
          client_name: CLIENT_NAME,
          redirect_uris: [redirectUri],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        },
        redirectUrl: redirectUri,
      }),
      fetchFn: step.fetch,
    });
  } catch (error) {
    if (step.stopped) throw step.failure();
    if (isSignInFailure(error)) throw error;
    if (error instanceof RegistrationRejectedError && step.problem === undefined) {
      const code = errorCodeOf(error.body);
      throw signInFailure(
        "registration_failed",
        `HTTP status ${error.status}${code === undefined ? "" : `, ${code}`}`,
        placeholders,
      );
    }
    if (step.problem !== undefined) throw step.failure();
    throw signInFailure("registration_failed", step.detail(), placeholders);
  }
  return {
    client,
    registered: {
      issuer,
      redirectUri,
      client: client as StoredClient["client"],
    },
  };
}
