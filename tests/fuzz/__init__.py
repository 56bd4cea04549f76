"""A seeded, structure-aware fuzz harness for kvfit's untrusted inputs.

Kinds: GGUF headers, safetensors headers, sandbox expressions, explain-log text, /metrics
text, metadata-cache entries and Hub model-info replies (served by the local test hub) -
generators.py and targets.py - and, through the plan path itself, mutated real config.json
files, TOML presets (plan, [calibration] and audit files), architecture spec YAML, model
references and benchmark result JSON - gen_plan.py, gen_refs.py and targets_plan.py - and
command lines (plan flags, --sweep, --plot, kvfit fit, kvfit catalog), nvidia-smi output,
NVML readings and whole explain-log files - gen_surfaces.py and targets_surfaces.py - and
kvfit.plan / fit / sweep keyword options, the web app's requests and the MCP tools' arguments -
gen_api.py and targets_api.py.
The generators build one hostile case per (kind, seed, index); the targets feed it to the
code that reads that kind of input; runner.py runs cases in a spawned worker with a per-case
watchdog and a memory cap and classifies each outcome: answered, clean (a KvfitError: one
paragraph, exit 2), wrong (answered but an invariant is broken), traceback (any other
exception), hang (watchdog) or memory (the cap). tests/fuzz/test_fuzz_inputs.py runs a few
hundred cases per kind in CI; bench/fuzz.py runs >= 10,000 per kind on demand.
"""
