/**
 * Discovery of the authorization server of an upstream server: protected
 * resource metadata (RFC 9728, from `resource_metadata` of the challenge or
 * the well-known paths), then authorization server metadata (RFC 8414 or
 * OpenID discovery, with the issuer check), and the resource indicator
 * (RFC 8707). The SDK v2 client does the requests and the checks.
 *
 * @module
 */

import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthServerInfo,
  type FetchLike,
  IssuerMismatchError,
  resourceUrlFromServerUrl,
} from "@modelcontextprotocol/client";
import { signInFailure } from "./failures.ts";

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
 * A fetch that remembers the status of the last response: a failure of an
 * SDK call names the step and that status, never the body or the URL.
 */
export class StatusFetch {
  last: number | undefined;
  readonly fetch: FetchLike;

  constructor(base: FetchLike = fetch) {
    this.fetch = async (input, init) => {
      this.last = undefined;
      const response = await base(input, init);
      this.last = response.status;
      return response;
    };
  }

  /** `step: HTTP status N`, or `step` when no response came. */
  detail(step: string): string {
    return this.last === undefined ? step : `${step}: HTTP status ${this.last}`;
  }
}

/** Discovers the authorization server of `serverUrl`. */
export async function discover(
  serverUrl: string,
  resourceMetadataUrl: URL | undefined,
  http: StatusFetch,
): Promise<ServerInfo> {
  let found;
  try {
    found = await discoverOAuthServerInfo(serverUrl, {
      ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }),
      fetchFn: http.fetch,
    });
  } catch (error) {
    if (error instanceof IssuerMismatchError) {
      throw signInFailure(
        "sign_in_failed",
        "the metadata of the authorization server names another issuer",
      );
    }
    throw signInFailure("sign_in_failed", http.detail("discovery of the authorization server"));
  }
  const metadata = found.authorizationServerMetadata;
  if (metadata === undefined) {
    throw signInFailure("sign_in_failed", "the authorization server has no metadata");
  }
  const configured = found.resourceMetadata?.resource;
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
    authorizationServerUrl: found.authorizationServerUrl,
    metadata,
    // The metadata's string as it is: its URL form would add a slash (SDK #1968).
    resource: configured ?? resourceUrlFromServerUrl(serverUrl).href,
    resourceScopes: found.resourceMetadata?.scopes_supported,
  };
}

/** The metadata of a known issuer (for a refresh or a revocation). */
export async function issuerMetadata(
  issuer: string,
  http: StatusFetch,
): Promise<AuthorizationServerMetadata> {
  let metadata;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: http.fetch });
  } catch {
    throw signInFailure("sign_in_failed", http.detail("discovery of the authorization server"));
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
