# Writes an ONNX model (textproto, for protoc --encode) with one f32 GEMM:
#   awk -v op=MatMul -v a=2x64x256 -v b=2x256x128 -v const=1 -f gemm-model.awk
#   op     MatMul, or Gemm (2-D; transB=1 when -v transB=1)
#   a, b   operand shapes, dims separated by x
#   const  1: B is an initializer of seeded uniform [-1, 1) values; 0: an input
BEGIN {
  na = split(a, ad, "x"); nb = split(b, bd, "x");
  if (op == "Gemm") {
    n = transB ? bd[1] : bd[2];
    y = ad[1] "x" n;
  } else {
    y = "";
    for (i = 1; i < na; ++i) y = y ad[i] "x";
    y = y bd[nb];
  }
  print "ir_version: 8";
  print "opset_import { version: 17 }";
  print "graph {";
  print "  name: \"gemm\"";
  attr = (op == "Gemm" && transB) ? " attribute { name: \"transB\" type: INT i: 1 }" : "";
  print "  node { op_type: \"" op "\" input: \"a\" input: \"b\" output: \"y\"" attr " }";
  if (const) {
    srand(7);
    printf "  initializer { name: \"b\" data_type: 1";
    count = 1;
    for (i = 1; i <= nb; ++i) { printf " dims: %d", bd[i]; count *= bd[i]; }
    for (i = 0; i < count; ++i) printf " float_data: %.4f", 2 * rand() - 1;
    print " }";
  }
  tensor("input", "a", a);
  if (!const) tensor("input", "b", b);
  tensor("output", "y", y);
  print "}";
}
function tensor(kind, name, shape,   d, k, i, dims) {
  k = split(shape, d, "x");
  dims = "";
  for (i = 1; i <= k; ++i) dims = dims " dim { dim_value: " d[i] " }";
  print "  " kind " { name: \"" name "\" type { tensor_type { elem_type: 1 shape {" dims " } } } }";
}
