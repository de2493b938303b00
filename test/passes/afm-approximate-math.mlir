// RUN: afm-opt %s -split-input-file -afm-approximate-math | FileCheck %s

// What remains of math is fma, floor and absf, which are single
// instructions, not libm calls.

// exp(x) = 2^k * p(r): x clamped to [-87.8, 88.8], k = floor(x * log2(e) +
// 1/2), 2^k built by shifting k + 127 into the f32 exponent bits.
// CHECK-LABEL: func.func @exp(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.exp
// CHECK-DAG: %[[LO:.*]] = arith.constant -8.780000e+01 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 127 : i32
// CHECK-DAG: %[[MANTISSA:.*]] = arith.constant 23 : i32
// CHECK: arith.cmpf uge, %[[X]], %[[LO]] : f32
// CHECK: math.fma %{{.*}}, %[[LOG2E]], %{{.*}} : f32
// CHECK: math.floor
// CHECK: %[[K:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK: %[[BIASED:.*]] = arith.addi %[[K]], %[[BIAS]] : i32
// CHECK: %[[BITS:.*]] = arith.shli %[[BIASED]], %[[MANTISSA]] : i32
// CHECK: %[[SCALE:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NOT: math.exp
// CHECK: return %[[R]] : f32
func.func @exp(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// -----

// sin(x): x reduced by k = floor(x * 2/pi) quarter turns; the quadrant
// k & 3 picks the sine or cosine polynomial, and quadrants 2 and 3 negate.
// CHECK-LABEL: func.func @sin(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.sin
// CHECK-DAG: %[[TWO_OVER_PI:.*]] = arith.constant 0.636619746 : f32
// CHECK-DAG: %[[PI_OVER_TWO:.*]] = arith.constant 1.57079637 : f32
// CHECK-DAG: %[[MINUS_ONE:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : i32
// CHECK: %[[TURNS:.*]] = arith.mulf %[[X]], %[[TWO_OVER_PI]] : f32
// CHECK: %[[K:.*]] = math.floor %[[TURNS]] : f32
// CHECK: arith.mulf %[[K]], %[[PI_OVER_TWO]] : f32
// CHECK: %[[KI:.*]] = arith.fptosi %[[K]] : f32 to i32
// CHECK: %[[Q:.*]] = arith.andi %[[KI]], %[[THREE]] : i32
// CHECK: %[[NEGATE:.*]] = arith.cmpi sgt, %[[Q]], %[[ONE]] : i32
// CHECK: %[[MINUS_P:.*]] = arith.mulf %[[P:.*]], %[[MINUS_ONE]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[NEGATE]], %[[MINUS_P]], %[[P]] : f32
// CHECK-NEXT: return %[[R]] : f32
func.func @sin(%x: f32) -> f32 {
  %r = math.sin %x : f32
  return %r : f32
}

// -----

// cos(x): the same reduction as sin; quadrants 1 and 2 negate.
// CHECK-LABEL: func.func @cos(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.cos
// CHECK-DAG: %[[TWO_OVER_PI:.*]] = arith.constant 0.636619746 : f32
// CHECK-DAG: %[[MINUS_ONE:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : i32
// CHECK: %[[TURNS:.*]] = arith.mulf %[[X]], %[[TWO_OVER_PI]] : f32
// CHECK: %[[K:.*]] = math.floor %[[TURNS]] : f32
// CHECK: %[[KI:.*]] = arith.fptosi %[[K]] : f32 to i32
// CHECK: %[[Q:.*]] = arith.andi %[[KI]], %[[THREE]] : i32
// CHECK-DAG: %[[Q1:.*]] = arith.cmpi eq, %[[Q]], %[[ONE]] : i32
// CHECK-DAG: %[[Q2:.*]] = arith.cmpi eq, %[[Q]], %[[TWO]] : i32
// CHECK: %[[NEGATE:.*]] = arith.ori %[[Q1]], %[[Q2]] : i1
// CHECK: %[[MINUS_P:.*]] = arith.mulf %[[P:.*]], %[[MINUS_ONE]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[NEGATE]], %[[MINUS_P]], %[[P]] : f32
// CHECK-NEXT: return %[[R]] : f32
func.func @cos(%x: f32) -> f32 {
  %r = math.cos %x : f32
  return %r : f32
}

// -----

// tanh(x): a rational polynomial of x clamped to [-7.99881172, 7.99881172];
// for |x| < 0.0004, x itself.
// CHECK-LABEL: func.func @tanh(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.tanh
// CHECK-DAG: %[[HI:.*]] = arith.constant 7.99881172 : f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -7.99881172 : f32
// CHECK-DAG: %[[TINY:.*]] = arith.constant 4.000000e-04 : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf ult, %[[X]], %[[HI]] : f32
// CHECK: %[[UPPER:.*]] = arith.select %[[BELOW]], %[[X]], %[[HI]] : f32
// CHECK: %[[ABOVE:.*]] = arith.cmpf ugt, %[[UPPER]], %[[LO]] : f32
// CHECK: %[[CLAMPED:.*]] = arith.select %[[ABOVE]], %[[UPPER]], %[[LO]] : f32
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[TINY]] : f32
// CHECK: %[[RATIO:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[SMALL]], %[[CLAMPED]], %[[RATIO]] : f32
// CHECK-NEXT: return %[[R]] : f32
func.func @tanh(%x: f32) -> f32 {
  %r = math.tanh %x : f32
  return %r : f32
}

// -----

// erf(x) = sign(x) * erf(|x|): a rational polynomial per interval of |x|
// ([0, 0.8), [0.8, 2), [2, 3.75)), and 1 from 3.75 on.
// CHECK-LABEL: func.func @erf(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK-NOT: math.erf
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[B1:.*]] = arith.constant 8.000000e-01 : f32
// CHECK-DAG: %[[B2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[B3:.*]] = arith.constant 3.750000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[NEGATIVE:.*]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK: %[[MINUS_X:.*]] = arith.negf %[[X]] : f32
// CHECK: %[[ABS:.*]] = arith.select %[[NEGATIVE]], %[[MINUS_X]], %[[X]] : f32
// CHECK: arith.cmpf olt, %[[ABS]], %[[B1]] : f32
// CHECK: arith.cmpf olt, %[[ABS]], %[[B2]] : f32
// CHECK: %[[IN_RANGE:.*]] = arith.cmpf ult, %[[ABS]], %[[B3]] : f32
// CHECK: arith.divf
// CHECK: %[[POS:.*]] = arith.select %[[IN_RANGE]], %{{.*}}, %[[ONE]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[POS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[NEGATIVE]], %[[NEG]], %[[POS]] : f32
// CHECK-NEXT: return %[[R]] : f32
func.func @erf(%x: f32) -> f32 {
  %r = math.erf %x : f32
  return %r : f32
}

// -----

// Vectors are approximated lane-wise in the vector type itself (nothing is
// unrolled to scalars), fixed-length and scalable alike.
// CHECK-LABEL: func.func @exp_vector(
// CHECK-NOT: math.exp
// CHECK-NOT: vector.extract
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: %[[SCALE:.*]] = arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : vector<8xf32>
// CHECK-NOT: vector.extract
// CHECK-NOT: math.exp
// CHECK: return %[[R]] : vector<8xf32>
// CHECK-LABEL: func.func @tanh_scalable(
// CHECK-NOT: math.tanh
// CHECK: %[[RATIO:.*]] = arith.divf %{{.*}}, %{{.*}} : vector<[4]xf32>
// CHECK-NEXT: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[RATIO]] : vector<[4]xi1>, vector<[4]xf32>
// CHECK-NEXT: return %[[R]] : vector<[4]xf32>
func.func @exp_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %r = math.exp %x : vector<8xf32>
  return %r : vector<8xf32>
}
func.func @tanh_scalable(%x: vector<[4]xf32>) -> vector<[4]xf32> {
  %r = math.tanh %x : vector<[4]xf32>
  return %r : vector<[4]xf32>
}

// -----

// f16 and bf16 are widened to f32, approximated there, and narrowed back.
// CHECK-LABEL: func.func @half(
// CHECK-SAME: %[[X:[^:]*]]: f16, %[[Y:[^:]*]]: vector<8xbf16>)
// CHECK-NOT: math.
// CHECK: %[[WX:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: math.absf %[[WX]] : f32
// CHECK: %[[RX:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[WY:.*]] = arith.extf %[[Y]] : vector<8xbf16> to vector<8xf32>
// CHECK: arith.cmpf uge, %[[WY]], %{{.*}} : vector<8xf32>
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[RY:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: return %[[RX]], %[[RY]] : f16, vector<8xbf16>
func.func @half(%x: f16, %y: vector<8xbf16>) -> (f16, vector<8xbf16>) {
  %a = math.tanh %x : f16
  %b = math.exp %y : vector<8xbf16>
  return %a, %b : f16, vector<8xbf16>
}

// -----

// Only exp, sin, cos, tanh and erf are replaced, and only where upstream
// has an f32 approximation: other math ops (log, exp2, expm1, atan, rsqrt)
// and f64 stay.
// CHECK-LABEL: func.func @others(
// CHECK-SAME: %[[X:[^:]*]]: f32, %[[D:[^:]*]]: f64)
// CHECK-NEXT: %[[A:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: %[[B:.*]] = math.exp2 %[[X]] : f32
// CHECK-NEXT: %[[C:.*]] = math.expm1 %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.atan %[[X]] : f32
// CHECK-NEXT: %[[F:.*]] = math.rsqrt %[[X]] : f32
// CHECK-NEXT: %[[G:.*]] = math.exp %[[D]] : f64
// CHECK-NEXT: %[[H:.*]] = math.tanh %[[D]] : f64
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[E]], %[[F]], %[[G]], %[[H]]
func.func @others(%x: f32, %d: f64) -> (f32, f32, f32, f32, f32, f64, f64) {
  %a = math.log %x : f32
  %b = math.exp2 %x : f32
  %c = math.expm1 %x : f32
  %e = math.atan %x : f32
  %f = math.rsqrt %x : f32
  %g = math.exp %d : f64
  %h = math.tanh %d : f64
  return %a, %b, %c, %e, %f, %g, %h : f32, f32, f32, f32, f32, f64, f64
}
