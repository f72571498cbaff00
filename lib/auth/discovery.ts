/**
 * Discovery of the authorization server of an upstream server: protected
 * resource metadata (RFC 9728, from `resource_metadata` of the challenge or
 * the well-known paths), then authorization server metadata (RFC 8414 or
 * OpenID discovery, with the issuer check), and the resource indicator
 * (RFC 8707). The SDK v2 client does the requests and the checks, through
 * the requests of `sign_in_fetch.ts`; every endpoint of the authorization
 * server must be https (or loopback http) before a request goes there.
 *
 * @module
 */

import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  IssuerMismatchError,
  type OAuthProtectedResourceMetadata,
  resourceUrlFromServerUrl,
} from "@modelcontextprotocol/client";
import { isSignInFailure, signInFailure } from "./failures.ts";
import {
  insecureEndpoint,
  isSecureEndpoint,
  type SignInHttp,
  type SignInStep,
} from "./sign_in_fetch.ts";

/** What discovery found. */
export interface ServerInfo {
  /** The URL the metadata was found at (the issuer the SDK functions take). */
  readonly authorizationServerUrl: string;
  readonly metadata: AuthorizationServerMetadata;
  /** The resource indicator for the authorization and token requests. */
  readonly resource: string;
  /** `scopes_supported` of the protected resource metadata. */
  readonly resourceScopes: readonly string[] | undefined;
}

/**
 * The endpoints of the authorization server must be https, or http on a
 * loopback host: checked before the first request to any of them (the
 * registration, the authorization, the token request, the revocation).
 */
function checkEndpoints(metadata: AuthorizationServerMetadata): void {
  const named = metadata as Record<string, unknown>;
  if (!isSecureEndpoint(metadata.authorization_endpoint)) {
    throw signInFailure("sign_in_invalid_url", "authorization: the endpoint is not https");
  }
  const endpoints: [string, SignInStep][] = [
    ["token_endpoint", "token request"],
    ["registration_endpoint", "registration"],
    ["revocation_endpoint", "revocation"],
  ];
  for (const [name, step] of endpoints) {
    const value = named[name];
    if (value !== undefined && (typeof value !== "string" || !isSecureEndpoint(value))) {
      throw insecureEndpoint(step);
    }
  }
}

/** The protected resource metadata; undefined where the server has none (the SDK's fallback). */
async function resourceMetadata(
  serverUrl: string,
  resourceMetadataUrl: URL | undefined,
  http: SignInHttp,
): Promise<OAuthProtectedResourceMetadata | undefined> {
  const step = http.step("protected resource metadata");
  try {
    return await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl },
      step.fetch,
    );
  } catch (error) {
    if (isSignInFailure(error)) throw error;
    // No answer, a body cut off, the time limit: the sign-in stops here. A 404 or a
    // document that is not valid falls back to the server's origin, as the SDK does.
    if (step.stopped || step.problem !== undefined) throw step.failure();
    return undefined;
  }
}

/** Discovers the authorization server of `serverUrl`. */
export async function discover(
  serverUrl: string,
  resourceMetadataUrl: URL | undefined,
  http: SignInHttp,
): Promise<ServerInfo> {
  const resource = await resourceMetadata(serverUrl, resourceMetadataUrl, http);
  const authorizationServerUrl = resource?.authorization_servers?.[0] ??
    String(new URL("/", serverUrl));
  if (!isSecureEndpoint(authorizationServerUrl)) {
    throw insecureEndpoint("authorization server metadata");
  }
  const metadata = await issuerMetadata(authorizationServerUrl, http);
  checkEndpoints(metadata);
  const configured = resource?.resource;
  if (
    configured !== undefined &&
    !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: configured })
  ) {
    throw signInFailure(
      "sign_in_failed",
      "the protected resource metadata is for another resource",
    );
  }
  return {
    authorizationServerUrl,
    metadata,
    // The metadata's string as it is: its URL form would add a slash (SDK #1968).
    resource: configured ?? resourceUrlFromServerUrl(serverUrl).href,
    resourceScopes: resource?.scopes_supported,
  };
}

/** The metadata of a known issuer (for a sign-in, a refresh or a revocation). */
export async function issuerMetadata(
  issuer: string,
  http: SignInHttp,
): Promise<AuthorizationServerMetadata> {
  const step = http.step("authorization server metadata");
  let metadata;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: step.fetch });
  } catch (error) {
    if (isSignInFailure(error)) throw error;
    if (error instanceof IssuerMismatchError) {
      throw signInFailure(
        "sign_in_failed",
        "the metadata of the authorization server names another issuer",
      );
    }
    throw step.failure();
  }
  if (metadata === undefined) {
    throw signInFailure("sign_in_failed", "the authorization server has no metadata");
  }
  return metadata;
}

/** Two issuer identifiers name one server (RFC 8414 compares them as strings; a final slash aside). */
export function sameIssuer(a: string, b: string): boolean {
  const trim = (s: string) => s.endsWith("/") ? s.slice(0, -1) : s;
  return trim(a) === trim(b);
}
