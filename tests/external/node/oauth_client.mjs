// The agent flow with oauth4webapi (panva), a strict OAuth 2 client library: RFC 9728 and
// RFC 8414 discovery with issuer validation, the client_credentials and jwt-bearer grants,
// a protected call, RFC 7009 revocation, and the RFC 6750 challenge of the refused token
// parsed. Usage: node oauth_client.mjs BASE_URL
import * as oauth from "oauth4webapi";

const [base] = process.argv.slice(2);
// The test server runs on plain http on loopback.
const insecure = { [oauth.allowInsecureRequests]: true };

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

// RFC 9728: the resource names its authorization server; the library checks `resource`.
const resource = new URL(`${base}/`);
const resourceServer = await oauth.processResourceDiscoveryResponse(
  resource,
  await oauth.resourceDiscoveryRequest(resource, insecure),
);
const issuer = new URL(resourceServer.authorization_servers[0]);
// RFC 8414: fetched from the issuer, and `issuer` must equal it exactly.
const as = await oauth.processDiscoveryResponse(
  issuer,
  await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
);
check(as.issuer === base, `issuer ${as.issuer}`);
check(Array.isArray(as.response_types_supported), "response_types_supported is published");

const client = { client_id: "oauth4webapi-agent" };
const none = oauth.None();

// client_credentials, no secret.
const credentials = await oauth.processClientCredentialsResponse(
  as,
  client,
  await oauth.clientCredentialsGrantRequest(as, client, none, { scope: "company:read" }, insecure),
);
check(credentials.token_type === "bearer", `token_type ${credentials.token_type}`);

// jwt-bearer with an identity assertion from anonymous registration.
const registration = await fetch(as.agent_auth.register_uri, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ type: "anonymous" }),
}).then((response) => response.json());
const exchanged = await oauth.processGenericTokenEndpointResponse(
  as,
  client,
  await oauth.genericTokenEndpointRequest(
    as,
    client,
    none,
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
    { assertion: registration.identity_assertion },
    insecure,
  ),
);
check(typeof exchanged.access_token === "string", "jwt-bearer token");

// A protected call with the token, then revocation, then the refusal's challenge.
const company = `${base}/api/company`;
const ok = await oauth.protectedResourceRequest(exchanged.access_token, "GET", new URL(company), undefined, undefined, insecure);
check(ok.status === 200, `protected call ${ok.status}`);
await oauth.processRevocationResponse(
  await oauth.revocationRequest(as, client, none, exchanged.access_token, insecure),
);
let challenge;
try {
  await oauth.protectedResourceRequest(exchanged.access_token, "GET", new URL(company), undefined, undefined, insecure);
} catch (error) {
  check(error instanceof oauth.WWWAuthenticateChallengeError, `unexpected ${error}`);
  check(error.status === 401, `status ${error.status}`);
  challenge = error.cause[0];
}
check(challenge?.scheme === "bearer", "a bearer challenge");
check(challenge.parameters.error === "invalid_token", `error ${challenge.parameters.error}`);
check(challenge.parameters.resource_metadata === `${base}/.well-known/oauth-protected-resource`, "resource_metadata");
check(challenge.parameters.error_description.includes("revoked"), challenge.parameters.error_description);

console.log(JSON.stringify({ ok: true, issuer: as.issuer, grants: 2, revoked: true }));
