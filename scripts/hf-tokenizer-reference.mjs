#!/usr/bin/env node
// The reference for afm-tokenize: Hugging Face's Rust tokenizers (npm
// `tokenizers`, its prebuilt binary) on the same tokenizer.json, printing
// exactly what afm-tokenize prints, so the two outputs compare with diff.
//
//   node scripts/hf-tokenizer-reference.mjs TOKENIZER_JSON --encode FILE
//       JSON lines of strings -> one JSON array of ids per line
//       (add_special_tokens = false)
//   node scripts/hf-tokenizer-reference.mjs TOKENIZER_JSON --decode FILE
//       JSON lines of id arrays -> one JSON string per line
//       (skip_special_tokens = false)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const { Tokenizer } = require('tokenizers');

const [tokenizerPath, mode, input] = process.argv.slice(2);
if (!tokenizerPath || !['--encode', '--decode'].includes(mode) || !input) {
  console.error('usage: hf-tokenizer-reference.mjs TOKENIZER_JSON --encode|--decode FILE');
  process.exit(2);
}
const tokenizer = Tokenizer.fromFile(tokenizerPath);
const lines = readFileSync(input, 'utf8').split('\n').filter((l) => l.trim() !== '');
const out = [];
for (const line of lines) {
  const value = JSON.parse(line);
  if (mode === '--encode') {
    const encoding = await tokenizer.encode(value, null, { addSpecialTokens: false });
    out.push(JSON.stringify(encoding.getIds()));
  } else {
    out.push(JSON.stringify(await tokenizer.decode(value, false)));
  }
}
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
