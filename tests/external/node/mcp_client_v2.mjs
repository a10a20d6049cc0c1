// Drives dossier's /mcp with the TypeScript MCP client v2 (@modelcontextprotocol/client),
// in the era named on the command line, and runs its OAuth discovery. It lists and calls
// every tool (checking structuredContent against each outputSchema, as the SDK does),
// reads every resource, and checks the negotiated protocol version.
// Usage: node mcp_client_v2.mjs URL legacy|modern [BEARER_TOKEN]
import {
  Client,
  StreamableHTTPClientTransport,
  discoverOAuthServerInfo,
} from "@modelcontextprotocol/client";

const [url, era, token] = process.argv.slice(2);

// A warning the SDK logs (an unknown schema format, say) reaches the user of an MCP host:
// any warning fails the run, and is printed.
const warnings = [];
for (const level of ["warn", "error"]) {
  const original = console[level];
  console[level] = (...args) => {
    if (!String(args[0] ?? "").startsWith("FAILED")) {
      warnings.push(args.map(String).join(" "));
    }
    original(...args);
  };
}
process.on("exit", (code) => {
  if (code === 0 && warnings.length > 0) {
    process.stderr.write(`FAILED (${era}): the SDK logged ${warnings.length} warning(s): ${warnings.join(" | ")}\n`);
    process.exitCode = 1;
  }
});

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED (${era}): ${message}`);
    process.exit(1);
  }
}

const options = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {};
const versionNegotiation = era === "modern" ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" };
const client = new Client({ name: "dossier-ci-v2", version: "1.0.0" }, { versionNegotiation });
await client.connect(new StreamableHTTPClientTransport(new URL(url), options));

const negotiated = client.getNegotiatedProtocolVersion();
const expected = era === "modern" ? "2026-07-28" : "2025-11-25";
check(negotiated === expected, `negotiated ${negotiated}, expected ${expected}`);
check(client.getServerVersion()?.name === "dossier", "serverInfo.name");

const { tools } = await client.listTools();
check(tools.length >= 7, `${tools.length} tools`);
const company = await client.callTool({ name: "get_company", arguments: {} });
check(!company.isError, "get_company failed");
const divisionId = company.structuredContent.divisions[0].id;
const slug = company.structuredContent.pages[0].slug;
// An example value for each argument a tool may require, by the argument's name.
const examples = { division_id: divisionId, slug, query: "calibration" };
for (const tool of tools) {
  const args = Object.fromEntries((tool.inputSchema.required ?? []).map((key) => [key, examples[key]]));
  const result = await client.callTool({ name: tool.name, arguments: args });
  check(!result.isError, `${tool.name}: ${JSON.stringify(result.content)}`);
  check(typeof result.structuredContent === "object", `${tool.name} has no structuredContent`);
}

let resources = 0;
let cursor;
do {
  const page = await client.listResources(cursor ? { cursor } : {});
  for (const resource of page.resources) {
    const read = await client.readResource({ uri: resource.uri });
    check(read.contents[0].uri === resource.uri, `read ${resource.uri}`);
    check((read.contents[0].text ?? "").length > 0, `${resource.uri} is empty`);
    resources += 1;
  }
  cursor = page.nextCursor;
} while (cursor);
check(resources >= 3, `only ${resources} resources`);
await client.close();

// What an MCP host does when a token expires: RFC 9728 then RFC 8414 discovery. The SDK
// validates the metadata strictly (it refused it without response_types_supported).
const info = await discoverOAuthServerInfo(new URL(url));
const origin = new URL(url).origin;
check(info.authorizationServerUrl.replace(/\/$/, "") === origin, `authorization server ${info.authorizationServerUrl}`);
check(info.authorizationServerMetadata?.issuer === origin, "issuer");
check(Array.isArray(info.authorizationServerMetadata?.response_types_supported), "response_types_supported");
check(info.resourceMetadata?.resource === `${origin}/mcp`, `resource ${info.resourceMetadata?.resource}`);

console.log(JSON.stringify({ ok: true, era, negotiated, tools: tools.length, resources, bearer: Boolean(token) }));
