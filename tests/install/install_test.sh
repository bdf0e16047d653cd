#!/bin/sh
# `cmake --install` into a fresh prefix, then the installed meshplan run from elsewhere: it must
# find the installed models, topologies and the profile the cluster names (share/meshplan), and
# the man page and shell completions must be where man, bash-completion and zsh look.
# Usage: install_test.sh <build dir>
set -eu
build=$1
prefix=$(mktemp -d "${TMPDIR:-/tmp}/meshplan-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; exit 1; }
rm -f "$prefix.log"
fail() { echo "install_test: $*" >&2; exit 1; }
for f in bin/meshplan share/meshplan/models/llama3-8b.yaml share/meshplan/topologies/dgx-h100-1n.yaml \
         share/meshplan/profiles/h100-published.yaml share/man/man1/meshplan.1 \
         share/bash-completion/completions/meshplan share/zsh/site-functions/_meshplan; do
  [ -e "$prefix/$f" ] || fail "cmake --install wrote no $f"
done
share="$prefix/share/meshplan"
# A profile only the installed share/meshplan/profiles holds (the source tree's profiles/ is the
# binary's last resort and lacks it), named by a cluster file in a folder of its own.
sed 's/^name: h100-published$/name: install-test-only/' "$share/profiles/h100-published.yaml" \
  > "$share/profiles/install-test-only.yaml"
mkdir "$prefix/jobs"
sed 's/^profile: h100-published$/profile: install-test-only/' \
  "$share/topologies/dgx-h100-1n.yaml" > "$prefix/jobs/cluster.yaml"
grep -q "^profile: install-test-only$" "$prefix/jobs/cluster.yaml" || fail "cluster edit failed"
cd "$prefix/jobs"
run() { env -u MESHPLAN_DATA "$prefix/bin/meshplan" "$@"; }
out=$(run estimate --model "$share/models/llama3-8b.yaml" --cluster cluster.yaml \
      --global-batch 64 --layout tp=8 2>&1) || fail "the installed binary failed: $out"
echo "$out" | grep -q "MFU" || fail "no MFU in: $out"
# The lookup is what found it: without the installed file the same command fails.
rm "$share/profiles/install-test-only.yaml"
if out=$(run estimate --model "$share/models/llama3-8b.yaml" --cluster cluster.yaml \
         --global-batch 64 --layout tp=8 2>&1); then
  fail "a profile found nowhere was not an error: $out"
fi
version=$(run --version) || fail "--version failed"
grep -q "^\.TH MESHPLAN 1 \"\" \"$version\"" "$prefix/share/man/man1/meshplan.1" ||
  fail "the man page's .TH line does not name $version"
grep -q "complete .*meshplan" "$prefix/share/bash-completion/completions/meshplan" ||
  fail "the bash completion registers no completion for meshplan"
echo "installed and ran: $version"
