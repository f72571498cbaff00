/**
 * The refresh of stored tokens (refresh token rotation is stored by the
 * caller): the client the tokens were issued to, and one refresh request
 * through the requests of the sign-in (`sign_in_fetch.ts`).
 *
 * @module
 */

import { refreshAuthorization } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import { issuerMetadata } from "./discovery.ts";
import { isSignInFailure } from "./failures.ts";
import type { ClientSettings } from "./registration.ts";
import type { SignInHttp } from "./sign_in_fetch.ts";
import type { ServerEntry, StoredTokens } from "./store.ts";
import { toStored } from "./token_life.ts";

/** A client as the SDK's token requests take it. */
export type ClientInformation = Record<string, unknown> & { client_id: string };

/** The client the stored tokens were issued to, as the sign-in chose it. */
export function storedClient(
  settings: ClientSettings,
  entry: ServerEntry,
  redirectUri: string,
): ClientInformation | undefined {
  const { clientId, clientSecret, clientMetadataUrl } = settings;
  if (clientId !== undefined) {
    return {
      client_id: clientId,
      ...(clientSecret !== undefined && { client_secret: clientSecret }),
    };
  }
  const stored = entry.clients.find((c) =>
    entry.issuer !== undefined && c.issuer === entry.issuer && c.redirectUri === redirectUri
  );
  if (stored !== undefined) return { ...stored.client };
  return clientMetadataUrl === undefined ? undefined : { client_id: clientMetadataUrl };
}

/**
 * Refreshes the tokens of `entry`: the new tokens, or undefined when the
 * authorization server refused or failed (then a new sign-in is needed).
 * A sign-in failure of another cause (sign_in_timeout) is thrown: the
 * tokens stay for the next try.
 */
export async function refreshEntry(
  entry: ServerEntry & { readonly issuer: string; readonly tokens: StoredTokens },
  refreshToken: string,
  client: ClientInformation,
  http: SignInHttp,
  log: Logger,
): Promise<StoredTokens | undefined> {
  const step = http.step("refresh");
  try {
    const metadata = await issuerMetadata(entry.issuer, http);
    let fresh;
    try {
      fresh = await refreshAuthorization(entry.issuer, {
        metadata,
        clientInformation: client,
        refreshToken,
        ...(entry.resource !== undefined && { resource: entry.resource }),
        fetchFn: step.fetch,
      });
    } catch (error) {
      throw isSignInFailure(error) ? error : step.failure();
    }
    return toStored(fresh, entry.tokens.requestedScope);
  } catch (error) {
    if (!isSignInFailure(error) || error.signIn?.cause !== "sign_in_failed") throw error;
    log.warn(
      `the refresh of the access token failed (${
        error.signIn?.detail ?? "refresh"
      }); a new sign-in is needed`,
    );
    return undefined;
  }
}
