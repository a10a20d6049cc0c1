// Reads every GET endpoint of a running dossier through a client that @hey-api/openapi-ts
// generated from its /openapi.json (`./gen`, written by test_generated_clients.py). Compiled
// with tsc --strict first, so the generated types must hold too. Usage:
//   node generated_client.js BASE_URL TOKEN
// Prints one JSON line per call; exits 1 on the first status or parse that is wrong.
import { client } from "./gen/client.gen.js";
import * as sdk from "./gen/sdk.gen.js";

declare const process: { argv: string[]; exit(code: number): never };

const [base, token] = process.argv.slice(2);
// A value for each required parameter, by name (path segments and required queries).
const examples: Record<string, string> = {
  slug: "careers",
  division_id: "field-sensors",
  q: "calibration",
};
// There is no interactive login: GET /oauth2/authorize always explains that with a 400.
const expectedStatus: Record<string, number> = { authorize: 400 };

type Parameter = { name: string; in: string; required?: boolean };
type Operation = { operationId: string; parameters?: Array<Parameter | { $ref: string }> };

client.setConfig({ baseUrl: base, auth: () => token });

type Call = (options: Record<string, unknown>) => Promise<{
  data?: unknown;
  error?: unknown;
  response: Response;
}>;
const functions = sdk as unknown as Record<string, Call>;

async function main(): Promise<void> {
  // The document the client was generated from says which operations are GETs.
  const spec = (await (await fetch(`${base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  const called: string[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    const operation = item.get;
    if (!operation) continue;
    // The generator names each function after the operationId.
    const call = functions[operation.operationId];
    if (typeof call !== "function") {
      console.log(JSON.stringify({ path, missing: operation.operationId }));
      process.exit(1);
    }
    const pathParameters: Record<string, string> = {};
    const query: Record<string, string> = {};
    for (const parameter of operation.parameters ?? []) {
      if ("$ref" in parameter || !parameter.required) continue;
      const value = examples[parameter.name];
      if (value === undefined) {
        console.log(JSON.stringify({ path, noExampleFor: parameter.name }));
        process.exit(1);
      }
      (parameter.in === "path" ? pathParameters : query)[parameter.name] = value;
    }
    const result = await call({ path: pathParameters, query });
    const status = result.response.status;
    const wanted = expectedStatus[operation.operationId] ?? 200;
    const type = result.response.headers.get("content-type") ?? "";
    const parsed = type.includes("json") ? result.data ?? result.error : "text";
    console.log(JSON.stringify({ operationId: operation.operationId, status, type }));
    if (status !== wanted || parsed === undefined || parsed === null) {
      console.log(JSON.stringify({ failed: operation.operationId, status, wanted }));
      process.exit(1);
    }
    called.push(operation.operationId);
  }
  // Typed reads: these lines compile only if the generated types have these fields, and
  // the values must be the sample company's.
  const company = await sdk.getCompany({});
  const page = await sdk.getPage({ path: { slug: "careers" } });
  const answer = await sdk.ask({ query: { query: "calibration" } });
  const facts = {
    company: company.data?.company.name,
    divisions: company.data?.divisions.length,
    page: page.data?.page.slug,
    askResults: answer.data?.results.length,
  };
  console.log(JSON.stringify({ called, facts }));
  if (!facts.company || !facts.divisions || facts.page !== "careers" || !facts.askResults) {
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.log(JSON.stringify({ error: String(error) }));
  process.exit(1);
});
