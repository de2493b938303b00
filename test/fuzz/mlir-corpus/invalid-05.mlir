func.func private @cache_empty(!afm.kv_cache<2x0x16, f32>)
