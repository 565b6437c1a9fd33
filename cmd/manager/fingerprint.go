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

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/videoops/video-operator/internal/credentials"
)

// DefaultFingerprintKeySecret is the Secret, in the manager's namespace, that holds the
// installation's key fingerprint secret. The manager's Role (config/rbac/leader_election_role.yaml)
// may read only this name.
const DefaultFingerprintKeySecret = "video-operator-fingerprint-key"

// fingerprintKey returns the installation's secret that keys API key fingerprints
// (docs/backup-restore.md, "Key fingerprints"): from --fingerprint-key-file when set; otherwise
// from Secret --fingerprint-key-secret in the manager's namespace, which it creates once if
// absent. A file that cannot be read is an error (it was asked for). A Secret that cannot be read
// or created, or a manager that does not know its namespace (run out of a cluster without
// --fingerprint-key-namespace), is not: the manager starts with a secret of its own process and
// says so, rather than crash-looping. Its fingerprints are then not recognised after a restart,
// which costs nothing but a truer reason (APIKeyChanged instead of a job not found) when a job is
// unknown to a key.
func fingerprintKey(ctx context.Context, log logr.Logger, reader client.Reader, writer client.Writer, opts options) ([]byte, error) {
	if opts.fingerprintKeyFile != "" {
		b, err := os.ReadFile(opts.fingerprintKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading --fingerprint-key-file: %w", err)
		}
		key := []byte(strings.TrimSpace(string(b)))
		if len(key) < credentials.MinFingerprintKey {
			return nil, fmt.Errorf("--fingerprint-key-file holds %d bytes, fewer than %d", len(key), credentials.MinFingerprintKey)
		}
		return key, nil
	}
	ns := opts.fingerprintKeyNamespace
	if ns == "" {
		// An empty flag given explicitly means the default, as it always did.
		ns = managerNamespace()
	}
	if ns == "" || opts.fingerprintKeySecret == "" {
		log.Info("The manager's namespace is unknown (not in a pod, no --fingerprint-key-namespace) or --fingerprint-key-secret is empty: " +
			"API key fingerprints are keyed with a secret of this process, and a fingerprint recorded before a restart is not recognised")
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	key, err := credentials.EnsureFingerprintKey(ctx, reader, writer, ns, opts.fingerprintKeySecret)
	if err != nil {
		log.Error(err, "The installation's key fingerprint Secret could not be read or created: API key fingerprints are keyed "+
			"with a secret of this process until the manager restarts with it. Check the manager's Role in its namespace "+
			"(get on this Secret, create on Secrets)", "namespace", ns, "secret", opts.fingerprintKeySecret)
		return nil, nil
	}
	return key, nil
}
