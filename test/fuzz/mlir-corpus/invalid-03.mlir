func.func private @astc_block(!afm.astc<12x12, block = 7x7, offset = min>)
