#!/usr/bin/env bash
# e2e: docs/plugins.md carries the plugin contract exactly as `h3parity plugin-contract` prints
# it from the table the loader uses (between the plugin-contract markers), so the guide cannot
# drift from the code.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$H3P_CLI" plugin-contract > printed.md || fail "plugin-contract exited $?"
sed -n '/<!-- plugin-contract:begin -->/,/<!-- plugin-contract:end -->/p' \
  "$H3P_SOURCE_DIR/docs/plugins.md" | sed '1d;$d' > documented.md
[[ -s documented.md ]] || fail "docs/plugins.md has no plugin-contract markers"
diff -u documented.md printed.md || fail "docs/plugins.md's contract differs from plugin-contract's"
grep -q '| `adaln` | `linear`, `silu`, `gather_rows` |' printed.md || fail "unexpected table: $(cat printed.md)"
echo "docs/plugins.md matches plugin-contract"
