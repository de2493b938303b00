func.func private @cache_rank(!afm.kv_cache<2x8, f32>)
