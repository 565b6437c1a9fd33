#!/usr/bin/env bash
# Refreshes the generated part of the Helm chart (dist/chart/files/) from config/, so that the
# chart installs exactly the CRDs and RBAC rules that controller-gen generates, and the alerts and
# dashboard of config/monitoring (optional chart resources): `make manifests`
# runs it, CI fails when the result differs from what is committed, and test/deploy compares the
# rendered chart with the kustomize output. The templates read these files; nothing else in the
# chart is generated.
set -euo pipefail
cd "$(dirname "$0")/.."

chart=dist/chart
rm -rf "$chart/files/crds" "$chart/files/rbac" "$chart/files/monitoring" "$chart/files/approval" "$chart/files/policies"
mkdir -p "$chart/files/crds" "$chart/files/rbac" "$chart/files/monitoring" "$chart/files/approval" "$chart/files/policies"
cp config/crd/bases/*.yaml "$chart/files/crds/"
# The admission policies (templates/admission-policies.yaml): every file of config/policies but
# kustomize's own.
for f in config/policies/*.yaml; do
  case "$(basename "$f")" in kustomization.yaml|kustomizeconfig.yaml) ;; *) cp "$f" "$chart/files/policies/" ;; esac
done
for role in role leader_election_role ledger_role metrics_auth_role metrics_reader_role \
  videorender_editor_role videorender_viewer_role videostoryboard_editor_role videostoryboard_viewer_role \
  videobudget_editor_role videobudget_viewer_role; do
  cp "config/rbac/$role.yaml" "$chart/files/rbac/$role.yaml"
done
cp config/monitoring/prometheus-rule.yaml config/monitoring/grafana-dashboard.json "$chart/files/monitoring/"
# The approver role and the approval admission policies (templates/approval.yaml).
for f in approver_role videorender_approval_policy videorender_approval_stamp videostoryboard_author_policy videostoryboard_author_stamp; do
  cp "config/approval/$f.yaml" "$chart/files/approval/$f.yaml"
done
