// ggml's block quantizations, written from the reference quantizers of
// llama.cpp's ggml/src/ggml-quants.c (quantize_row_{q8_0,q4_0,tq2_0,q2_K}_ref,
// make_qkx2_quants, nearest_int) and the block layouts of ggml-common.h.
// What llama-quantize writes for these types without an importance matrix
// is exactly these functions' output; every float operation here is rounded
// to f32 (Math.fround) in the order the C code evaluates it, so the bytes
// are the same as ggml's (scripts/check-ggml-quants.py compares them with
// ggml_quantize_chunk of the libggml-base that node-llama-cpp ships).
//
// Each quantizer takes a Float32Array `x` (whole rows, length a multiple of
// the block size) and writes the blocks into the Uint8Array `out` from
// offset 0.

const f = Math.fround;

// ggml_type ids (ggml.h) and their block sizes / bytes per block.
export const GGML_TYPES = {
  f32: {id: 0, block: 1, bytes: 4},
  q4_0: {id: 2, block: 32, bytes: 18},
  q8_0: {id: 8, block: 32, bytes: 34},
  q2_k: {id: 10, block: 256, bytes: 84},
  tq2_0: {id: 35, block: 256, bytes: 66},
};

export function rowBytes(type, n) {
  const t = GGML_TYPES[type];
  if (n % t.block !== 0)
    throw new Error(`${type}: a row of ${n} is not a multiple of ${t.block}`);
  return (n / t.block) * t.bytes;
}

// --- f32 <-> f16 (ggml_compute_fp32_to_fp16 / fp16_to_fp32) ---------------

const cvtF = new Float32Array(1);
const cvtU = new Uint32Array(cvtF.buffer);
const bitsOf = (v) => { cvtF[0] = v; return cvtU[0]; };
const fromBits = (u) => { cvtU[0] = u >>> 0; return cvtF[0]; };

// Round to nearest even, as ggml_compute_fp32_to_fp16 (the scalar path of
// GGML_FP32_TO_FP16; F16C's vcvtps2ph with mode 0 rounds the same way).
export function fp32ToFp16(value) {
  const scaleToInf = 2 ** 112; // 0x1.0p+112f
  const scaleToZero = 2 ** -110; // 0x1.0p-110f
  let base = f(f(Math.abs(f(value)) * scaleToInf) * scaleToZero);
  const w = bitsOf(value);
  const shl1w = (w + w) >>> 0;
  const sign = (w & 0x80000000) >>> 0;
  let bias = (shl1w & 0xFF000000) >>> 0;
  if (bias < 0x71000000) bias = 0x71000000;
  base = f(fromBits(((bias >>> 1) + 0x07800000) >>> 0) + base);
  const bits = bitsOf(base);
  const expBits = (bits >>> 13) & 0x00007C00;
  const mantissaBits = bits & 0x00000FFF;
  const nonsign = expBits + mantissaBits;
  return ((sign >>> 16) | (shl1w > 0xFF000000 ? 0x7E00 : nonsign)) & 0xFFFF;
}

export function fp16ToFp32(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1F;
  const mant = h & 0x3FF;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// nearest_int: (fval + 1.5 * 2^23) in f32, low mantissa bits; round half to
// even for |fval| <= 4194303.
function nearestInt(fval) {
  return f(fval + 12582912) - 12582912;
}

// roundf / lroundf: half away from zero.
function roundAway(v) {
  return v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5);
}

// --- Q8_0: {f16 d; int8 qs[32]} -------------------------------------------

export function quantizeQ8_0(x, out) {
  const nb = x.length / 32;
  for (let i = 0; i < nb; i++) {
    const base = i * 32;
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[base + j]));
    const d = f(amax / 127);
    const id = d ? f(1 / d) : 0;
    const h = fp32ToFp16(d);
    const o = i * 34;
    out[o] = h & 0xFF;
    out[o + 1] = h >> 8;
    for (let j = 0; j < 32; j++) out[o + 2 + j] = roundAway(f(x[base + j] * id)) & 0xFF;
  }
}

// --- Q4_0: {f16 d; uint8 qs[16]} ------------------------------------------

export function quantizeQ4_0(x, out) {
  const nb = x.length / 32;
  for (let i = 0; i < nb; i++) {
    const base = i * 32;
    let amax = 0, max = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[base + j];
      if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
    }
    const d = f(max / -8);
    const id = d ? f(1 / d) : 0;
    const h = fp32ToFp16(d);
    const o = i * 18;
    out[o] = h & 0xFF;
    out[o + 1] = h >> 8;
    for (let j = 0; j < 16; j++) {
      const x0 = f(x[base + j] * id);
      const x1 = f(x[base + 16 + j] * id);
      const xi0 = Math.min(15, Math.trunc(f(x0 + 8.5)));
      const xi1 = Math.min(15, Math.trunc(f(x1 + 8.5)));
      out[o + 2 + j] = xi0 | (xi1 << 4);
    }
  }
}

// --- TQ2_0: {uint8 qs[64]; f16 d} -----------------------------------------

export function quantizeTQ2_0(x, out) {
  const nb = x.length / 256;
  for (let i = 0; i < nb; i++) {
    let xo = i * 256;
    let amax = 0;
    for (let j = 0; j < 256; j++) amax = Math.max(amax, Math.abs(x[xo + j]));
    const d = f(amax);
    const id = d ? f(1 / d) : 0;
    const o = i * 66;
    for (let j = 0; j < 64; j += 32) {
      for (let m = 0; m < 32; m++) {
        let q = 0;
        for (let n = 0; n < 4; n++) {
          const xi = roundAway(f(x[xo + m + n * 32] * id)) + 1;
          q += (xi & 3) << (2 * n);
        }
        out[o + j + m] = q & 0xFF;
      }
      xo += 128;
    }
    const h = fp32ToFp16(d);
    out[o + 64] = h & 0xFF;
    out[o + 65] = h >> 8;
  }
}

// --- Q2_K: {uint8 scales[16]; uint8 qs[64]; f16 d; f16 dmin} --------------

// make_qkx2_quants(n, nmax, x, weights, L, &the_min, Laux, rmin, rdelta,
// nstep, use_mad) over x[xo .. xo+n); returns the scale, sets qkx2TheMin.
let qkx2TheMin = 0;
function makeQkx2Quants(n, nmax, x, xo, weights, L, lo, Laux, rmin, rdelta, nstep, useMad) {
  let min = x[xo], max = x[xo];
  let sumW = weights[0];
  let sumX = f(sumW * x[xo]);
  for (let i = 1; i < n; ++i) {
    const xi = x[xo + i];
    if (xi < min) min = xi;
    if (xi > max) max = xi;
    const w = weights[i];
    sumW = f(sumW + w);
    sumX = f(sumX + f(w * xi));
  }
  if (min > 0) min = 0;
  if (max === min) {
    for (let i = 0; i < n; ++i) L[lo + i] = 0;
    qkx2TheMin = -min;
    return 0;
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; ++i) {
    const l = nearestInt(f(iscale * f(x[xo + i] - min)));
    L[lo + i] = Math.max(0, Math.min(nmax, l));
    let diff = f(f(f(scale * L[lo + i]) + min) - x[xo + i]);
    diff = useMad ? Math.abs(diff) : f(diff * diff);
    bestError = f(bestError + f(weights[i] * diff));
  }
  if (nstep < 1) {
    qkx2TheMin = -min;
    return scale;
  }
  for (let is = 0; is <= nstep; ++is) {
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; ++i) {
      let l = nearestInt(f(iscale * f(x[xo + i] - min)));
      l = Math.max(0, Math.min(nmax, l));
      Laux[i] = l;
      const w = weights[i];
      const wl = f(w * l);
      sumL = f(sumL + wl);
      sumL2 = f(sumL2 + f(wl * l));
      sumXL = f(sumXL + f(wl * x[xo + i]));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (D > 0) {
      let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
      let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = f(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; ++i) {
        let diff = f(f(f(thisScale * Laux[i]) + thisMin) - x[xo + i]);
        diff = useMad ? Math.abs(diff) : f(diff * diff);
        curError = f(curError + f(weights[i] * diff));
      }
      if (curError < bestError) {
        for (let i = 0; i < n; ++i) L[lo + i] = Laux[i];
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  qkx2TheMin = -min;
  return scale;
}

const RDELTA = f(0.1);

export function quantizeQ2_K(x, out) {
  const nb = x.length / 256;
  const L = new Uint8Array(256);
  const Laux = new Uint8Array(16);
  const weights = new Float32Array(16);
  const mins = new Float32Array(16);
  const scales = new Float32Array(16);
  const sc = new Uint8Array(16);
  const q4scale = 15;
  for (let i = 0; i < nb; i++) {
    const xo = i * 256;
    let maxScale = 0, maxMin = 0;
    for (let j = 0; j < 16; ++j) {
      for (let l = 0; l < 16; ++l) weights[l] = Math.abs(x[xo + 16 * j + l]);
      scales[j] = makeQkx2Quants(16, 3, x, xo + 16 * j, weights, L, 16 * j, Laux,
                                 -0.5, RDELTA, 15, true);
      mins[j] = qkx2TheMin;
      if (scales[j] > maxScale) maxScale = scales[j];
      if (mins[j] > maxMin) maxMin = mins[j];
    }
    let dh, dminh;
    if (maxScale > 0) {
      const iscale = f(q4scale / maxScale);
      for (let j = 0; j < 16; ++j) sc[j] = nearestInt(f(iscale * scales[j])) & 0xFF;
      dh = fp32ToFp16(f(maxScale / q4scale));
    } else {
      sc.fill(0);
      dh = fp32ToFp16(0);
    }
    if (maxMin > 0) {
      const iscale = f(q4scale / maxMin);
      for (let j = 0; j < 16; ++j) sc[j] = (sc[j] | (nearestInt(f(iscale * mins[j])) << 4)) & 0xFF;
      dminh = fp32ToFp16(f(maxMin / q4scale));
    } else {
      dminh = fp32ToFp16(0);
    }
    const dAll = fp16ToFp32(dh), dminAll = fp16ToFp32(dminh);
    for (let j = 0; j < 16; ++j) {
      const d = f(dAll * (sc[j] & 0xF));
      if (!d) continue;
      const dm = f(dminAll * (sc[j] >> 4));
      for (let ii = 0; ii < 16; ++ii) {
        let l = nearestInt(f(f(x[xo + 16 * j + ii] + dm) / d));
        L[16 * j + ii] = Math.max(0, Math.min(3, l));
      }
    }
    const o = i * 84;
    for (let j = 0; j < 16; ++j) out[o + j] = sc[j];
    for (let j = 0; j < 256; j += 128)
      for (let l = 0; l < 32; ++l)
        out[o + 16 + j / 4 + l] =
            L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6);
    out[o + 80] = dh & 0xFF;
    out[o + 81] = dh >> 8;
    out[o + 82] = dminh & 0xFF;
    out[o + 83] = dminh >> 8;
  }
}

export const QUANTIZERS = {
  q8_0: quantizeQ8_0,
  q4_0: quantizeQ4_0,
  tq2_0: quantizeTQ2_0,
  q2_k: quantizeQ2_K,
};

// --- dequantization (ggml's dequantize_row_*): what llama.cpp multiplies by -

const u16 = (b, o) => b[o] | (b[o + 1] << 8);

export function dequantizeQ8_0(b, y) {
  for (let i = 0; i < y.length / 32; i++) {
    const d = fp16ToFp32(u16(b, i * 34));
    for (let j = 0; j < 32; j++) y[i * 32 + j] = f(((b[i * 34 + 2 + j] << 24) >> 24) * d);
  }
}

export function dequantizeQ4_0(b, y) {
  for (let i = 0; i < y.length / 32; i++) {
    const d = fp16ToFp32(u16(b, i * 18));
    for (let j = 0; j < 16; j++) {
      const q = b[i * 18 + 2 + j];
      y[i * 32 + j] = f(((q & 0x0F) - 8) * d);
      y[i * 32 + j + 16] = f(((q >> 4) - 8) * d);
    }
  }
}

export function dequantizeTQ2_0(b, y) {
  for (let i = 0; i < y.length / 256; i++) {
    const o = i * 66;
    const d = fp16ToFp32(u16(b, o + 64));
    let k = i * 256;
    for (let j = 0; j < 64; j += 32)
      for (let l = 0; l < 4; ++l)
        for (let m = 0; m < 32; ++m) y[k++] = f((((b[o + j + m] >> (l * 2)) & 3) - 1) * d);
  }
}

export function dequantizeQ2_K(b, y) {
  for (let i = 0; i < y.length / 256; i++) {
    const o = i * 84;
    const d = fp16ToFp32(u16(b, o + 80));
    const min = fp16ToFp32(u16(b, o + 82));
    let k = i * 256, is = 0, q = o + 16;
    for (let n = 0; n < 256; n += 128) {
      let shift = 0;
      for (let j = 0; j < 4; ++j) {
        for (const half of [0, 16]) {
          const sc = b[o + is++];
          const dl = f(d * (sc & 0xF)), ml = f(min * (sc >> 4));
          for (let l = 0; l < 16; ++l) y[k++] = f(f(dl * ((b[q + half + l] >> shift) & 3)) - ml);
        }
        shift += 2;
      }
      q += 32;
    }
  }
}

export const DEQUANTIZERS = {
  q8_0: dequantizeQ8_0,
  q4_0: dequantizeQ4_0,
  tq2_0: dequantizeTQ2_0,
  q2_k: dequantizeQ2_K,
};
