#!/usr/bin/env node
// Greedy decoding of a static-shape ONNX decoder with ONNX Runtime (CPU),
// the reference that afm-onnx-greedy is compared with.
//
//   node scripts/ort-greedy.js model.onnx --prompt 3,10,17 --steps 16 \
//       --logits-out ref.logits --tokens-out ref.tokens [--seq-len S]
//
// The model takes input_ids int64 [1, S] and returns logits float
// [1, S, V]; a symbolic S (dim_param) needs --seq-len. The protocol is afm-reference's: the prompt gives L_0 and
// t_1 = argmax(L_0); decode step k = 1..N feeds t_k and gives L_k and
// t_{k+1}. On a static graph each run takes the whole S-slot sequence
// (prompt and tokens so far, padded with token 0; causal attention keeps
// the padding out of the positions read) and L_k is the row of the last
// filled position. --logits-out gets L_0..L_N (raw little-endian f32),
// --tokens-out t_1..t_{N+1} on one line, space separated.
//
// A decoder with a KV cache (inputs input_ids, attention_mask, optional
// position_ids, past_key_values.N.key/value; outputs logits and
// present.N.key/value in the same order) runs as its exporter meant: the
// prompt with an empty past, then one token a step with the previous
// step's present as the past, attention_mask all ones, position_ids the
// positions. L_k is then the last row of each run.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const args = {steps: 16, prompt: null, logitsOut: null, tokensOut: null, model: null,
                seqLen: null};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--prompt') args.prompt = next().split(',').map(Number);
    else if (arg === '--steps') args.steps = Number(next());
    else if (arg === '--logits-out') args.logitsOut = next();
    else if (arg === '--tokens-out') args.tokensOut = next();
    else if (arg === '--seq-len') args.seqLen = Number(next());
    else if (!arg.startsWith('--') && args.model === null) args.model = arg;
    else throw new Error(`unknown argument '${arg}'`);
  }
  if (!args.model || !args.prompt || !args.logitsOut)
    throw new Error('usage: ort-greedy.js model.onnx --prompt t0,t1,... ' +
                    '[--steps N] --logits-out file [--tokens-out file]');
  return args;
}

function argmax(row) {
  let best = 0;
  for (let v = 1; v < row.length; ++v)
    if (row[v] > row[best]) best = v;
  return best;
}

async function runWithCache(session, args) {
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const presentNames = pastNames.map((n) => n.replace(/^past_key_values\./, 'present.'));
  for (const name of presentNames)
    if (!session.outputNames.includes(name))
      throw new Error(`the graph has no output '${name}' for its cache input`);
  let past = {};
  for (const name of pastNames) {
    const shape = session.inputMetadata[session.inputNames.indexOf(name)].shape;
    if (typeof shape[1] !== 'number' || typeof shape[3] !== 'number')
      throw new Error(`'${name}' needs static head dimensions, has [${shape}]`);
    past[name] = new ort.Tensor('float32', new Float32Array(0), [1, shape[1], 0, shape[3]]);
  }
  const logitsOut = [];
  const tokens = [];
  let position = 0;
  let input = args.prompt;
  for (let step = 0; step <= args.steps; ++step) {
    const n = input.length;
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(input.map(BigInt)), [1, n]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(position + n).fill(1n),
                                     [1, position + n]),
      ...past,
    };
    if (session.inputNames.includes('position_ids'))
      feeds.position_ids = new ort.Tensor(
          'int64', BigInt64Array.from({length: n}, (_, i) => BigInt(position + i)), [1, n]);
    const result = await session.run(feeds);
    const logits = result[session.outputNames[0]];
    const vocab = logits.dims[2];
    const row = logits.data.slice((n - 1) * vocab, n * vocab);
    logitsOut.push(Buffer.from(row.buffer, row.byteOffset, row.byteLength));
    const best = argmax(row);
    tokens.push(best);
    past = {};
    pastNames.forEach((name, i) => { past[name] = result[presentNames[i]]; });
    position += n;
    input = [best];
  }
  return {logitsOut, tokens};
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
  });
  if (session.inputNames.some((n) => n.startsWith('past_key_values.'))) {
    const {logitsOut, tokens} = await runWithCache(session, args);
    fs.writeFileSync(args.logitsOut, Buffer.concat(logitsOut));
    if (args.tokensOut) fs.writeFileSync(args.tokensOut, tokens.join(' ') + '\n');
    console.log(`tokens: ${tokens.join(' ')}`);
    return;
  }
  const inputName = session.inputNames[0];
  const shape = session.inputMetadata[0].shape;
  const seqLen = typeof shape[1] === 'number' ? shape[1] : args.seqLen;
  if (!Number.isInteger(seqLen) || seqLen < 1)
    throw new Error(`the sequence dimension is '${shape[1]}': give --seq-len`);
  if (args.prompt.length + args.steps > seqLen)
    throw new Error(`prompt and steps do not fit ${seqLen} positions`);

  const ids = new BigInt64Array(seqLen);
  args.prompt.forEach((token, i) => { ids[i] = BigInt(token); });
  let filled = args.prompt.length;
  const logitsOut = [];
  const tokens = [];
  for (let step = 0; step <= args.steps; ++step) {
    const feeds = {[inputName]: new ort.Tensor('int64', ids, [1, seqLen])};
    const result = await session.run(feeds);
    const logits = result[session.outputNames[0]];
    const vocab = logits.dims[2];
    const row = logits.data.slice((filled - 1) * vocab, filled * vocab);
    logitsOut.push(Buffer.from(row.buffer, row.byteOffset, row.byteLength));
    let best = 0;
    for (let v = 1; v < vocab; ++v)
      if (row[v] > row[best]) best = v;
    tokens.push(best);
    if (step < args.steps) ids[filled++] = BigInt(best);
  }
  fs.writeFileSync(args.logitsOut, Buffer.concat(logitsOut));
  if (args.tokensOut) fs.writeFileSync(args.tokensOut, tokens.join(' ') + '\n');
  console.log(`tokens: ${tokens.join(' ')}`);
}

main().catch((error) => {
  console.error(`ort-greedy: error: ${error.message}`);
  process.exit(1);
});
