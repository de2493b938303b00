func.func private @cache_element(!afm.kv_cache<2x8x16, i4>)
