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
//   node scripts/hf-tokenizer-reference.mjs TOKENIZER_JSON --prompt-ids TEXT
//       TEXT's ids with special tokens added (e.g. BOS), comma-separated:
//       the prompt of afm-run --text, in afm-run --prompt's form
//   node scripts/hf-tokenizer-reference.mjs TOKENIZER_JSON --decode-text FILE
//       JSON lines of id arrays -> each one's text as is, then a newline
//       (skip_special_tokens = true): what afm-run --text prints
//   node scripts/hf-tokenizer-reference.mjs TOKENIZER_JSON --random-ids N
//       N JSON arrays of random ids below the vocabulary size (added tokens
//       included), the same on every run: decode inputs that no encode
//       gives (bytes out of order, cut characters, specials anywhere)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const { Tokenizer } = require('tokenizers');

const [tokenizerPath, mode, input] = process.argv.slice(2);
const modes = ['--encode', '--decode', '--decode-text', '--prompt-ids', '--random-ids'];
if (!tokenizerPath || !modes.includes(mode) || input === undefined) {
  console.error('usage: hf-tokenizer-reference.mjs TOKENIZER_JSON --encode|--decode|--decode-text FILE | --prompt-ids TEXT | --random-ids N');
  process.exit(2);
}
const tokenizer = Tokenizer.fromFile(tokenizerPath);
if (mode === '--random-ids') {
  // mulberry32, seeded: the same arrays on every machine.
  let state = 19;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const size = tokenizer.getVocabSize(true);
  const lines = [];
  for (let i = 0; i < Number(input); ++i) {
    const length = 1 + Math.floor(random() * 24);
    // Half of the ids from the first 512 (bytes, specials, short pieces).
    lines.push(JSON.stringify(Array.from({ length }, () =>
      Math.floor(random() * (random() < 0.5 ? Math.min(512, size) : size)))));
  }
  process.stdout.write(lines.join('\n') + '\n');
  process.exit(0);
}
if (mode === '--prompt-ids') {
  const encoding = await tokenizer.encode(input, null, { addSpecialTokens: true });
  process.stdout.write(encoding.getIds().join(',') + '\n');
  process.exit(0);
}
const lines = readFileSync(input, 'utf8').split('\n').filter((l) => l.trim() !== '');
const out = [];
for (const line of lines) {
  const value = JSON.parse(line);
  if (mode === '--encode') {
    const encoding = await tokenizer.encode(value, null, { addSpecialTokens: false });
    out.push(JSON.stringify(encoding.getIds()));
  } else if (mode === '--decode-text') {
    out.push(await tokenizer.decode(value, true));
  } else {
    out.push(JSON.stringify(await tokenizer.decode(value, false)));
  }
}
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
