#!/usr/bin/env bash
# Checks that the tree may be released as <version>, before anything is built (hack/release.sh
# runs it first; test/release runs it on trees of its own):
#   - CHANGELOG.md has a dated section "## [<version>] - YYYY-MM-DD" (the release notes; entries
#     still under [Unreleased] are not released). A rehearsal (RELEASE_ALLOW_DIRTY=1) of a
#     pre-release (x.y.z-pre) without a section takes the [Unreleased] section as its notes;
#   - every alert's runbook_url in config/monitoring/prometheus-rule.yaml (which the chart ships)
#     has an anchor that is a heading of docs/runbooks.md, so no page links to nowhere;
#   - the tree has no uncommitted change and HEAD is tagged v<version>, so the artifacts are those
#     of the tagged commit. RELEASE_ALLOW_DIRTY=1 skips this check, for a rehearsal (the artifacts
#     are then not those of any tag: do not publish them).
#   - the tag's own manifests name the release: dist/chart/Chart.yaml's version <version> and
#     appVersion v<version>, and newTag v<version> in config/manager/kustomization.yaml and
#     config/gitops/operator-overlay/kustomization.yaml. The packaged chart and install.yaml are
#     rewritten from <version>, but config/default?ref=v<version> and the GitOps overlay are read
#     from the tag as they are: a leftover x.y.z-dev there names an image no registry has.
#     RELEASE_ALLOW_DIRTY=1 only warns (a rehearsal of an unbumped tree).
# Usage: hack/release-check.sh <version>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: hack/release-check.sh <version>}
version=${version#v}
tag=v$version
die() { echo "release: $*" >&2; exit 1; }

heading=$(grep -E "^## \[${version//./\\.}\]" "$root/CHANGELOG.md" | head -n1 || true)
if [[ -z $heading && ${RELEASE_ALLOW_DIRTY:-} == 1 && $version == *-* ]]; then
  # A rehearsal of a pre-release (make release VERSION=0.2.0-rc.1 RELEASE_ALLOW_DIRTY=1) may
  # precede its section: the Unreleased entries are its notes. A release always needs its own.
  echo "release: RELEASE_ALLOW_DIRTY=1: CHANGELOG.md has no section for the pre-release $version; its notes are the [Unreleased] section (a rehearsal)" >&2
else
  [[ -n $heading ]] ||
    die "CHANGELOG.md has no section \"## [$version]\": move the Unreleased entries under it first (docs/release.md)"
  [[ $heading =~ ^"## ["${version}"] - "[0-9]{4}-[0-9]{2}-[0-9]{2}[[:space:]]*$ ]] ||
    die "CHANGELOG.md's section \"$heading\" has no release date: write it as \"## [$version] - YYYY-MM-DD\" (docs/release.md)"
fi

# GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as '-'.
rules=$root/config/monitoring/prometheus-rule.yaml
runbooks=$root/docs/runbooks.md
[[ -f $rules && -f $runbooks ]] || die "$rules or $runbooks is missing: the release ships the alerts with their runbooks"
anchors=$(sed -n 's/^#\{1,6\} \(.*\)$/\1/p' "$runbooks" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g')
missing=()
while read -r anchor; do
  grep -qxF -- "$anchor" <<<"$anchors" || missing+=("$anchor")
done < <(sed -n 's/^ *runbook_url: *[^#]*#\([^ "]*\)"\{0,1\} *$/\1/p' "$rules")
grep -q 'runbook_url:' "$rules" || die "$rules has no runbook_url"
((${#missing[@]} == 0)) ||
  die "alerts link runbooks that docs/runbooks.md lacks (a heading per alert): ${missing[*]}"

# value <file> <key>: the first "key: value" of file, quotes dropped; empty when there is none.
value() {
  [[ -f $root/$1 ]] || return 0
  sed -n "s/^ *$2: *[\"']\{0,1\}\([^\"' #]*\)[\"']\{0,1\} *\(#.*\)\{0,1\}$/\1/p" "$root/$1" | head -n1
}
wrong=()
for check in "dist/chart/Chart.yaml version $version" "dist/chart/Chart.yaml appVersion $tag" \
  "config/manager/kustomization.yaml newTag $tag" "config/gitops/operator-overlay/kustomization.yaml newTag $tag"; do
  read -r file key want <<<"$check"
  got=$(value "$file" "$key")
  [[ $got == "$want" ]] || wrong+=("$file: $key is \"${got:-(none)}\", want \"$want\"")
done
if ((${#wrong[@]} > 0)); then
  msg="the tree's manifests do not name release $version (set them as step 1 of docs/release.md's \"Make a release\" says, then make manifests):"
  for w in "${wrong[@]}"; do msg+=$'\n'"  $w"; done
  if [[ ${RELEASE_ALLOW_DIRTY:-} == 1 ]]; then
    echo "release: RELEASE_ALLOW_DIRTY=1: $msg" >&2
  else
    die "$msg"
  fi
fi

if [[ ${RELEASE_ALLOW_DIRTY:-} == 1 ]]; then
  echo "release: RELEASE_ALLOW_DIRTY=1: not checking that the tree is clean and tagged $tag (a rehearsal; do not publish)" >&2
  exit 0
fi
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
  die "$root is not a git work tree: a release is made from a clean checkout of tag $tag (RELEASE_ALLOW_DIRTY=1 for a rehearsal)"
dirty=$(git -C "$root" status --porcelain --untracked-files=normal)
[[ -z $dirty ]] ||
  die "the tree has uncommitted changes; commit or stash them, or set RELEASE_ALLOW_DIRTY=1 for a rehearsal:
$dirty"
git -C "$root" tag --points-at HEAD | grep -qx "$tag" ||
  die "HEAD is not tagged $tag: tag the release commit (git tag -a $tag) first, or set RELEASE_ALLOW_DIRTY=1 for a rehearsal (docs/release.md)"
