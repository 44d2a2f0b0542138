#!/usr/bin/env bash
# gpu_unavailable_test.sh TESSERA PLUGIN FLAVOUR - the CUDA or HIP plugin on a
# machine without its GPU: `tessera devices --plugin PLUGIN` must load it,
# record UNAVAILABLE with the runtime's reason in the load report, and still
# list cpu:0 (the host keeps working). Where the GPU is present (a lent
# machine) the plugin's devices must be listed instead.
set -euo pipefail
tessera=$1 plugin=$2 flavour=$3
json=$("$tessera" devices --json --plugin "$plugin")
python3 - "$flavour" "$plugin" <<PY
import json, sys
flavour, plugin = sys.argv[1], sys.argv[2]
r = json.loads('''$json''')
devices = [d["device"] for d in r["devices"]]
assert "cpu:0" in devices, f"cpu:0 missing after loading {plugin}: {devices}"
mine = [d for d in devices if d.startswith(flavour + ":")]
entries = [e for e in r["load_report"] if e["path"].endswith(plugin.split("/")[-1])]
assert entries, f"no load report entry for {plugin}: {r['load_report']}"
if mine:
    print(f"{flavour}: a device is present here: {mine}")
    sys.exit(0)
e = entries[-1]
assert e["code"] == "UNAVAILABLE", f"expected UNAVAILABLE, got {e}"
assert e["no_device"] and e["ok"], f"a plugin without its device here is not a load problem: {e}"
assert flavour in e["detail"] and len(e["detail"]) > len(flavour) + 10, f"no reason given: {e}"
print(f"{flavour}: UNAVAILABLE: {e['detail']}")
PY
