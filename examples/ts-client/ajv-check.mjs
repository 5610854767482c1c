// Compiles JSON Schemas the way MCP TypeScript clients do: ajv as the
// TypeScript SDK v1 configures it (draft-07 default, strict off, formats
// from ajv-formats), and ajv's JSON Schema 2020-12 build with its
// meta-schema check on. Reads one JSON object per line, {"id": ..., "schema":
// ...}; prints {"checked": n, "failures": [{id, draft, error}], "unknownFormats": [...]}.
//
//   node ajv-check.mjs <schemas.jsonl>
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const file = process.argv[2];
const unknownFormats = new Set();
const logger = {
  log() {},
  warn(...args) {
    const m = String(args[0]).match(/unknown format "([^"]+)"/);
    if (m) unknownFormats.add(m[1]);
  },
  error() {},
};
const draft07 = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, logger });
addFormats(draft07);
const v2020 = new Ajv2020({ strict: false, validateFormats: true, validateSchema: true, allErrors: true, logger });
addFormats(v2020);

const failures = [];
let checked = 0;
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (!line) continue;
  const { id, schema } = JSON.parse(line);
  for (const [draft, ajv] of [["draft-07", draft07], ["2020-12", v2020]]) {
    try {
      ajv.compile(schema);
    } catch (e) {
      failures.push({ id, draft, error: String(e.message).slice(0, 300) });
    }
    ajv.removeSchema();
  }
  checked++;
}
process.stdout.write(JSON.stringify({ checked, failures, unknownFormats: [...unknownFormats].sort() }) + "\n");
