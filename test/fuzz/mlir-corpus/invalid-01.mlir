func.func private @empty_weight(!afm.q2<0x4, per_tensor>)
