#!/usr/bin/env node
// Converts an afm model (config.json + model.safetensors with F32 tensors, as
// afm-gen-example writes them) into a GGUF v3 file for llama.cpp's `llama`
// architecture: the same shapes and weights, for side-by-side runs with
// llama.cpp (scripts/bench-llama-cpp.mjs).
//
//   node scripts/gguf-from-afm.mjs MODEL_DIR -o model.gguf \
//       [--type f32|q8_0|q4_0|tq2_0|q2_k] [--embedding-type f32|q8_0|q4_0] \
//       [--output-type f32|q8_0|q4_0] [--config FILE] [--weights FILE] \
//       [--dequantized-weights deq.safetensors] [--jobs N] [--dry-run]
//
// --type: attention q/k/v/o and FFN gate/up/down weights (default f32).
// --embedding-type: token_embd (default f32); a tied LM head reads it too.
// --output-type: output.weight of an untied LM head (default f32; afm keeps
// an untied LM head in float whatever the config's formats). Norms are F32.
// A quantized type needs rows (the input dimension) that are a multiple of
// its block (32; 256 for tq2_0 and q2_k); a tensor whose rows are not falls
// back to q4_0, then f32, and the converter says so.
// --dry-run: check the model and print the plan (differences, fallbacks,
// the GGUF's size) without writing anything.
// --jobs: worker threads that quantize (default: the number of cores;
// q2_k quantizes about 3M weights/s per thread).
// --dequantized-weights also writes the afm weights as llama.cpp will
// multiply by them (every quantized tensor dequantized as ggml does, rows in
// afm's order), like afm-compile's --dequantized-weights: afm-reference on
// that file is what llama.cpp computes up to its rounding of activations.
//
// The converter streams: it reads one tensor at a time in chunks of rows
// (fs.readSync at offsets) and writes each chunk as it is converted, so a
// 12 GB model converts in well under 1 GB of memory. Progress goes to stderr,
// and so does every way in which the GGUF model differs from the afm model.
//
// Same model: afm applies RoPE as HF Llama ("rotate half": pairs (i, i+hd/2)),
// llama.cpp's `llama` architecture rotates adjacent pairs (2i, 2i+1); as
// convert_hf_to_gguf.py does, the rows of every q and k projection are
// permuted within each head so that both compute the same attention.
// afm-on-device's sliding windows, NoPE global layers and KV sharing have no
// llama equivalent: the GGUF is the closest llama model (see describeDiffs).
// afm-pt-moe (parallel tracks, MoE) is refused.

import fs from 'fs';
import os from 'os';
import path from 'path';
import {Worker, isMainThread, parentPort} from 'worker_threads';
import {DEQUANTIZERS, GGML_TYPES, QUANTIZERS, rowBytes} from './ggml-quants.mjs';

const ALIGNMENT = 32;
const CHUNK_BYTES = 64 << 20; // f32 input read per chunk

class UsageError extends Error {}

function log(msg) { process.stderr.write(`gguf-from-afm: ${msg}\n`); }

function parseArgs(argv) {
  const args = {dir: null, out: null, type: 'f32', embeddingType: 'f32',
                outputType: 'f32', config: null, weights: null, dequantized: null,
                jobs: os.cpus().length, dryRun: false};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '-o' || arg === '--out') args.out = next();
    else if (arg === '--type') args.type = next();
    else if (arg === '--embedding-type') args.embeddingType = next();
    else if (arg === '--output-type') args.outputType = next();
    else if (arg === '--config') args.config = next();
    else if (arg === '--weights') args.weights = next();
    else if (arg === '--dequantized-weights') args.dequantized = next();
    else if (arg === '--dry-run') args.dryRun = true;
    else if (arg === '--jobs') {
      args.jobs = Number(next());
      if (!Number.isInteger(args.jobs) || args.jobs < 1)
        throw new UsageError('--jobs must be a positive integer');
    }
    else if (arg === '-h' || arg === '--help') {
      process.stdout.write(
          'usage: gguf-from-afm.mjs MODEL_DIR -o OUT.gguf [--type f32|q8_0|q4_0|tq2_0|q2_k]\n' +
          '       [--embedding-type f32|q8_0|q4_0] [--output-type f32|q8_0|q4_0]\n' +
          '       [--config config.json] [--weights model.safetensors]\n' +
          '       [--dequantized-weights deq.safetensors] [--jobs N] [--dry-run]\n');
      process.exit(0);
    } else if (!arg.startsWith('-') && args.dir === null) args.dir = arg;
    else throw new UsageError(`unknown argument '${arg}'`);
  }
  if (!args.out && !args.dryRun) throw new UsageError('-o OUT.gguf is required');
  if (!args.dir && !(args.config && args.weights))
    throw new UsageError('give MODEL_DIR (or --config and --weights)');
  args.config ??= path.join(args.dir, 'config.json');
  args.weights ??= path.join(args.dir, 'model.safetensors');
  const check = (name, value, allowed) => {
    if (!allowed.includes(value))
      throw new UsageError(`${name} '${value}': expected one of ${allowed.join(', ')}`);
  };
  check('--type', args.type, ['f32', 'q8_0', 'q4_0', 'tq2_0', 'q2_k']);
  check('--embedding-type', args.embeddingType, ['f32', 'q8_0', 'q4_0']);
  check('--output-type', args.outputType, ['f32', 'q8_0', 'q4_0']);
  return args;
}

// --- config.json, with the defaults of docs/model-config.md ----------------

function readConfig(file) {
  let raw;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: ${e.message}`);
  }
  const arch = raw.architecture;
  if (arch === 'afm-pt-moe')
    throw new Error(`${file}: architecture 'afm-pt-moe' (parallel tracks with MoE ` +
                    'layers) has no llama-architecture equivalent; only afm-dense and ' +
                    'afm-on-device convert');
  if (arch !== 'afm-dense' && arch !== 'afm-on-device')
    throw new Error(`${file}: unknown architecture '${arch}' (expected afm-dense or afm-on-device)`);
  const need = (key) => {
    if (!Number.isInteger(raw[key]) || raw[key] < 1)
      throw new Error(`${file}: key '${key}' must be a positive integer`);
    return raw[key];
  };
  const dense = arch === 'afm-dense';
  const c = {
    architecture: arch,
    V: need('vocab_size'),
    d: need('hidden_size'),
    F: need('intermediate_size'),
    L: need('num_hidden_layers'),
    H: need('num_attention_heads'),
  };
  c.G = raw.num_key_value_heads ?? c.H;
  c.hd = raw.head_dim ?? c.d / c.H;
  if (!Number.isInteger(c.hd) || c.hd % 2 !== 0)
    throw new Error(`${file}: head_dim ${c.hd} must be an even integer`);
  if (c.H % c.G !== 0)
    throw new Error(`${file}: num_attention_heads ${c.H} is not a multiple of num_key_value_heads ${c.G}`);
  c.eps = raw.rms_norm_eps ?? 1e-5;
  c.theta = raw.rope_theta ?? 500000;
  c.ctx = raw.max_position_embeddings ?? 4096;
  c.tied = raw.tie_word_embeddings ?? false;
  c.window = raw.sliding_window ?? 4096;
  c.localPerGlobal = raw.local_per_global ?? (dense ? 0 : 3);
  c.ropeInGlobal = raw.rope_in_global_layers ?? dense;
  c.block1Fraction = raw.block1_fraction ?? 0.625;
  c.formats = {
    linear_weight_format: raw.linear_weight_format ?? 'f32',
    embedding_format: raw.embedding_format ?? 'f32',
    kv_cache_dtype: raw.kv_cache_dtype ?? 'f32',
    linear_activations: raw.linear_activations ?? 'f32',
    lora_rank: raw.lora_rank ?? 0,
  };
  return c;
}

// ModelConfig.cpp's isLocalLayer / usesRope / block1Layers / kvSourceLayer.
const isLocal = (c, i) => c.localPerGlobal > 0 && i % (c.localPerGlobal + 1) < c.localPerGlobal;
const usesRope = (c, i) => isLocal(c, i) || c.ropeInGlobal;
function block1Layers(c) {
  if (c.architecture !== 'afm-on-device') return c.L;
  const count = Math.ceil(c.block1Fraction * c.L - 1e-6);
  return Math.min(Math.max(count, 1), c.L);
}
const isBlock2 = (c, i) => c.architecture === 'afm-on-device' && i >= block1Layers(c);
function kvSourceLayer(c, i) {
  if (!isBlock2(c, i)) return i;
  const last = block1Layers(c) - 1;
  if (c.localPerGlobal === 0) return last;
  const period = c.localPerGlobal + 1;
  if (isLocal(c, i)) return isLocal(c, last) ? last : last - 1;
  if (last < c.localPerGlobal) return -1;
  return last - ((last - c.localPerGlobal) % period);
}

// Compressed ranges of layer indices: "0-2, 4-6".
function ranges(list) {
  const parts = [];
  for (let i = 0; i < list.length;) {
    let j = i;
    while (j + 1 < list.length && list[j + 1] === list[j] + 1) ++j;
    parts.push(i === j ? `${list[i]}` : `${list[i]}-${list[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

// Every way the GGUF's llama model differs from the afm model.
function describeDiffs(c, args) {
  const diffs = [];
  const layers = [...Array(c.L).keys()];
  const local = layers.filter((i) => isLocal(c, i));
  const nope = layers.filter((i) => !usesRope(c, i));
  const block2 = layers.filter((i) => isBlock2(c, i));
  if (local.length)
    diffs.push(`afm layers ${ranges(local)} are local (sliding window ${c.window}); ` +
               'llama has no sliding window, so the GGUF attends over the whole context in ' +
               `every layer (the same up to ${c.window} positions, more work beyond)`);
  if (nope.length)
    diffs.push(`afm layers ${ranges(nope)} are global NoPE layers (no RoPE); the GGUF ` +
               'applies RoPE in every layer');
  if (block2.length) {
    const sources = block2.map((i) => `${i}<-${kvSourceLayer(c, i)}`).join(' ');
    diffs.push(`afm Block-2 layers ${ranges(block2)} have no k/v projections and read the ` +
               `KV cache of their source layer (${sources}); the GGUF gives each its own ` +
               'k/v projections, copies of its source\'s weights, and its own KV cache: ' +
               `llama.cpp computes ${block2.length} more layers of K/V and caches them (more ` +
               'work than afm; the logits differ from afm\'s)');
  }
  const f = c.formats;
  if (f.linear_weight_format !== 'f32' || f.embedding_format !== 'f32' ||
      f.kv_cache_dtype !== 'f32' || f.linear_activations !== 'f32' || f.lora_rank)
    diffs.push(`the config asks afm for linear_weight_format ${f.linear_weight_format}, ` +
               `embedding_format ${f.embedding_format}, kv_cache_dtype ${f.kv_cache_dtype}, ` +
               `linear_activations ${f.linear_activations}, lora_rank ${f.lora_rank}; the GGUF ` +
               `holds linear weights as ${args.type}, token_embd as ${args.embeddingType} ` +
               '(the KV cache type is chosen when llama.cpp creates a context)');
  return diffs;
}

// --- safetensors -------------------------------------------------------------

function readSafetensorsHeader(fd, file) {
  const head = Buffer.alloc(8);
  if (fs.readSync(fd, head, 0, 8, 0) !== 8) throw new Error(`${file}: not a safetensors file`);
  const n = Number(head.readBigUInt64LE(0));
  const size = fs.fstatSync(fd).size;
  if (n > size - 8 || n > 100 << 20) throw new Error(`${file}: bad safetensors header length ${n}`);
  const json = Buffer.alloc(n);
  fs.readSync(fd, json, 0, n, 8);
  const header = JSON.parse(json.toString('utf8'));
  delete header.__metadata__;
  for (const info of Object.values(header)) {
    const [begin, end] = info.data_offsets;
    info.fileOffset = 8 + n + begin;
    info.byteLength = end - begin;
    if (info.fileOffset + info.byteLength > size)
      throw new Error(`${file}: tensor data past the end of the file`);
  }
  return header;
}

// --- the tensors of the GGUF -------------------------------------------------

// Each entry: GGUF name, source tensor, HF shape [rows, cols], ggml type,
// and the number of heads whose rows get the RoPE permutation (0: none).
function planTensors(c, args, header, file) {
  const plan = [];
  const problems = [];
  const expected = new Set();
  const source = (name, shape) => {
    expected.add(name);
    const info = header[name];
    if (!info) {
      problems.push(`missing tensor '${name}' (expected shape [${shape}])`);
      return null;
    }
    if (info.dtype !== 'F32')
      problems.push(`tensor '${name}' has dtype ${info.dtype}; the converter reads F32 tensors only`);
    if (info.shape.length !== shape.length || info.shape.some((v, k) => v !== shape[k]))
      problems.push(`tensor '${name}' has shape [${info.shape}], expected [${shape}]`);
    return info;
  };
  const fallbacks = [];
  const typeFor = (name, want, rowLength) => {
    for (const t of [want, 'q4_0', 'f32']) {
      if (rowLength % GGML_TYPES[t].block === 0) {
        if (t !== want) fallbacks.push(`${name}: rows of ${rowLength} are not a multiple of ` +
                                       `${GGML_TYPES[want].block}, ${want} -> ${t}`);
        return t;
      }
    }
  };
  const add = (gguf, hf, shape, type, ropeHeads = 0) => {
    const info = source(hf, shape);
    // A Block-2 layer's copy of its source's k or v.
    const copy = plan.some((t) => t.source === hf);
    plan.push({name: gguf, source: hf, info, shape, copy,
               type: shape.length === 1 ? 'f32' : typeFor(gguf, type, shape[1]), ropeHeads});
  };
  const {V, d, F, H, G, hd} = c;
  add('token_embd.weight', 'model.embed_tokens.weight', [V, d], args.embeddingType);
  for (let i = 0; i < c.L; ++i) {
    const p = `model.layers.${i}.`, b = `blk.${i}.`;
    const kv = `model.layers.${kvSourceLayer(c, i)}.`;
    add(b + 'attn_norm.weight', p + 'input_layernorm.weight', [d], 'f32');
    add(b + 'attn_q.weight', p + 'self_attn.q_proj.weight', [H * hd, d], args.type, H);
    // A Block-2 layer's k/v: its source's (read again from the file).
    add(b + 'attn_k.weight', kv + 'self_attn.k_proj.weight', [G * hd, d], args.type, G);
    add(b + 'attn_v.weight', kv + 'self_attn.v_proj.weight', [G * hd, d], args.type);
    add(b + 'attn_output.weight', p + 'self_attn.o_proj.weight', [d, H * hd], args.type);
    add(b + 'ffn_norm.weight', p + 'post_attention_layernorm.weight', [d], 'f32');
    add(b + 'ffn_gate.weight', p + 'mlp.gate_proj.weight', [F, d], args.type);
    add(b + 'ffn_up.weight', p + 'mlp.up_proj.weight', [F, d], args.type);
    add(b + 'ffn_down.weight', p + 'mlp.down_proj.weight', [d, F], args.type);
  }
  add('output_norm.weight', 'model.norm.weight', [d], 'f32');
  if (!c.tied) add('output.weight', 'lm_head.weight', [V, d], args.outputType);
  for (const name of Object.keys(header))
    if (!expected.has(name))
      problems.push(`unexpected tensor '${name}'${name === 'lm_head.weight' ? ' (tie_word_embeddings is true)' : ''}`);
  if (problems.length)
    throw new Error(`${file}:\n  ${problems.join('\n  ')}`);
  for (const t of plan) t.bytes = t.shape.length === 1 ? t.shape[0] * 4
                                                       : t.shape[0] * rowBytes(t.type, t.shape[1]);
  return {plan, fallbacks};
}

// --- GGUF writing ---------------------------------------------------------

const GGUF_TYPE = {UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9};

// A vocabulary of V dummy tokens: the models are driven with token ids only.
// llama.cpp accepts tokenizer.ggml.model "none" (V dummy tokens from
// llama.vocab_size), but node-llama-cpp 3.22.1 tokenizes a test string when
// it loads a model, which aborts on a vocabulary without a tokenizer. So this
// is a Llama-2 style SentencePiece ("llama") vocabulary: <unk>, <s>, </s>,
// byte tokens <0x00>.. (enough for any UTF-8 text at V >= 256: UTF-8 never
// uses bytes 0xFD..0xFF) and <afm_i> for the rest, all scores 0.
function vocabularyKV(V) {
  const tokens = [], types = [];
  for (let i = 0; i < V; ++i) {
    if (i < 3) {
      tokens.push(['<unk>', '<s>', '</s>'][i]);
      types.push(i === 0 ? 2 : 3); // UNKNOWN, CONTROL
    } else if (i < 3 + 256) {
      tokens.push(`<0x${(i - 3).toString(16).toUpperCase().padStart(2, '0')}>`);
      types.push(6); // BYTE
    } else {
      tokens.push(`<afm_${i}>`);
      types.push(1); // NORMAL
    }
  }
  return [
    ['tokenizer.ggml.model', 'str', 'llama'],
    ['tokenizer.ggml.tokens', 'strs', tokens],
    ['tokenizer.ggml.scores', 'f32s', new Array(V).fill(0)],
    ['tokenizer.ggml.token_type', 'i32s', types],
    ['tokenizer.ggml.add_bos_token', 'bool', false],
  ];
}

class Bytes {
  constructor() { this.parts = []; this.length = 0; }
  push(buf) { this.parts.push(buf); this.length += buf.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
  concat() { return Buffer.concat(this.parts); }
}

const pad = (n) => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

function ggufHeader(c, args, plan) {
  const ftype = {f32: 0, q4_0: 2, q8_0: 7, q2_k: 10, tq2_0: 37}[args.type];
  const kv = [
    ['general.architecture', 'str', 'llama'],
    ['general.name', 'str', `${c.architecture} (gguf-from-afm, ${args.type})`],
    ['general.alignment', 'u32', ALIGNMENT],
    ['general.file_type', 'u32', ftype],
    ['llama.vocab_size', 'u32', c.V],
    ['llama.context_length', 'u32', c.ctx],
    ['llama.embedding_length', 'u32', c.d],
    ['llama.block_count', 'u32', c.L],
    ['llama.feed_forward_length', 'u32', c.F],
    ['llama.attention.head_count', 'u32', c.H],
    ['llama.attention.head_count_kv', 'u32', c.G],
    ['llama.attention.key_length', 'u32', c.hd],
    ['llama.attention.value_length', 'u32', c.hd],
    ['llama.rope.dimension_count', 'u32', c.hd],
    ['llama.rope.freq_base', 'f32', c.theta],
    ['llama.attention.layer_norm_rms_epsilon', 'f32', c.eps],
    ...vocabularyKV(c.V),
  ];
  const out = new Bytes();
  out.push(Buffer.from('GGUF', 'ascii'));
  out.u32(3);
  out.u64(plan.length);
  out.u64(kv.length);
  for (const [key, type, value] of kv) {
    out.str(key);
    if (type === 'str') { out.u32(GGUF_TYPE.STRING); out.str(value); }
    else if (type === 'u32') { out.u32(GGUF_TYPE.UINT32); out.u32(value); }
    else if (type === 'f32') { out.u32(GGUF_TYPE.FLOAT32); out.f32(value); }
    else if (type === 'bool') { out.u32(GGUF_TYPE.BOOL); out.push(Buffer.from([value ? 1 : 0])); }
    else {
      const [elementType, write] = {
        strs: [GGUF_TYPE.STRING, (v) => out.str(v)],
        f32s: [GGUF_TYPE.FLOAT32, (v) => out.f32(v)],
        i32s: [GGUF_TYPE.INT32, (v) => out.i32(v)],
      }[type];
      out.u32(GGUF_TYPE.ARRAY);
      out.u32(elementType);
      out.u64(value.length);
      value.forEach(write);
    }
  }
  let offset = 0;
  for (const t of plan) {
    out.str(t.name);
    const ne = [...t.shape].reverse(); // ggml: ne[0] is the row length
    out.u32(ne.length);
    for (const n of ne) out.u64(n);
    out.u32(GGML_TYPES[t.type].id);
    out.u64(offset);
    t.offset = offset;
    offset += pad(t.bytes);
  }
  const header = out.concat();
  return {header, dataStart: pad(header.length), dataBytes: offset};
}

// Rows of a q or k projection in llama.cpp's order: within each head of hd
// rows, row 2i + j comes from row j * hd/2 + i (convert_hf_to_gguf.py's
// LlamaModel.permute).
function permuteHeads(src, dst, rows, cols, hd) {
  const half = hd / 2;
  for (let h = 0; h < rows / hd; ++h)
    for (let i = 0; i < half; ++i)
      for (let j = 0; j < 2; ++j) {
        const from = (h * hd + j * half + i) * cols;
        dst.set(src.subarray(from, from + cols), (h * hd + 2 * i + j) * cols);
      }
  return dst;
}

// The inverse of permuteHeads: afm's row order.
function unpermuteHeads(src, dst, rows, cols, hd) {
  const half = hd / 2;
  for (let h = 0; h < rows / hd; ++h)
    for (let i = 0; i < half; ++i)
      for (let j = 0; j < 2; ++j) {
        const from = (h * hd + 2 * i + j) * cols;
        dst.set(src.subarray(from, from + cols), (h * hd + j * half + i) * cols);
      }
  return dst;
}

// The header of a safetensors file with the afm tensors of `plan` (F32, in
// plan order), padded with spaces to 8 bytes; sets each entry's deqOffset.
function safetensorsHeader(plan) {
  const header = {__metadata__: {generator: 'gguf-from-afm (dequantized)'}};
  let offset = 0;
  for (const t of plan) {
    if (t.copy) continue;
    const bytes = t.shape.reduce((a, b) => a * b, 1) * 4;
    header[t.source] = {dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes]};
    t.deqOffset = offset;
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const out = Buffer.alloc(8 + json.length);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  out.write(json, 8, 'utf8');
  return {header: out, total: out.length + offset};
}

function writeAll(fd, buf, position) {
  let done = 0;
  while (done < buf.length)
    done += fs.writeSync(fd, buf, done, buf.length - done, position + done);
}

// Quantizes rows of `x` (shared memory) into `out` on `jobs` worker threads,
// a contiguous range of rows each.
class QuantizerPool {
  constructor(jobs) {
    this.workers = [];
    for (let i = 0; i < jobs; ++i) {
      const worker = new Worker(new URL(import.meta.url));
      worker.unref();
      this.workers.push(worker);
    }
  }

  async quantize(type, x, out, rows, cols, outRow) {
    const per = Math.ceil(rows / this.workers.length);
    const jobs = [];
    for (let w = 0; w < this.workers.length && w * per < rows; ++w) {
      const begin = w * per, end = Math.min(rows, begin + per);
      const worker = this.workers[w];
      jobs.push(new Promise((resolve, reject) => {
        worker.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve()));
        worker.postMessage({type, x: x.buffer, xOffset: x.byteOffset + begin * cols * 4,
                            count: (end - begin) * cols, out: out.buffer,
                            outOffset: out.byteOffset + begin * outRow, outBytes: (end - begin) * outRow});
      }));
    }
    await Promise.all(jobs);
  }

  close() {
    for (const worker of this.workers) worker.terminate();
  }
}

function workerMain() {
  parentPort.on('message', (m) => {
    try {
      QUANTIZERS[m.type](new Float32Array(m.x, m.xOffset, m.count),
                         new Uint8Array(m.out, m.outOffset, m.outBytes));
      parentPort.postMessage({});
    } catch (e) {
      parentPort.postMessage({error: e.message});
    }
  });
}

async function convert(args) {
  const c = readConfig(args.config);
  const wfd = fs.openSync(args.weights, 'r');
  try {
    const header = readSafetensorsHeader(wfd, args.weights);
    const {plan, fallbacks} = planTensors(c, args, header, args.weights);
    const diffs = describeDiffs(c, args);
    log(`${c.architecture}: ${c.L} layers, d ${c.d}, F ${c.F}, heads ${c.H}/${c.G} of ${c.hd}, ` +
        `V ${c.V}, ${c.tied ? 'tied' : 'untied'} embeddings; linear ${args.type}, ` +
        `token_embd ${args.embeddingType}${c.tied ? '' : `, output ${args.outputType}`}`);
    if (diffs.length === 0)
      log('same model as afm (llama architecture; q/k rows permuted for llama.cpp\'s RoPE)');
    else
      for (const diff of diffs) log(`differs from afm: ${diff}`);
    for (const fb of fallbacks) log(`fallback: ${fb}`);

    const {header: gguf, dataStart, dataBytes} = ggufHeader(c, args, plan);
    if (args.dryRun) {
      const counts = {};
      for (const t of plan) counts[t.type] = (counts[t.type] ?? 0) + 1;
      log(`dry run: ${plan.length} tensors (${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}), ` +
          `${((dataStart + dataBytes) / 2 ** 20).toFixed(1)} MiB; nothing written`);
      return;
    }
    const ofd = fs.openSync(args.out, 'w');
    const quantized = plan.some((t) => t.type !== 'f32');
    const pool = quantized && args.jobs > 1 ? new QuantizerPool(args.jobs) : null;
    let dfd = null, deqStart = 0, deqTotal = 0;
    if (args.dequantized) {
      const {header: deqHeader, total} = safetensorsHeader(plan);
      dfd = fs.openSync(args.dequantized, 'w');
      writeAll(dfd, deqHeader, 0);
      deqStart = deqHeader.length;
      deqTotal = total;
    }
    try {
      writeAll(ofd, gguf, 0);
      writeAll(ofd, Buffer.alloc(dataStart - gguf.length), gguf.length);
      const total = dataStart + dataBytes;
      let written = 0, lastReport = Date.now();
      // Buffers reused by every chunk (shared with the quantizing workers):
      // the input rows, two float scratch areas, the quantized rows.
      const chunkRowsOf = (t) => {
        const cols = t.shape.length === 1 ? t.shape[0] : t.shape[1];
        const unit = t.ropeHeads ? c.hd : 1;
        return Math.max(unit, Math.floor(CHUNK_BYTES / (cols * 4) / unit) * unit);
      };
      const maxFloats = Math.max(...plan.map((t) => {
        const [rows, cols] = t.shape.length === 1 ? [1, t.shape[0]] : t.shape;
        return Math.min(rows, chunkRowsOf(t)) * cols;
      }));
      const floatAreas = [new SharedArrayBuffer(maxFloats * 4), new SharedArrayBuffer(maxFloats * 4)];
      const scratch = {
        input: Buffer.from(new SharedArrayBuffer(maxFloats * 4)),
        output: Buffer.from(new SharedArrayBuffer(maxFloats * 4)),
        floats: (i, n) => new Float32Array(floatAreas[i], 0, n),
      };
      const started = Date.now();
      for (const t of plan) {
        const [rows, cols] = t.shape.length === 1 ? [1, t.shape[0]] : t.shape;
        const rowIn = cols * 4;
        const chunkRows = chunkRowsOf(t);
        const outRow = t.type === 'f32' ? rowIn : rowBytes(t.type, cols);
        let pos = dataStart + t.offset;
        for (let r = 0; r < rows; r += chunkRows) {
          const n = Math.min(chunkRows, rows - r);
          const inBuf = scratch.input.subarray(0, n * rowIn);
          const got = fs.readSync(wfd, inBuf, 0, inBuf.length, t.info.fileOffset + r * rowIn);
          if (got !== inBuf.length) throw new Error(`${args.weights}: short read of '${t.source}'`);
          const original = new Float32Array(inBuf.buffer, inBuf.byteOffset, n * cols);
          const x = t.ropeHeads ? permuteHeads(original, scratch.floats(0, n * cols), n, cols, c.hd)
                                : original;
          let outBuf;
          if (t.type === 'f32') {
            outBuf = Buffer.from(x.buffer, x.byteOffset, x.byteLength);
          } else {
            outBuf = scratch.output.subarray(0, n * outRow);
            if (pool) await pool.quantize(t.type, x, outBuf, n, cols, outRow);
            else QUANTIZERS[t.type](x, outBuf);
          }
          writeAll(ofd, outBuf, pos);
          if (dfd !== null && !t.copy) {
            let deq = original;
            if (t.type !== 'f32') {
              deq = scratch.floats(1, n * cols);
              DEQUANTIZERS[t.type](outBuf, deq);
              if (t.ropeHeads) deq = unpermuteHeads(deq, scratch.floats(0, n * cols), n, cols, c.hd);
            }
            writeAll(dfd, Buffer.from(deq.buffer, deq.byteOffset, deq.byteLength),
                     deqStart + t.deqOffset + r * rowIn);
          }
          pos += outBuf.length;
          written += outBuf.length;
          if (Date.now() - lastReport > 2000) {
            lastReport = Date.now();
            log(`${t.name} rows ${r + n}/${rows}; ${(written / 2 ** 20).toFixed(0)} of ` +
                `${(dataBytes / 2 ** 20).toFixed(0)} MiB written`);
          }
        }
        const padding = pad(t.bytes) - t.bytes;
        if (padding) writeAll(ofd, Buffer.alloc(padding), dataStart + t.offset + t.bytes);
      }
      fs.ftruncateSync(ofd, total);
      log(`wrote ${args.out}: ${plan.length} tensors, ${(total / 2 ** 20).toFixed(1)} MiB in ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s`);
      if (dfd !== null) {
        fs.ftruncateSync(dfd, deqTotal);
        log(`wrote ${args.dequantized}: the weights llama.cpp multiplies by, dequantized`);
      }
    } finally {
      fs.closeSync(ofd);
      if (dfd !== null) fs.closeSync(dfd);
      pool?.close();
    }
  } finally {
    fs.closeSync(wfd);
  }
}

if (isMainThread) {
  try {
    await convert(parseArgs(process.argv.slice(2)));
  } catch (e) {
    log(`error: ${e.message}`);
    process.exit(e instanceof UsageError ? 2 : 1);
  }
} else {
  workerMain();
}
