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
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

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
	var overwrite bool
	var output string
	cmd := &cobra.Command{
		Use:   "outputs vr/NAME [--download DIR [--overwrite]] [-o json|yaml]",
		Short: "List the output URLs of a finished render, and download its files",
		Example: "  kubectl video outputs vr/meet-video-operator\n" +
			"  kubectl video outputs vr/meet-video-operator --download ./out\n" +
			"  kubectl video outputs vr/meet-video-operator -o json | jq -r .videoUrl",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseTargetOf(args, KindRender, "outputs")
			if err != nil {
				return err
			}
			if overwrite && dir == "" {
				return fmt.Errorf("--overwrite needs --download DIR")
			}
			if err := checkStructured(output); err != nil {
				return err
			}
			return Outputs(cmd.Context(), env, t.Name, DownloadOptions{Dir: dir, Overwrite: overwrite, Output: output})
		},
	}
	cmd.Flags().StringVar(&dir, "download", "", "download the files (video, audio, thumbnail, captions, transcript) into this directory")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace files of the same name in the download directory (default: leave them and fail)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml, status.outputs as the API has it (default: a table)")
	return cmd
}

// DownloadOptions are the flags of outputs --download.
type DownloadOptions struct {
	// Dir receives the files; nothing is downloaded when it is empty.
	Dir string
	// Overwrite replaces files of the same name in Dir; without it they are left as they are.
	Overwrite bool
	// Output is -o: json or yaml print status.outputs for scripts instead of the table, and
	// the download report goes to standard error so that standard output stays parseable.
	Output string
}

// Outputs lists a render's outputs and, with o.Dir, downloads its files into it.
func Outputs(ctx context.Context, env *Env, name string, o DownloadOptions) error {
	vr, err := getRender(ctx, env.Client, env.Namespace, name)
	if err != nil {
		return err
	}
	outs := outputList(vr.Status.Outputs)
	if len(outs) == 0 {
		return fmt.Errorf("vr/%s has no outputs yet (phase %s, progress %s): see %s",
			name, orDash(string(vr.Status.Phase)), progressText(vr.Status.Progress), hint("status", Target{KindRender, name}, vr.Namespace))
	}
	if vr.Status.JobGeneration != vr.Generation {
		_, _ = fmt.Fprintf(env.ErrOut, "warning: these outputs are of generation %d; the spec is at generation %d\n", vr.Status.JobGeneration, vr.Generation)
	}
	if o.Output != "" {
		if err := printStructured(env.Out, o.Output, vr.Status.Outputs); err != nil {
			return err
		}
		if o.Dir == "" {
			return nil
		}
		report := *env
		report.Out = env.ErrOut
		return download(ctx, &report, vr, outs, o)
	}
	w := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	for _, o := range outs {
		_, _ = fmt.Fprintf(w, "%s\t%s\n", o.Name, o.URL)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if o.Dir == "" {
		return nil
	}
	return download(ctx, env, vr, outs, o)
}

// download fetches every file output into dir. Files are opened through an os.Root, so no name
// (they come from URLs) can write outside dir.
func download(ctx context.Context, env *Env, vr *videov1alpha1.VideoRender, outs []output, o DownloadOptions) error {
	dir := o.Dir
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
	for _, out := range outs {
		if !out.File {
			continue
		}
		name := uniqueName(fileName(out), used)
		if _, err := root.Lstat(name); err == nil && !o.Overwrite {
			errs = append(errs, fmt.Errorf("%s of vr/%s: %s exists: not downloaded (use --overwrite to replace it)", out.Name, vr.Name, filepath.Join(dir, name)))
			continue
		}
		n, err := fetchTo(ctx, env.HTTP, root, out.URL, name, o.Overwrite)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s of vr/%s: %w", out.Name, vr.Name, err))
			continue
		}
		_, _ = fmt.Fprintf(env.Out, "Downloaded %s to %s (%d bytes)\n", out.Name, filepath.Join(dir, name), n)
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

// downloadIdleTimeout ends a download that receives nothing for this long.
var downloadIdleTimeout = time.Minute

var errIdle = errors.New("download stalled")

// idleReader pushes the idle deadline back each time data arrives.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.timer.Reset(downloadIdleTimeout)
	}
	return n, err
}

// fetchTo downloads one URL into root/name, through a temporary name so that a failed download
// never leaves a partial file under the final name. Without overwrite, a file that appeared
// under the final name meanwhile is kept and the download removed.
func fetchTo(ctx context.Context, hc *http.Client, root *os.Root, rawURL, name string, overwrite bool) (n int64, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, fmt.Errorf("not an http(s) URL: %q", rawURL)
	}
	// A download takes as long as the file needs, but ends when nothing arrives for a while.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(downloadIdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	defer func() {
		if err != nil && errors.Is(context.Cause(ctx), errIdle) {
			err = fmt.Errorf("%w (no data for %s)", err, downloadIdleTimeout)
		}
	}()
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
	n, err = io.Copy(f, &idleReader{r: resp.Body, timer: idle})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(part)
		return n, fmt.Errorf("writing %s: %w", name, err)
	}
	if overwrite {
		if err := root.Rename(part, name); err != nil {
			_ = root.Remove(part)
			return n, fmt.Errorf("renaming %s: %w", part, err)
		}
		return n, nil
	}
	// A hard link fails when the name exists: nothing of the user's is replaced. Where the file
	// system has no hard links, the name is checked and the file renamed.
	err = root.Link(part, name)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := root.Lstat(name); errors.Is(serr, fs.ErrNotExist) {
			err = root.Rename(part, name)
		}
	}
	_ = root.Remove(part)
	if errors.Is(err, fs.ErrExist) {
		return n, fmt.Errorf("%s appeared meanwhile: not replaced (use --overwrite to replace it)", name)
	}
	if err != nil {
		return n, fmt.Errorf("keeping the download as %s: %w", name, err)
	}
	return n, nil
}
