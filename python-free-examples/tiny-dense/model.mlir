// The afm IR of config.json, as afm-translate --import-afm-config writes it
// (test/tools/examples-up-to-date.test keeps it so). Weights: generate them
// with afm-gen-example --config config.json --out-dir DIR.
module attributes {afm.model = #afm.model<name = "model", architecture = "afm-dense", vocab_size = 256, hidden_size = 64, num_layers = 2, context_length = 512, prefill_chunk = 16>} {
  func.func @prefill(%arg0: tensor<16xi32>, %arg1: index, %arg2: index, %arg3: !afm.kv_cache<2x512x16, f32> {afm.layer = 0 : i64}, %arg4: !afm.kv_cache<2x512x16, f32> {afm.layer = 1 : i64}) -> tensor<256xf32> attributes {afm.entry = #afm.entry<prefill>} {
    %c1 = arith.constant 1 : index
    %0 = arith.subi %arg1, %c1 : index
    %1 = afm.weight "model.embed_tokens.weight" : tensor<256x64xf32>
    %2 = afm.embedding %1[%arg0] : tensor<256x64xf32>, tensor<16xi32> -> tensor<16x64xf32>
    %3 = afm.weight "model.layers.0.input_layernorm.weight" : tensor<64xf32>
    %4 = afm.rms_norm %2, %3 : tensor<16x64xf32>, tensor<64xf32>
    %5 = afm.weight "model.layers.0.self_attn.q_proj.weight" : tensor<64x64xf32>
    %6 = afm.linear %4, %5 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %expanded = tensor.expand_shape %6 [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
    %7 = afm.weight "model.layers.0.self_attn.k_proj.weight" : tensor<32x64xf32>
    %8 = afm.linear %4, %7 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_0 = tensor.expand_shape %8 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %9 = afm.weight "model.layers.0.self_attn.v_proj.weight" : tensor<32x64xf32>
    %10 = afm.linear %4, %9 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_1 = tensor.expand_shape %10 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %11 = afm.rope %expanded at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x4x16xf32>
    %12 = afm.rope %expanded_0 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x2x16xf32>
    %13 = afm.attention global %11, %12, %expanded_1 into %arg3 at %arg2 count %arg1 : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<16x4x16xf32>
    %collapsed = tensor.collapse_shape %13 [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
    %14 = afm.weight "model.layers.0.self_attn.o_proj.weight" : tensor<64x64xf32>
    %15 = afm.linear %collapsed, %14 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %16 = arith.addf %2, %15 : tensor<16x64xf32>
    %17 = afm.weight "model.layers.0.post_attention_layernorm.weight" : tensor<64xf32>
    %18 = afm.rms_norm %16, %17 : tensor<16x64xf32>, tensor<64xf32>
    %19 = afm.weight "model.layers.0.mlp.gate_proj.weight" : tensor<128x64xf32>
    %20 = afm.weight "model.layers.0.mlp.up_proj.weight" : tensor<128x64xf32>
    %21 = afm.weight "model.layers.0.mlp.down_proj.weight" : tensor<64x128xf32>
    %22 = afm.swiglu %18, %19, %20, %21 : tensor<16x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %23 = arith.addf %16, %22 : tensor<16x64xf32>
    %24 = afm.weight "model.layers.1.input_layernorm.weight" : tensor<64xf32>
    %25 = afm.rms_norm %23, %24 : tensor<16x64xf32>, tensor<64xf32>
    %26 = afm.weight "model.layers.1.self_attn.q_proj.weight" : tensor<64x64xf32>
    %27 = afm.linear %25, %26 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %expanded_2 = tensor.expand_shape %27 [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
    %28 = afm.weight "model.layers.1.self_attn.k_proj.weight" : tensor<32x64xf32>
    %29 = afm.linear %25, %28 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_3 = tensor.expand_shape %29 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %30 = afm.weight "model.layers.1.self_attn.v_proj.weight" : tensor<32x64xf32>
    %31 = afm.linear %25, %30 : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
    %expanded_4 = tensor.expand_shape %31 [[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
    %32 = afm.rope %expanded_2 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x4x16xf32>
    %33 = afm.rope %expanded_3 at %arg2 {theta = 1.000000e+04 : f32} : tensor<16x2x16xf32>
    %34 = afm.attention global %32, %33, %expanded_4 into %arg4 at %arg2 count %arg1 : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<16x4x16xf32>
    %collapsed_5 = tensor.collapse_shape %34 [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
    %35 = afm.weight "model.layers.1.self_attn.o_proj.weight" : tensor<64x64xf32>
    %36 = afm.linear %collapsed_5, %35 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %37 = arith.addf %23, %36 : tensor<16x64xf32>
    %38 = afm.weight "model.layers.1.post_attention_layernorm.weight" : tensor<64xf32>
    %39 = afm.rms_norm %37, %38 : tensor<16x64xf32>, tensor<64xf32>
    %40 = afm.weight "model.layers.1.mlp.gate_proj.weight" : tensor<128x64xf32>
    %41 = afm.weight "model.layers.1.mlp.up_proj.weight" : tensor<128x64xf32>
    %42 = afm.weight "model.layers.1.mlp.down_proj.weight" : tensor<64x128xf32>
    %43 = afm.swiglu %39, %40, %41, %42 : tensor<16x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %44 = arith.addf %37, %43 : tensor<16x64xf32>
    %extracted_slice = tensor.extract_slice %44[%0, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<1x64xf32>
    %45 = afm.weight "model.norm.weight" : tensor<64xf32>
    %46 = afm.rms_norm %extracted_slice, %45 : tensor<1x64xf32>, tensor<64xf32>
    %47 = afm.lm_head %46, %1 : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
    %collapsed_6 = tensor.collapse_shape %47 [[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
    return %collapsed_6 : tensor<256xf32>
  }
  func.func @decode(%arg0: tensor<1xi32>, %arg1: index, %arg2: index, %arg3: !afm.kv_cache<2x512x16, f32> {afm.layer = 0 : i64}, %arg4: !afm.kv_cache<2x512x16, f32> {afm.layer = 1 : i64}) -> tensor<256xf32> attributes {afm.entry = #afm.entry<decode>} {
    %c1 = arith.constant 1 : index
    %0 = arith.subi %arg1, %c1 : index
    %1 = afm.weight "model.embed_tokens.weight" : tensor<256x64xf32>
    %2 = afm.embedding %1[%arg0] : tensor<256x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
    %3 = afm.weight "model.layers.0.input_layernorm.weight" : tensor<64xf32>
    %4 = afm.rms_norm %2, %3 : tensor<1x64xf32>, tensor<64xf32>
    %5 = afm.weight "model.layers.0.self_attn.q_proj.weight" : tensor<64x64xf32>
    %6 = afm.linear %4, %5 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %expanded = tensor.expand_shape %6 [[0], [1, 2]] output_shape [1, 4, 16] : tensor<1x64xf32> into tensor<1x4x16xf32>
    %7 = afm.weight "model.layers.0.self_attn.k_proj.weight" : tensor<32x64xf32>
    %8 = afm.linear %4, %7 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_0 = tensor.expand_shape %8 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %9 = afm.weight "model.layers.0.self_attn.v_proj.weight" : tensor<32x64xf32>
    %10 = afm.linear %4, %9 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_1 = tensor.expand_shape %10 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %11 = afm.rope %expanded at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x4x16xf32>
    %12 = afm.rope %expanded_0 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x2x16xf32>
    %13 = afm.attention global %11, %12, %expanded_1 into %arg3 at %arg2 count %arg1 : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<1x4x16xf32>
    %collapsed = tensor.collapse_shape %13 [[0], [1, 2]] : tensor<1x4x16xf32> into tensor<1x64xf32>
    %14 = afm.weight "model.layers.0.self_attn.o_proj.weight" : tensor<64x64xf32>
    %15 = afm.linear %collapsed, %14 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %16 = arith.addf %2, %15 : tensor<1x64xf32>
    %17 = afm.weight "model.layers.0.post_attention_layernorm.weight" : tensor<64xf32>
    %18 = afm.rms_norm %16, %17 : tensor<1x64xf32>, tensor<64xf32>
    %19 = afm.weight "model.layers.0.mlp.gate_proj.weight" : tensor<128x64xf32>
    %20 = afm.weight "model.layers.0.mlp.up_proj.weight" : tensor<128x64xf32>
    %21 = afm.weight "model.layers.0.mlp.down_proj.weight" : tensor<64x128xf32>
    %22 = afm.swiglu %18, %19, %20, %21 : tensor<1x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %23 = arith.addf %16, %22 : tensor<1x64xf32>
    %24 = afm.weight "model.layers.1.input_layernorm.weight" : tensor<64xf32>
    %25 = afm.rms_norm %23, %24 : tensor<1x64xf32>, tensor<64xf32>
    %26 = afm.weight "model.layers.1.self_attn.q_proj.weight" : tensor<64x64xf32>
    %27 = afm.linear %25, %26 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %expanded_2 = tensor.expand_shape %27 [[0], [1, 2]] output_shape [1, 4, 16] : tensor<1x64xf32> into tensor<1x4x16xf32>
    %28 = afm.weight "model.layers.1.self_attn.k_proj.weight" : tensor<32x64xf32>
    %29 = afm.linear %25, %28 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_3 = tensor.expand_shape %29 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %30 = afm.weight "model.layers.1.self_attn.v_proj.weight" : tensor<32x64xf32>
    %31 = afm.linear %25, %30 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
    %expanded_4 = tensor.expand_shape %31 [[0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
    %32 = afm.rope %expanded_2 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x4x16xf32>
    %33 = afm.rope %expanded_3 at %arg2 {theta = 1.000000e+04 : f32} : tensor<1x2x16xf32>
    %34 = afm.attention global %32, %33, %expanded_4 into %arg4 at %arg2 count %arg1 : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<1x4x16xf32>
    %collapsed_5 = tensor.collapse_shape %34 [[0], [1, 2]] : tensor<1x4x16xf32> into tensor<1x64xf32>
    %35 = afm.weight "model.layers.1.self_attn.o_proj.weight" : tensor<64x64xf32>
    %36 = afm.linear %collapsed_5, %35 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    %37 = arith.addf %23, %36 : tensor<1x64xf32>
    %38 = afm.weight "model.layers.1.post_attention_layernorm.weight" : tensor<64xf32>
    %39 = afm.rms_norm %37, %38 : tensor<1x64xf32>, tensor<64xf32>
    %40 = afm.weight "model.layers.1.mlp.gate_proj.weight" : tensor<128x64xf32>
    %41 = afm.weight "model.layers.1.mlp.up_proj.weight" : tensor<128x64xf32>
    %42 = afm.weight "model.layers.1.mlp.down_proj.weight" : tensor<64x128xf32>
    %43 = afm.swiglu %39, %40, %41, %42 : tensor<1x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %44 = arith.addf %37, %43 : tensor<1x64xf32>
    %extracted_slice = tensor.extract_slice %44[%0, 0] [1, 64] [1, 1] : tensor<1x64xf32> to tensor<1x64xf32>
    %45 = afm.weight "model.norm.weight" : tensor<64xf32>
    %46 = afm.rms_norm %extracted_slice, %45 : tensor<1x64xf32>, tensor<64xf32>
    %47 = afm.lm_head %46, %1 : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
    %collapsed_6 = tensor.collapse_shape %47 [[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
    return %collapsed_6 : tensor<256xf32>
  }
}
