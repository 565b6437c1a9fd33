#!/usr/bin/env bash
# Waits until the operator's admission policies are in force in the cluster of the kubeconfig:
# each refuses the dry-run create of its probe (hack/policy-probe.yaml). A policy takes effect
# some time after it is written; apply the CRDs without the scenes' rules only then
# (docs/deploy.md, "Upgrading to the admission policies").
#
#   hack/wait-policies.sh [kubectl] [timeout seconds, default 60]
set -euo pipefail
kubectl=${1:-kubectl} timeout=${2:-60}
probe="$(dirname "$0")/policy-probe.yaml"
deadline=$((SECONDS + timeout))
for kind in VideoRender VideoStoryboard; do
  while :; do
    # One object at a time: kubectl stops at the first refusal.
    out=$(awk -v k="$kind" 'BEGIN{RS="---\n"} $0 ~ "kind: " k "\n" {print}' "$probe" \
      | "$kubectl" create --dry-run=server -f - 2>&1) || true
    if grep -q "the admission policy is in force" <<<"$out"; then
      break
    fi
    if ((SECONDS >= deadline)); then
      echo "the admission policy of $kind is not in force after ${timeout}s: $out" >&2
      exit 1
    fi
    sleep 1
  done
done
echo "admission policies in force"
