# Shared helpers of the e2e scripts (sourced).
fail() { echo "FAIL: $*" >&2; exit 1; }

# sha256 of every file under a run directory, sorted by path (the lock file excluded).
tree_digest() {
  (cd "$1" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum)
}

# Runs a command that must exit with `want`; prints its stderr into $LAST_ERR.
expect_exit() {
  local want=$1; shift
  local status=0
  LAST_ERR=$("$@" 2>&1 >/dev/null) || status=$?
  [[ $status == "$want" ]] || fail "'$*' exited $status, want $want: $LAST_ERR"
}
