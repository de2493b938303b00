// The afm IR of config.json, as afm-translate --import-afm-config writes it
// (test/tools/examples-up-to-date.test keeps it so). Weights: generate them
// with afm-gen-example --config config.json --out-dir DIR.
module attributes {afm.model = {architecture = "afm-dense", context_length = 512 : i64, hidden_size = 64 : i64, name = "model", num_layers = 2 : i64, prefill_chunk = 16 : i64, vocab_size = 256 : i64}} {
  func.func @prefill(%arg0: tensor<16xi32>, %arg1: index, %arg2: index, %arg3: !afm.kv_cache<2x512x16, f32> {afm.layer = 0 : i64}, %arg4: !afm.kv_cache<2x512x16, f32> {afm.layer = 1 : i64}) -> tensor<256xf32> attributes {afm.entry = "prefill"} {
    %0 = afm.weight "model.embed_tokens.weight" : tensor<256x64xf32>
    %1 = afm.embedding %0[%arg0] : tensor<256x64xf32>, tensor<16xi32> -> tensor<16x64xf32>
    %2 = afm.weight "model.layers.0.input_layernorm.weight" : tensor<64xf32>
    %3 = afm.rms_norm %1, %2 : tensor<16x64xf32>, tensor<64xf32>
    %4 = afm.weight "model.layers.0.self_attn.q_proj.weight" : tensor<64x64xf32>
    %5 = afm.linear %3, %4 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
    %6 = afm.weight "model.layers.0.self_attn.k_proj.weight" : tensor<32x64xf32>
    %7 = afm.linear %3, %6 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_0 = tensor.expand_shape %7 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %8 = afm.weight "model.layers.0.self_attn.v_proj.weight" : tensor<32x64xf32>
    %9 = afm.linear %3, %8 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_1 = tensor.expand_shape %9 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %10 = afm.rope %expanded at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x4x16xf32>
    %11 = afm.rope %expanded_0 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x2x16xf32>
    %12 = afm.attention global %10, %11, %expanded_1 into %arg3 at %arg2 count %arg1 : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<16x4x16xf32>
    %collapsed = tensor.collapse_shape %12 [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
    %13 = afm.weight "model.layers.0.self_attn.o_proj.weight" : tensor<64x64xf32>
    %14 = afm.linear %collapsed, %13 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %15 = arith.addf %1, %14 : tensor<16x64xf32>
    %16 = afm.weight "model.layers.0.post_attention_layernorm.weight" : tensor<64xf32>
    %17 = afm.rms_norm %15, %16 : tensor<16x64xf32>, tensor<64xf32>
    %18 = afm.weight "model.layers.0.mlp.gate_proj.weight" : tensor<128x64xf32>
    %19 = afm.weight "model.layers.0.mlp.up_proj.weight" : tensor<128x64xf32>
    %20 = afm.weight "model.layers.0.mlp.down_proj.weight" : tensor<64x128xf32>
    %21 = afm.swiglu %17, %18, %19, %20 : tensor<16x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %22 = arith.addf %15, %21 : tensor<16x64xf32>
    %23 = afm.weight "model.layers.1.input_layernorm.weight" : tensor<64xf32>
    %24 = afm.rms_norm %22, %23 : tensor<16x64xf32>, tensor<64xf32>
    %25 = afm.weight "model.layers.1.self_attn.q_proj.weight" : tensor<64x64xf32>
    %26 = afm.linear %24, %25 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %expanded_2 = tensor.expand_shape %26 [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
    %27 = afm.weight "model.layers.1.self_attn.k_proj.weight" : tensor<32x64xf32>
    %28 = afm.linear %24, %27 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_3 = tensor.expand_shape %28 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %29 = afm.weight "model.layers.1.self_attn.v_proj.weight" : tensor<32x64xf32>
    %30 = afm.linear %24, %29 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_4 = tensor.expand_shape %30 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %31 = afm.rope %expanded_2 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x4x16xf32>
    %32 = afm.rope %expanded_3 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x2x16xf32>
    %33 = afm.attention global %31, %32, %expanded_4 into %arg4 at %arg2 count %arg1 : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<16x4x16xf32>
    %collapsed_5 = tensor.collapse_shape %33 [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
    %34 = afm.weight "model.layers.1.self_attn.o_proj.weight" : tensor<64x64xf32>
    %35 = afm.linear %collapsed_5, %34 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %36 = arith.addf %22, %35 : tensor<16x64xf32>
    %37 = afm.weight "model.layers.1.post_attention_layernorm.weight" : tensor<64xf32>
    %38 = afm.rms_norm %36, %37 : tensor<16x64xf32>, tensor<64xf32>
    %39 = afm.weight "model.layers.1.mlp.gate_proj.weight" : tensor<128x64xf32>
    %40 = afm.weight "model.layers.1.mlp.up_proj.weight" : tensor<128x64xf32>
    %41 = afm.weight "model.layers.1.mlp.down_proj.weight" : tensor<64x128xf32>
    %42 = afm.swiglu %38, %39, %40, %41 : tensor<16x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %43 = arith.addf %36, %42 : tensor<16x64xf32>
    %c1 = arith.constant 1 : index
    %44 = arith.subi %arg1, %c1 : index
    %extracted_slice = tensor.extract_slice %43[%44, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<1x64xf32>
    %45 = afm.weight "model.norm.weight" : tensor<64xf32>
    %46 = afm.rms_norm %extracted_slice, %45 : tensor<1x64xf32>, tensor<64xf32>
    %47 = afm.lm_head %46, %0 : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
    %collapsed_6 = tensor.collapse_shape %47 [[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
    return %collapsed_6 : tensor<256xf32>
  }
  func.func @decode(%arg0: tensor<1xi32>, %arg1: index, %arg2: index, %arg3: !afm.kv_cache<2x512x16, f32> {afm.layer = 0 : i64}, %arg4: !afm.kv_cache<2x512x16, f32> {afm.layer = 1 : i64}) -> tensor<256xf32> attributes {afm.entry = "decode"} {
    %0 = afm.weight "model.embed_tokens.weight" : tensor<256x64xf32>
    %1 = afm.embedding %0[%arg0] : tensor<256x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
    %2 = afm.weight "model.layers.0.input_layernorm.weight" : tensor<64xf32>
    %3 = afm.rms_norm %1, %2 : tensor<1x64xf32>, tensor<64xf32>
    %4 = afm.weight "model.layers.0.self_attn.q_proj.weight" : tensor<64x64xf32>
    %5 = afm.linear %3, %4 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [1, 4, 16] : tensor<1x64xf32> into tensor<1x4x16xf32>
    %6 = afm.weight "model.layers.0.self_attn.k_proj.weight" : tensor<32x64xf32>
    %7 = afm.linear %3, %6 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_0 = tensor.expand_shape %7 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %8 = afm.weight "model.layers.0.self_attn.v_proj.weight" : tensor<32x64xf32>
    %9 = afm.linear %3, %8 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_1 = tensor.expand_shape %9 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %10 = afm.rope %expanded at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x4x16xf32>
    %11 = afm.rope %expanded_0 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x2x16xf32>
    %12 = afm.attention global %10, %11, %expanded_1 into %arg3 at %arg2 count %arg1 : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<1x4x16xf32>
    %collapsed = tensor.collapse_shape %12 [[0], [1, 2]] : tensor<1x4x16xf32> into tensor<1x64xf32>
    %13 = afm.weight "model.layers.0.self_attn.o_proj.weight" : tensor<64x64xf32>
    %14 = afm.linear %collapsed, %13 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %15 = arith.addf %1, %14 : tensor<1x64xf32>
    %16 = afm.weight "model.layers.0.post_attention_layernorm.weight" : tensor<64xf32>
    %17 = afm.rms_norm %15, %16 : tensor<1x64xf32>, tensor<64xf32>
    %18 = afm.weight "model.layers.0.mlp.gate_proj.weight" : tensor<128x64xf32>
    %19 = afm.weight "model.layers.0.mlp.up_proj.weight" : tensor<128x64xf32>
    %20 = afm.weight "model.layers.0.mlp.down_proj.weight" : tensor<64x128xf32>
    %21 = afm.swiglu %17, %18, %19, %20 : tensor<1x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %22 = arith.addf %15, %21 : tensor<1x64xf32>
    %23 = afm.weight "model.layers.1.input_layernorm.weight" : tensor<64xf32>
    %24 = afm.rms_norm %22, %23 : tensor<1x64xf32>, tensor<64xf32>
    %25 = afm.weight "model.layers.1.self_attn.q_proj.weight" : tensor<64x64xf32>
    %26 = afm.linear %24, %25 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %expanded_2 = tensor.expand_shape %26 [[0], [1, 2]] output_shape [1, 4, 16] : tensor<1x64xf32> into tensor<1x4x16xf32>
    %27 = afm.weight "model.layers.1.self_attn.k_proj.weight" : tensor<32x64xf32>
    %28 = afm.linear %24, %27 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_3 = tensor.expand_shape %28 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %29 = afm.weight "model.layers.1.self_attn.v_proj.weight" : tensor<32x64xf32>
    %30 = afm.linear %24, %29 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_4 = tensor.expand_shape %30 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %31 = afm.rope %expanded_2 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x4x16xf32>
    %32 = afm.rope %expanded_3 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x2x16xf32>
    %33 = afm.attention global %31, %32, %expanded_4 into %arg4 at %arg2 count %arg1 : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<1x4x16xf32>
    %collapsed_5 = tensor.collapse_shape %33 [[0], [1, 2]] : tensor<1x4x16xf32> into tensor<1x64xf32>
    %34 = afm.weight "model.layers.1.self_attn.o_proj.weight" : tensor<64x64xf32>
    %35 = afm.linear %collapsed_5, %34 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %36 = arith.addf %22, %35 : tensor<1x64xf32>
    %37 = afm.weight "model.layers.1.post_attention_layernorm.weight" : tensor<64xf32>
    %38 = afm.rms_norm %36, %37 : tensor<1x64xf32>, tensor<64xf32>
    %39 = afm.weight "model.layers.1.mlp.gate_proj.weight" : tensor<128x64xf32>
    %40 = afm.weight "model.layers.1.mlp.up_proj.weight" : tensor<128x64xf32>
    %41 = afm.weight "model.layers.1.mlp.down_proj.weight" : tensor<64x128xf32>
    %42 = afm.swiglu %38, %39, %40, %41 : tensor<1x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %43 = arith.addf %36, %42 : tensor<1x64xf32>
    %c1 = arith.constant 1 : index
    %44 = arith.subi %arg1, %c1 : index
    %extracted_slice = tensor.extract_slice %43[%44, 0] [1, 64] [1, 1] : tensor<1x64xf32> to tensor<1x64xf32>
    %45 = afm.weight "model.norm.weight" : tensor<64xf32>
    %46 = afm.rms_norm %extracted_slice, %45 : tensor<1x64xf32>, tensor<64xf32>
    %47 = afm.lm_head %46, %0 : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
    %collapsed_6 = tensor.collapse_shape %47 [[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
    return %collapsed_6 : tensor<256xf32>
  }
}
