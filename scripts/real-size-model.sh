# Sourced by the real-size scripts (bench-real-size.sh,
# check-real-size-logits.sh), which share one --work directory and so one
# model: it is written here, the same way for both.
#
# Expects: bin (afm build's bin directory), preset, model (its directory),
# and a log function; configFile, when set, is a config.json to generate
# instead of the preset (afm-gen-example --config).

# Writes the preset's (or configFile's) config.json and model.safetensors
# unless present.
writePresetIfMissing() {
  if [ -f "$model/model.safetensors" ]; then
    return
  fi
  if [ -n "${configFile:-}" ]; then
    log "writing the model of $configFile to $model"
    "$bin/afm-gen-example" --config "$configFile" --out-dir "$model"
  else
    log "writing $preset to $model"
    "$bin/afm-gen-example" --preset "$preset" --out-dir "$model"
  fi
}

# The value of key $1 (a number or a plain string) in the model's config.json.
configField() {
  sed -n "s/.*\"$1\": \"\{0,1\}\([0-9a-z]*\).*/\1/p" "$model/config.json" | head -1
}
