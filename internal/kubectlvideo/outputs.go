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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// output is one URL of a render's outputs.
type output struct {
	Name string
	URL  string
	// File is true for a downloadable file, false for a web page (share, embed).
	File bool
	// Ext is the extension a downloaded file gets when its URL names none.
	Ext string
}

// outputList lists the outputs that are set, in a fixed order.
func outputList(o *videov1alpha1.RenderOutputs) []output {
	if o == nil {
		return nil
	}
	all := []output{
		{"video", o.VideoURL, true, ".mp4"},
		{"audio", o.AudioURL, true, ".mp3"},
		{"thumbnail", o.Thumbnail, true, ".jpg"},
		{"srt", o.SRTFile, true, ".srt"},
		{"vtt", o.VTTFile, true, ".vtt"},
		{"transcript", o.TXTFile, true, ".txt"},
		{"share", o.VideoShareURL, false, ""},
		{"embed", o.VideoEmbedURL, false, ""},
	}
	var out []output
	for _, x := range all {
		if x.URL != "" {
			out = append(out, x)
		}
	}
	return out
}

func newOutputsCommand(env *Env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "outputs vr/NAME [--download DIR]",
		Short: "List the output URLs of a finished render, and download its files",
		Example: "  kubectl video outputs vr/meet-video-operator\n" +
			"  kubectl video outputs vr/meet-video-operator --download ./out",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseTargetOf(args, KindRender, "outputs")
			if err != nil {
				return err
			}
			return Outputs(cmd.Context(), env, t.Name, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "download", "", "download the files (video, audio, thumbnail, captions, transcript) into this directory")
	return cmd
}

// Outputs lists a render's outputs and, with dir, downloads its files into dir.
func Outputs(ctx context.Context, env *Env, name, dir string) error {
	vr, err := getRender(ctx, env.Client, env.Namespace, name)
	if err != nil {
		return err
	}
	outs := outputList(vr.Status.Outputs)
	if len(outs) == 0 {
		return fmt.Errorf("vr/%s has no outputs yet (phase %s, progress %s): see kubectl video status vr/%s",
			name, orDash(string(vr.Status.Phase)), progressText(vr.Status.Progress), name)
	}
	if vr.Status.JobGeneration != vr.Generation {
		_, _ = fmt.Fprintf(env.ErrOut, "warning: these outputs are of generation %d; the spec is at generation %d\n", vr.Status.JobGeneration, vr.Generation)
	}
	w := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	for _, o := range outs {
		_, _ = fmt.Fprintf(w, "%s\t%s\n", o.Name, o.URL)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	return download(ctx, env, vr, outs, dir)
}

// download fetches every file output into dir. Files are opened through an os.Root, so no name
// (they come from URLs) can write outside dir.
func download(ctx context.Context, env *Env, vr *videov1alpha1.VideoRender, outs []output, dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	defer func() { _ = root.Close() }()
	used := map[string]bool{}
	var errs []error
	for _, o := range outs {
		if !o.File {
			continue
		}
		name := uniqueName(fileName(o), used)
		n, err := fetchTo(ctx, env.HTTP, root, o.URL, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s of vr/%s: %w", o.Name, vr.Name, err))
			continue
		}
		_, _ = fmt.Fprintf(env.Out, "Downloaded %s to %s (%d bytes)\n", o.Name, path.Join(dir, name), n)
	}
	return errors.Join(errs...)
}

// unsafeChars are replaced in file names taken from URLs.
var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileName is the last segment of the URL's path, reduced to safe characters, or the output's
// name with its usual extension.
func fileName(o output) string {
	base := ""
	if u, err := url.Parse(o.URL); err == nil {
		base = path.Base(u.Path)
	}
	base = strings.Trim(unsafeChars.ReplaceAllString(base, "_"), "._")
	if base == "" {
		return o.Name + o.Ext
	}
	if path.Ext(base) == "" {
		base += o.Ext
	}
	if len(base) > 100 {
		base = base[len(base)-100:]
	}
	return base
}

// uniqueName prefixes a name already used by another output of the same render.
func uniqueName(name string, used map[string]bool) string {
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%d-%s", i, name)
	}
	used[name] = true
	return name
}

// fetchTo downloads one URL into root/name, through a temporary name so that a failed download
// never leaves a partial file under the final name.
func fetchTo(ctx context.Context, hc *http.Client, root *os.Root, rawURL, name string) (n int64, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, fmt.Errorf("not an http(s) URL: %q", rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("fetching %s: HTTP %d", rawURL, resp.StatusCode)
	}
	part := name + ".part"
	f, err := root.Create(part)
	if err != nil {
		return 0, fmt.Errorf("creating %s: %w", part, err)
	}
	n, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(part)
		return n, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := root.Rename(part, name); err != nil {
		return n, fmt.Errorf("renaming %s: %w", part, err)
	}
	return n, nil
}
