/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package deploy

import (
	"fmt"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// secretFileReadable reports whether container c of pod spec can read the files the kubelet
// writes for Secret volume v, and says why not. The kubelet writes a Secret volume's files as
// root (uid 0, gid 0) with the volume's defaultMode (0644 when unset); only with the pod's
// fsGroup does it hand the files to that group and add group read (0440) to their mode
// (pkg/volume SetVolumeOwnership; kubernetes/kubernetes#57923, #81089). Without fsGroup, a file
// of mode 0400 is readable by root only.
func secretFileReadable(spec corev1.PodSpec, c corev1.Container, v corev1.Volume) (bool, string) {
	mode := int32(0o644)
	if v.Secret.DefaultMode != nil {
		mode = *v.Secret.DefaultMode
	}
	var uid, gid *int64
	var fsGroup *int64
	var supplemental []int64
	if psc := spec.SecurityContext; psc != nil {
		uid, gid, fsGroup, supplemental = psc.RunAsUser, psc.RunAsGroup, psc.FSGroup, psc.SupplementalGroups
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	if uid == nil {
		return true, "no runAsUser: the image's user, not checked here"
	}
	if *uid == 0 {
		return true, "root"
	}
	fileGroup := int64(0)
	if fsGroup != nil {
		fileGroup = *fsGroup
		mode |= 0o440
	}
	inGroup := (gid != nil && *gid == fileGroup) || fsGroup != nil // fsGroup is always a supplemental group of the pod
	for _, g := range supplemental {
		inGroup = inGroup || g == fileGroup
	}
	switch {
	case mode&0o004 != 0:
		return true, "world-readable"
	case inGroup && mode&0o040 != 0:
		return true, "group-readable"
	}
	why := fmt.Sprintf("Secret %s is mounted with mode %#o, its files owned by root:%d; the container runs as uid %d gid %v, fsGroup %v",
		v.Secret.SecretName, mode, fileGroup, *uid, deref(gid), deref(fsGroup))
	return false, why
}

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// unreadableSecretMounts lists the Secret volumes the manager container of d mounts and cannot
// read.
func unreadableSecretMounts(d appsv1.Deployment) []string {
	spec := d.Spec.Template.Spec
	var out []string
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			for _, v := range spec.Volumes {
				if v.Name != m.Name || v.Secret == nil {
					continue
				}
				if ok, why := secretFileReadable(spec, c, v); !ok {
					out = append(out, fmt.Sprintf("container %s, %s: %s", c.Name, m.MountPath, why))
				}
			}
		}
	}
	return out
}

// TestManagerCanReadTheSecretsItMounts: the chart's metrics.certSecret (the TLS certificate the
// documented ServiceMonitor verifies, docs/monitoring.md) and callbacks.enabled (the callback
// signing key), and config/callbacks, mount a Secret with defaultMode 0400 into a manager that
// runs as uid 65532 with no fsGroup. The kubelet writes those files as root:root 0400, so the
// manager gets "permission denied" on tls.key (--metrics-cert-dir, which the manager's start
// checks and controller-runtime's certificate watcher reads) and on the callback key
// (--callback-key-file, read at start): the manager exits at start and crash-loops, in every
// installation that turns either knob on. envtest runs no kubelet, so no other test sees it.
func TestManagerCanReadTheSecretsItMounts(t *testing.T) {
	cases := map[string][]byte{
		// The chart's default podSecurityContext (runAsUser 65532, no fsGroup) with the knob
		// docs/monitoring.md gives for a verified scrape.
		"chart with metrics.certSecret": helmTemplate(t, "--set", "metrics.certSecret=video-operator-metrics-tls"),
		// The same with callbacks (docs/callbacks.md).
		"chart with callbacks.enabled": helmTemplate(t, "--set", "callbacks.enabled=true",
			"--set", "callbacks.publicURL=https://video-operator.example.com"),
		"kustomize config/callbacks": kustomizeBuild(t, filepath.Join(root, "config", "callbacks")),
	}
	for name, rendered := range cases {
		t.Run(name, func(t *testing.T) {
			var d appsv1.Deployment
			typed(t, decode(t, rendered), "Deployment", "", &d)
			mounts := 0
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					mounts++
				}
			}
			if mounts == 0 {
				t.Fatal("the manager mounts no Secret: the check below tests nothing")
			}
			for _, u := range unreadableSecretMounts(d) {
				t.Errorf("the manager cannot read what it mounts: %s", u)
			}
		})
	}
}
