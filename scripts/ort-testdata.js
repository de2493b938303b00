#!/usr/bin/env node
// Writes an ONNX backend-test directory for a float model with ONNX
// Runtime (CPU) as the reference, for afm-onnx-conformance:
//
//   node scripts/ort-testdata.js model.onnx out-dir [--seed N]
//
// out-dir gets model.onnx and test_data_set_0/{input,output}_<i>.pb:
// seeded uniform [-1, 1) inputs (every graph input must be float) and
// ONNX Runtime's outputs, as serialized TensorProtos (dims, FLOAT,
// raw_data).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function varint(value) {
  const bytes = [];
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Buffer.from(bytes);
}

// TensorProto: dims = 1 (varint), data_type = 2, raw_data = 9.
function tensorProto(dims, data) {
  const parts = [];
  for (const dim of dims) parts.push(Buffer.from([0x08]), varint(dim));
  parts.push(Buffer.from([0x10]), varint(1));
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  parts.push(Buffer.from([0x4a]), varint(raw.length), raw);
  return Buffer.concat(parts);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 2)
    throw new Error('usage: ort-testdata.js model.onnx out-dir [--seed N]');
  const [model, outDir] = argv;
  let seed = argv[2] === '--seed' ? Number(argv[3]) : 1;
  const random = () => {
    // A 32-bit LCG: the same inputs on every machine.
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return (seed / 4294967296) * 2 - 1;
  };

  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
  });
  const dataDir = path.join(outDir, 'test_data_set_0');
  fs.mkdirSync(dataDir, {recursive: true});
  fs.copyFileSync(model, path.join(outDir, 'model.onnx'));
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata[i];
    if (meta.type !== 'float32')
      throw new Error(`input '${name}' is ${meta.type}, not float32`);
    const count = meta.shape.reduce((a, b) => a * b, 1);
    const data = Float32Array.from({length: count}, random);
    feeds[name] = new ort.Tensor('float32', data, meta.shape);
    fs.writeFileSync(path.join(dataDir, `input_${i}.pb`),
                     tensorProto(meta.shape, data));
  });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, i) => {
    const tensor = results[name];
    if (tensor.type !== 'float32')
      throw new Error(`output '${name}' is ${tensor.type}, not float32`);
    fs.writeFileSync(path.join(dataDir, `output_${i}.pb`),
                     tensorProto(tensor.dims, tensor.data));
  });
}

main().catch((error) => {
  console.error(`ort-testdata: error: ${error.message}`);
  process.exit(1);
});
