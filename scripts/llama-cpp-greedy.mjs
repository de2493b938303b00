#!/usr/bin/env node
// Greedy decoding of a GGUF model with llama.cpp (node-llama-cpp, CPU), in
// afm-reference's protocol, so that llama.cpp's logits can be compared with
// afm's (afm-compare):
//
//   node scripts/llama-cpp-greedy.mjs model.gguf --prompt 1,2,3 --decode 4 \
//       --logits-out llama.logits [--feed t1,...,tN] [--threads 1] \
//       [--kv-type f32|f16|q8_0]
//
// The prompt gives L_0 and t_1 = argmax(L_0) (lowest id on ties); decode
// step k = 1..N feeds t_k and gives L_k. Prints `tokens: t_1 ... t_{N+1}`;
// --logits-out gets L_0..L_N as raw little-endian f32, V floats per step.
// --feed gives the decode steps their tokens (e.g. afm-reference's), so a
// quantized model that picks other tokens is still compared step by step on
// the same sequence; the printed tokens stay llama.cpp's own argmaxes.
// `--feed @FILE` reads them from afm-reference's output (`tokens: ...`).
// Logits come from controlledEvaluate's generateNext.logits (llama.cpp's
// llama_get_logits_ith of that token, all V of them, before any sampling).
// The KV cache is f32 by default, so that an f32 GGUF matches afm's f32
// reference to rounding.
import fs from 'fs';
import {getLlama, LlamaLogLevel} from 'node-llama-cpp';

function parseArgs(argv) {
  const args = {model: null, prompt: null, decode: 0, logitsOut: null, threads: 1,
                kvType: 'f32', feed: null};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--prompt') args.prompt = next().split(',').map(Number);
    else if (arg === '--decode') args.decode = Number(next());
    else if (arg === '--feed') {
      // t1,t2,... or @FILE holding afm-reference's `tokens: t1 t2 ...` line.
      const value = next();
      const list = value.startsWith('@')
          ? fs.readFileSync(value.slice(1), 'utf8').replace(/^\s*tokens:/, '').trim().split(/\s+/)
          : value.split(',');
      args.feed = list.map(Number);
    }
    else if (arg === '--logits-out') args.logitsOut = next();
    else if (arg === '--threads') args.threads = Number(next());
    else if (arg === '--kv-type') args.kvType = next();
    else if (!arg.startsWith('--') && args.model === null) args.model = arg;
    else throw new Error(`unknown argument '${arg}'`);
  }
  if (!args.model || !args.prompt || args.prompt.some((t) => !Number.isInteger(t)))
    throw new Error('usage: llama-cpp-greedy.mjs model.gguf --prompt t0,t1,... [--decode N] ' +
                    '[--logits-out file] [--feed t1,...] [--threads T] [--kv-type f32|f16|q8_0]');
  if (args.feed && args.feed.length < args.decode)
    throw new Error(`--feed has ${args.feed.length} tokens for ${args.decode} decode steps`);
  return args;
}

// All V logits of a controlledEvaluate output, by token id.
function logitsRow(output, vocab) {
  const logits = output?.next?.logits;
  if (!logits || logits.size !== vocab)
    throw new Error(`llama.cpp returned ${logits?.size ?? 0} logits, expected ${vocab}`);
  const row = new Float32Array(vocab);
  for (const [token, value] of logits) row[token] = value;
  return row;
}

function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; ++i) if (row[i] > row[best]) best = i;
  return best;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const llama = await getLlama({gpu: false, build: 'never', skipDownload: true,
                                logLevel: LlamaLogLevel.error});
  const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0});
  const vocab = model.fileInsights.ggufFileInfo.metadata.llama.vocab_size;
  const kv = args.kvType.toUpperCase();
  const context = await model.createContext({
    contextSize: Math.max(256, args.prompt.length + args.decode + 1),
    batchSize: Math.max(args.prompt.length, 1),
    threads: args.threads,
    // llama.cpp needs flash attention for a quantized V cache.
    flashAttention: kv === 'Q8_0',
    experimentalKvCacheKeyType: kv,
    experimentalKvCacheValueType: kv,
  });
  const sequence = context.getSequence();
  const withLogits = (token) => [token, {generateNext: {logits: true}}];

  const rows = [];
  const tokens = [];
  const prompt = args.prompt.map((t, i) => (i === args.prompt.length - 1 ? withLogits(t) : t));
  let out = await sequence.controlledEvaluate(prompt);
  rows.push(logitsRow(out[prompt.length - 1], vocab));
  tokens.push(argmax(rows[0]));
  for (let k = 1; k <= args.decode; ++k) {
    const token = args.feed ? args.feed[k - 1] : tokens[k - 1];
    out = await sequence.controlledEvaluate([withLogits(token)]);
    rows.push(logitsRow(out[0], vocab));
    tokens.push(argmax(rows[k]));
  }
  console.log(`tokens: ${tokens.join(' ')}`);
  if (args.logitsOut) {
    const all = new Float32Array(rows.length * vocab);
    rows.forEach((row, i) => all.set(row, i * vocab));
    fs.writeFileSync(args.logitsOut, Buffer.from(all.buffer));
  }
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((e) => {
  process.stderr.write(`llama-cpp-greedy: error: ${e.message}\n`);
  process.exit(1);
});
