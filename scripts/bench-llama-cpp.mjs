#!/usr/bin/env node
// Prefill and decode speed of a GGUF model in llama.cpp (node-llama-cpp's
// prebuilt CPU library), the peer afm models are measured against. Make the
// GGUF of an afm model with scripts/gguf-from-afm.mjs.
//
//   node scripts/bench-llama-cpp.mjs model.gguf [--threads 1,2] \
//       [--prompt-tokens 128] [--context 0,1024] [--decode-tokens 32] \
//       [--batch-size 512] [--context-size C] [--kv-type q8_0|f16|f32] [--seed 1]
//
// For each thread count T (a fresh context with T threads, warmed up once:
// a prompt of min(P, batch) tokens and 4 decode steps) and prompt length P:
//   prefill: a prompt of P deterministic pseudo-random token ids in [0, V)
//     from position 0, the last one with its logits and a greedy next token;
//     ttft_s is that call's time, prefill_tokens_per_s = P / ttft_s.
//   decode, for each start position X of --context: X pseudo-random tokens
//     evaluated first (not timed), then N tokens decoded one at a time, each
//     fed the previous step's greedy token (llama.cpp computes every step's
//     logits and samples with its greedy sampler, as afm-run takes the
//     argmax); decode_tokens_per_s = N / time.
// One JSON line per (T, P, X) on stdout:
//   {engine: "llama.cpp", threads, prompt_tokens, prefill_tokens_per_s, ttft_s,
//    context, decode_tokens, decode_tokens_per_s, weight_type, kv_type, ...}
// weight_type is the type of the linear (FFN and attention) weights;
// embedding_type and output_type those of token_embd and the LM head.
//
// KV cache: --kv-type q8_0 (default) stores K and V as Q8_0 through
// node-llama-cpp's experimentalKvCacheKeyType / experimentalKvCacheValueType,
// with flash attention on (llama.cpp needs it for a quantized V cache). If
// llama.cpp refuses that context, the run falls back to F16 and kv_type says
// "f16 (q8_0 refused: ...)". Threads: getLlama({maxThreads: 0}) and the
// context's threads {ideal: T, min: T}, so llama.cpp runs exactly T threads
// (n_threads and n_threads_batch).
import fs from 'fs';
import os from 'os';
import {getLlama, LlamaLogLevel} from 'node-llama-cpp';

const TYPE_NAMES = {0: 'f32', 1: 'f16', 2: 'q4_0', 8: 'q8_0', 10: 'q2_k', 12: 'q4_k',
                    14: 'q6_k', 30: 'bf16', 35: 'tq2_0'};
const typeName = (id) => TYPE_NAMES[id] ?? `ggml_type ${id}`;

function parseArgs(argv) {
  const list = (s) => s.split(',').map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`'${s}': expected integers`);
    return n;
  });
  const args = {model: null, threads: [os.cpus().length], prompt: [128], context: null,
                decode: 32, batch: 512, contextSize: null, kvType: 'q8_0', seed: 1};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--threads') args.threads = list(next());
    else if (arg === '--prompt-tokens') args.prompt = list(next());
    else if (arg === '--context') args.context = list(next());
    else if (arg === '--decode-tokens') args.decode = list(next())[0];
    else if (arg === '--batch-size') args.batch = list(next())[0];
    else if (arg === '--context-size') args.contextSize = list(next())[0];
    else if (arg === '--kv-type') args.kvType = next().toLowerCase();
    else if (arg === '--seed') args.seed = list(next())[0];
    else if (arg === '-h' || arg === '--help') {
      process.stdout.write(fs.readFileSync(new URL(import.meta.url), 'utf8')
          .split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n') + '\n');
      process.exit(0);
    } else if (!arg.startsWith('--') && args.model === null) args.model = arg;
    else throw new Error(`unknown argument '${arg}'`);
  }
  if (!args.model) throw new Error('usage: bench-llama-cpp.mjs model.gguf [options] (--help)');
  if (!['q8_0', 'f16', 'f32'].includes(args.kvType))
    throw new Error(`--kv-type '${args.kvType}': expected q8_0, f16 or f32`);
  if (args.threads.some((t) => t < 1)) throw new Error('--threads must be at least 1');
  if (args.prompt.some((p) => p < 1)) throw new Error('--prompt-tokens must be at least 1');
  if (args.decode < 1) throw new Error('--decode-tokens must be at least 1');
  args.context ??= [...args.prompt];
  return args;
}

// Deterministic pseudo-random token ids in [0, vocab) (xorshift32).
function tokenIds(count, vocab, seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  const ids = new Array(count);
  for (let i = 0; i < count; ++i) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    ids[i] = s % vocab;
  }
  return ids;
}

const GREEDY = {generateNext: {token: true, options: {temperature: 0}}};

// Evaluates `tokens` from the sequence's current position, the last one with
// a greedy next token; returns that token.
async function evaluateLast(sequence, tokens) {
  const items = tokens.map((t, i) => (i === tokens.length - 1 ? [t, GREEDY] : t));
  const out = await sequence.controlledEvaluate(items);
  const next = out[tokens.length - 1]?.next?.token;
  if (next == null) throw new Error('llama.cpp returned no token');
  return next;
}

async function decode(sequence, first, steps) {
  let token = first;
  for (let k = 0; k < steps; ++k) token = await evaluateLast(sequence, [token]);
  return token;
}

// llama.cpp's log lines (warnings and errors), also printed on stderr.
const llamaLog = [];

async function createContext(model, args, threads, contextSize) {
  const base = {
    contextSize,
    batchSize: args.batch,
    threads: {ideal: threads, min: threads},
    sequences: 1,
    failedCreationRemedy: false,
  };
  if (args.kvType === 'q8_0') {
    try {
      const context = await model.createContext({
        ...base, flashAttention: true,
        experimentalKvCacheKeyType: 'Q8_0', experimentalKvCacheValueType: 'Q8_0'});
      return {context, kvNote: ''};
    } catch (e) {
      const why = llamaLog.filter((l) => /cache|flash/i.test(l)).pop();
      const context = await model.createContext({...base, flashAttention: 'auto'});
      return {context, kvNote: ` (q8_0 refused: ${why ?? e.message})`};
    }
  }
  const kv = args.kvType.toUpperCase();
  const context = await model.createContext({
    ...base, flashAttention: 'auto',
    experimentalKvCacheKeyType: kv, experimentalKvCacheValueType: kv});
  return {context, kvNote: ''};
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const llama = await getLlama({
    gpu: false, build: 'never', skipDownload: true, maxThreads: 0, logLevel: LlamaLogLevel.warn,
    logger: (level, message) => {
      const line = message.trim();
      llamaLog.push(line);
      // The dummy vocabulary of gguf-from-afm does not round-trip text; the
      // models are driven with token ids.
      if (!/tokenize text and then detokenize/.test(line))
        process.stderr.write(`[llama.cpp ${level}] ${line}\n`);
    }});
  const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0});
  const info = model.fileInsights.ggufFileInfo;
  const vocab = info.metadata.llama?.vocab_size ?? model.tokens.length;
  const tensorType = (name) => {
    const t = info.fullTensorInfo?.find((x) => x.name === name);
    return t ? typeName(t.ggmlType) : null;
  };
  const weightType = tensorType('blk.0.ffn_up.weight');
  const embeddingType = tensorType('token_embd.weight');
  const outputType = tensorType('output.weight') ?? `${embeddingType} (tied)`;
  const needed = Math.max(...args.prompt, ...args.context.map((x) => x + args.decode + 1));
  const contextSize = args.contextSize ?? Math.ceil(needed / 256) * 256;
  if (contextSize < needed)
    throw new Error(`--context-size ${contextSize} is below the ${needed} positions needed`);

  for (const threads of args.threads) {
    const {context, kvNote} = await createContext(model, args, threads, contextSize);
    const kvType = `${typeName(context.kvCacheKeyType)}/${typeName(context.kvCacheValueType)}` +
                   kvNote;
    const sequence = context.getSequence();
    // Warm-up: thread pool, graph buffers, pages of the weights.
    const warm = tokenIds(Math.min(Math.max(...args.prompt), args.batch), vocab, args.seed + 99);
    await decode(sequence, await evaluateLast(sequence, warm), 4);
    await sequence.clearHistory();

    for (const promptTokens of args.prompt) {
      const prompt = tokenIds(promptTokens, vocab, args.seed);
      const t0 = performance.now();
      const first = await evaluateLast(sequence, prompt);
      const ttft = (performance.now() - t0) / 1000;
      // The first start position equal to P continues from the prefill.
      let prefilled = true;
      for (const start of args.context) {
        let token = first;
        if (!(prefilled && start === promptTokens)) {
          await sequence.clearHistory();
          const fill = tokenIds(start + 1, vocab, args.seed + 1);
          if (start > 0) await sequence.evaluateWithoutGeneratingNewTokens(fill.slice(0, start));
          token = fill[start];
        }
        prefilled = false;
        if (sequence.nextTokenIndex !== start)
          throw new Error(`decode starts at ${sequence.nextTokenIndex}, expected ${start}`);
        const t1 = performance.now();
        await decode(sequence, token, args.decode);
        const decodeSeconds = (performance.now() - t1) / 1000;
        console.log(JSON.stringify({
          engine: 'llama.cpp',
          threads,
          threads_used: context.currentThreads, // llama_n_threads after the run
          prompt_tokens: promptTokens,
          prefill_tokens_per_s: promptTokens / ttft,
          ttft_s: ttft,
          context: start,
          decode_tokens: args.decode,
          decode_tokens_per_s: args.decode / decodeSeconds,
          weight_type: weightType,
          kv_type: kvType,
          embedding_type: embeddingType,
          output_type: outputType,
          flash_attention: context.flashAttention,
          batch_size: context.batchSize,
          context_size: context.contextSize,
          model: args.model,
          llama_cpp: `${llama.llamaCppRelease.repo}@${llama.llamaCppRelease.release}`,
        }));
      }
      // The next prefill starts from position 0 again.
      await sequence.clearHistory();
    }
    await context.dispose();
  }
  await model.dispose();
  await llama.dispose();
}

main().catch((e) => {
  process.stderr.write(`bench-llama-cpp: error: ${e.message}\n`);
  process.exit(1);
});
