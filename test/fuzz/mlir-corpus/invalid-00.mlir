func.func private @matrix_rank(!afm.q2<4x4x4, per_tensor>)
