#!/usr/bin/env bash
# The demo, non-interactively, as CI runs it (.ci/run). Two runs:
#   1. `make demo DEMO_ARGS=--exit-when-done`: must exit 0, which the demo does only when the
#      preview and both renders completed and the API server refused the invalid render; the
#      final table and outputs must say so too.
#   2. The interactive demo (hack/demo.sh, what make demo runs): while it runs, the kubectl
#      commands it prints must work from another shell; then SIGINT (Ctrl-C) must stop everything
#      it started and leave no files outside .demo/.
# Both runs use a private TMPDIR that must be empty afterwards.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

work=$(mktemp -d)
demo_pid=""
cleanup() {
  if [ -n "$demo_pid" ] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/tmp"
export TMPDIR="$work/tmp"

fail() {
  printf 'demo-test: FAIL: %s\n' "$*" >&2
  exit 1
}
expect_line() { # expect_line <file> <extended regexp> <what>
  grep -Eq -- "$2" "$1" || { cat "$1" >&2; fail "$3 (no line matches: $2)"; }
}
no_leftovers() {
  # kube-apiserver and etcd keep their files under .demo/run: any process naming it is a stray.
  if pgrep -f -- "$root/.demo/run" >/dev/null; then
    pgrep -af -- "$root/.demo/run" >&2
    fail "processes of the demo are still running after it exited"
  fi
  [ ! -e .demo/run ] || fail ".demo/run was not removed"
  [ ! -e .demo/kubeconfig ] || fail ".demo/kubeconfig of a stopped demo was not removed"
  [ ! -e .demo/demo.pid ] || fail ".demo/demo.pid was not removed"
  [ -z "$(ls -A "$TMPDIR")" ] || { ls -la "$TMPDIR" >&2; fail "files were left in TMPDIR"; }
}

echo "== demo-test 1/2: make demo DEMO_ARGS=--exit-when-done"
start=$SECONDS
out="$work/run1.txt"
if ! make demo DEMO_ARGS="--exit-when-done --timeout=2m" >"$out" 2>&1; then
  cat "$out" >&2
  tail -n 50 .demo/demo.log >&2 || true
  fail "make demo --exit-when-done exited non-zero"
fi
cat "$out"
# The last table of the run: every object Completed at 100%.
expect_line "$out" '^meet-video-operator +VideoStoryboard +Completed +100% +Completed' "the preview completed"
expect_line "$out" '^meet-video-operator +VideoRender +Completed +100% +Completed' "the render of the preview completed"
expect_line "$out" '^why-operators +VideoRender +Completed +100% +Completed' "the direct render completed"
expect_line "$out" 'two-sources.* is invalid: .*exactly one of storyboard, storyboardRef or projectId is required' \
  "the API server refused the invalid render with its message"
expect_line "$out" 'video: +http://127\.0\.0\.1:[0-9]+/files/.*/video\.mp4' "a video URL was printed"
expect_line "$out" 'clearance code for the licensed music: PCC-' "the clearance code was printed"
no_leftovers
echo "== demo-test 1/2 passed in $((SECONDS - start)) s"

echo "== demo-test 2/2: the interactive demo, kubectl from another shell, then Ctrl-C"
start=$SECONDS
out="$work/run2.txt"
hack/demo.sh >"$out" 2>&1 &
demo_pid=$!
deadline=$((SECONDS + 120))
until grep -q "Press Ctrl-C to stop it" "$out"; do
  kill -0 "$demo_pid" 2>/dev/null || { cat "$out" >&2; fail "the demo exited before it finished"; }
  [ "$SECONDS" -lt "$deadline" ] || { cat "$out" >&2; fail "the demo did not finish within 120 s"; }
  sleep 1
done
# Run exactly the commands the demo printed.
kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$out")
assets=$(sed -n 's/^ *export PATH="\(.*\):\$PATH".*/\1/p' "$out")
[ -f "$kubeconfig" ] && [ -x "$assets/kubectl" ] || { cat "$out" >&2; fail "the printed KUBECONFIG or PATH is wrong"; }
videos=$(KUBECONFIG=$kubeconfig PATH="$assets:$PATH" kubectl get videos -o wide)
echo "$videos"
for want in 'videostoryboard.video.videoops.io/meet-video-operator +Completed +100' \
  'videorender.video.videoops.io/meet-video-operator +Completed +100 +http' \
  'videorender.video.videoops.io/why-operators +Completed +100 +http'; do
  grep -Eq -- "$want" <<<"$videos" || fail "kubectl get videos -o wide has no line matching: $want"
done
KUBECONFIG=$kubeconfig PATH="$assets:$PATH" kubectl wait --for=condition=Ready videorender/meet-video-operator --timeout=10s
kill -INT "$demo_pid"
rc=0
wait "$demo_pid" || rc=$?
demo_pid=""
cat "$out"
[ "$rc" -eq 0 ] || fail "the demo exited with $rc after Ctrl-C"
expect_line "$out" '^Stopped\. Nothing is left running' "the demo said it stopped everything"
no_leftovers
echo "== demo-test 2/2 passed in $((SECONDS - start)) s"
