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

package kubectlvideo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/videoops/video-operator/internal/version"
)

// ClientVersion is what kubectl video version prints, in kubectl's clientVersion habit.
type ClientVersion struct {
	// Version is the release, set at build time (internal/version); "dev" for a local build.
	Version string `json:"version"`
	// GitCommit is the commit the binary was built from, when the build recorded it.
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func clientVersion() ClientVersion {
	v := ClientVersion{Version: version.Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.GitCommit = s.Value
			}
		}
	}
	return v
}

func newVersionCommand(env *Env) *cobra.Command {
	var output string
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version [--client] [-o json|yaml]",
		Short: "Print the plugin's version",
		Long: "Print the plugin's version; it needs no cluster. The operator's own version is the image tag of\n" +
			"its manager Deployment. --client is accepted, as kubectl's, and changes nothing.",
		Example: "  kubectl video version\n" +
			"  kubectl video version --client -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := struct {
				ClientVersion ClientVersion `json:"clientVersion"`
			}{clientVersion()}
			if output != "" {
				return printStructured(env.Out, output, v)
			}
			c := v.ClientVersion
			commit := ""
			if c.GitCommit != "" {
				commit = ", commit " + c.GitCommit
			}
			_, err := fmt.Fprintf(env.Out, "Client Version: %s (%s, %s%s)\n", c.Version, c.GoVersion, c.Platform, commit)
			return err
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print the plugin's version only (the only version it prints)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: one line)")
	return cmd
}
