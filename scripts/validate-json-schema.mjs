#!/usr/bin/env node
// The independent check of guided generation (afm-run --json-schema): every
// output must parse with JSON.parse and validate against the schema with
// ajv (npm `ajv`, Draft 7 / 2019 keywords, strict mode off so annotations
// pass), which shares no code with the runtime's schema compiler.
//
//   node scripts/validate-json-schema.mjs SCHEMA_JSON OUTPUTS [--min N]
//       OUTPUTS: one output per line (compact JSON has no raw newlines;
//       empty lines are outputs too, and fail). Prints
//       "valid: N of N outputs (SCHEMA_JSON)" and exits 1 if any output
//       is invalid (each printed with its error) or there are fewer than
//       --min outputs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const Ajv = require('ajv');

const args = process.argv.slice(2);
let min = 1;
const minAt = args.indexOf('--min');
if (minAt >= 0) {
  min = Number(args[minAt + 1]);
  args.splice(minAt, 2);
}
if (args.length !== 2 || !Number.isInteger(min)) {
  console.error('usage: validate-json-schema.mjs SCHEMA_JSON OUTPUTS [--min N]');
  process.exit(2);
}
const [schemaPath, outputsPath] = args;
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);

let text = readFileSync(outputsPath);
// Bytes, not text: invalid UTF-8 must fail, not become U+FFFD.
const decoder = new TextDecoder('utf-8', { fatal: true });
let lines;
try {
  lines = decoder.decode(text).split('\n');
} catch (e) {
  console.error(`${outputsPath}: not valid UTF-8`);
  process.exit(1);
}
if (lines.length && lines[lines.length - 1] === '') lines.pop();

let valid = 0;
lines.forEach((line, i) => {
  let value;
  try {
    value = JSON.parse(line);
  } catch (e) {
    console.error(`output ${i + 1}: not JSON (${e.message}): ${line}`);
    return;
  }
  if (!validate(value)) {
    console.error(`output ${i + 1}: ${ajv.errorsText(validate.errors)}: ${line}`);
    return;
  }
  ++valid;
});
console.log(`valid: ${valid} of ${lines.length} outputs (${schemaPath.split('/').pop()})`);
if (valid !== lines.length || lines.length < min) {
  if (lines.length < min) console.error(`expected at least ${min} outputs`);
  process.exit(1);
}
