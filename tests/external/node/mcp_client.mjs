// Drives dossier's /mcp with the official TypeScript SDK (v1, legacy era). The SDK checks
// every tool result's structuredContent against the tool's outputSchema, so a schema
// mismatch fails here. Usage: node mcp_client.mjs URL [BEARER_TOKEN]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const options = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {};
const client = new Client({ name: "dossier-ci", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), options));

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

const version = client.getServerVersion();
check(version?.name === "dossier", `serverInfo.name is ${version?.name}`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
// The tools the contract names are there; tools/list may offer more, and every one is called.
const contractTools = ["get_company", "list_divisions", "get_division", "list_pages", "get_page", "list_contacts", "search_company_info"];
check(contractTools.every((name) => names.includes(name)) && new Set(names).size === names.length, `tools are ${names}`);

const company = await client.callTool({ name: "get_company", arguments: {} });
check(!company.isError, "get_company failed");
const divisionId = company.structuredContent.divisions[0].id;
const slug = company.structuredContent.pages[0].slug;

// An example value for each argument a tool may require, by the argument's name.
const examples = { division_id: divisionId, slug, query: "calibration certificate" };
for (const tool of tools) {
  const name = tool.name;
  const args = Object.fromEntries((tool.inputSchema.required ?? []).map((key) => [key, examples[key]]));
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `${name} returned isError: ${JSON.stringify(result.content)}`);
  check(result.structuredContent && typeof result.structuredContent === "object", `${name} has no structuredContent`);
  check(JSON.stringify(JSON.parse(result.content[0].text)) === JSON.stringify(result.structuredContent), `${name}: text block differs from structuredContent`);
}
const unknown = await client.callTool({ name: "get_division", arguments: { division_id: "no-such-division" } });
check(unknown.isError === true, "an unknown division is not a tool error");
check(unknown.content[0].text.includes(divisionId), "the tool error does not list the valid ids");

const { resources } = await client.listResources();
check(resources.length >= 3, `only ${resources.length} resources`);
for (const resource of resources) {
  const read = await client.readResource({ uri: resource.uri });
  check(read.contents[0].uri === resource.uri, `read ${resource.uri}`);
  check(read.contents[0].mimeType === resource.mimeType, `mimeType of ${resource.uri}`);
}
const { resourceTemplates } = await client.listResourceTemplates();
check(resourceTemplates.length === 2, "resource templates");
const { prompts } = await client.listPrompts();
check(prompts[0].name === "company_briefing", "prompt");
const briefing = await client.getPrompt({ name: "company_briefing", arguments: { division: divisionId } });
check(briefing.messages[0].content.text.length > 100, "briefing text");
const completion = await client.complete({
  ref: { type: "ref/prompt", name: "company_briefing" },
  argument: { name: "division", value: divisionId.slice(0, 3) },
});
check(completion.completion.values.includes(divisionId), "completion");

await client.close();
console.log(JSON.stringify({ ok: true, tools: names.length, resources: resources.length, bearer: Boolean(token) }));
