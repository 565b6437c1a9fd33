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
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The contact sheet is one HTML file with inline CSS and the thumbnails embedded as data: URIs,
// so it can be mailed, attached to a pull request or opened offline. A thumbnail that cannot be
// fetched is linked by its URL instead, with a note on its card.

// maxThumbnailBytes bounds one embedded thumbnail.
const maxThumbnailBytes = 5 << 20

// thumbnailTimeout bounds the fetch of one thumbnail.
const thumbnailTimeout = 20 * time.Second

// contactSheet is what the template shows.
type contactSheet struct {
	Namespace, Name, VideoName string
	Generation                 int64
	JobID                      string
	Scenes                     []sceneCard
	Params                     []param
	Renders                    []string
	Generated                  string
}

// sceneCard is one scene: its image (embedded, or linked when the fetch failed) and narration.
type sceneCard struct {
	Index int
	// Src is a data: URI built here from a fetched image, or empty.
	Src template.URL
	// Link is the thumbnail's URL, shown when it could not be embedded.
	Link  string
	Note  string
	Story string
}

func newContactSheet(ctx context.Context, env *Env, vsb *videov1alpha1.VideoStoryboard, refs []videov1alpha1.VideoRender) *contactSheet {
	s := &contactSheet{
		Namespace: vsb.Namespace, Name: vsb.Name, VideoName: vsb.Spec.VideoName, Generation: vsb.Generation,
		JobID: vsb.Status.JobID, Params: renderParams(vsb.Status.Preview), Renders: renderSummaries(refs),
		Generated: env.Now().UTC().Format(time.RFC3339),
	}
	for i, sc := range vsb.Status.Preview.Scenes {
		card := sceneCard{Index: i + 1, Story: visible(sc.Story), Link: sc.Thumbnail}
		if sc.Thumbnail == "" {
			card.Note = "the service gave no thumbnail for this scene"
		} else if src, err := fetchImage(ctx, env.HTTP, sc.Thumbnail); err != nil {
			card.Note = fmt.Sprintf("thumbnail not embedded (%v): linked instead", err)
		} else {
			card.Src = src
		}
		s.Scenes = append(s.Scenes, card)
	}
	return s
}

// fetchImage reads an image and returns it as a data: URI. Only http(s) URLs and image content
// are accepted, so nothing but an image ends up in the page.
func fetchImage(ctx context.Context, hc *http.Client, raw string) (template.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("not an http(s) URL")
	}
	ctx, cancel := context.WithTimeout(ctx, thumbnailTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("building the request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxThumbnailBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading: %w", err)
	}
	if len(body) > maxThumbnailBytes {
		return "", fmt.Errorf("larger than %d bytes", maxThumbnailBytes)
	}
	// The bytes decide, not the server's Content-Type: only an image may become a data: URI.
	ctype := http.DetectContentType(body)
	switch ctype {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return "", fmt.Errorf("not an image (%s)", ctype)
	}
	// The URI is built from checked image bytes only, so it is safe to mark as a URL.
	return template.URL("data:" + ctype + ";base64," + base64.StdEncoding.EncodeToString(body)), nil //nolint:gosec
}

func (s *contactSheet) embedded() int {
	n := 0
	for _, c := range s.Scenes {
		if c.Src != "" {
			n++
		}
	}
	return n
}

func (s *contactSheet) notes() []string {
	var out []string
	for _, c := range s.Scenes {
		if c.Note != "" {
			out = append(out, fmt.Sprintf("scene %d: %s", c.Index, c.Note))
		}
	}
	return out
}

func (s *contactSheet) write(w io.Writer) error {
	if err := sheetTemplate.Execute(w, s); err != nil {
		return fmt.Errorf("rendering the contact sheet: %w", err)
	}
	return nil
}

func (s *contactSheet) writeFile(path string) (err error) {
	f, err := os.Create(path) //nolint:gosec // the user names the file to write
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
	}()
	return s.write(f)
}

var sheetTemplate = template.Must(template.New("sheet").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.VideoName}} — storyboard preview vsb/{{.Name}}</title>
<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #1f2328; background: #f6f8fa; }
  header h1 { margin: 0 0 4px; font-size: 22px; }
  header p { margin: 0; color: #57606a; font-size: 13px; }
  .sheet { display: grid; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); gap: 16px; margin: 20px 0; }
  .scene-card { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; overflow: hidden; }
  .scene-card img { display: block; width: 100%; aspect-ratio: 16 / 9; object-fit: cover; background: #eaeef2; }
  .scene-card .missing { aspect-ratio: 16 / 9; display: flex; align-items: center; justify-content: center; background: #eaeef2; color: #57606a; font-size: 12px; padding: 8px; text-align: center; }
  .scene-card h2 { font-size: 13px; margin: 10px 12px 4px; color: #57606a; text-transform: uppercase; letter-spacing: .04em; }
  .scene-card p.story { margin: 0 12px 12px; font-size: 14px; line-height: 1.4; }
  .scene-card p.note { margin: 0 12px 12px; font-size: 12px; color: #9a6700; word-break: break-all; }
  section { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 12px 16px; margin-bottom: 16px; }
  section h2 { font-size: 15px; margin: 0 0 8px; }
  table { border-collapse: collapse; font-size: 13px; }
  td { padding: 2px 16px 2px 0; vertical-align: top; }
  td:first-child { color: #57606a; white-space: nowrap; }
  code { font-size: 12px; }
</style>
</head>
<body>
<header>
  <h1>{{.VideoName}}</h1>
  <p>Storyboard preview <code>vsb/{{.Name}}</code> in namespace <code>{{.Namespace}}</code>, generation {{.Generation}}{{if .JobID}}, job <code>{{.JobID}}</code>{{end}} · {{len .Scenes}} scenes · generated {{.Generated}}</p>
</header>
<div class="sheet">
{{- range .Scenes}}
  <article class="scene-card" data-scene="{{.Index}}">
    {{- if .Src}}
    <img src="{{.Src}}" alt="Thumbnail of scene {{.Index}}">
    {{- else}}
    <div class="missing">{{if .Link}}<a href="{{.Link}}">thumbnail of scene {{.Index}}</a>{{else}}no thumbnail{{end}}</div>
    {{- end}}
    <h2>Scene {{.Index}}</h2>
    <p class="story">{{.Story}}</p>
    {{- if .Note}}
    <p class="note">{{.Note}}</p>
    {{- end}}
  </article>
{{- end}}
</div>
<section class="params">
  <h2>Render parameters</h2>
  {{- if .Params}}
  <table>
  {{- range .Params}}
    <tr><td>{{.Name}}</td><td><code>{{.Value}}</code></td></tr>
  {{- end}}
  </table>
  {{- else}}
  <p>The service returned none.</p>
  {{- end}}
</section>
<section class="renders">
  <h2>Renders</h2>
  {{- if .Renders}}
  <p>Referred to by {{range $i, $r := .Renders}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}.</p>
  {{- else}}
  <p>No VideoRender refers to this storyboard yet. To approve and pay for the render: <code>kubectl video render vsb/{{.Name}} -n {{.Namespace}}</code></p>
  {{- end}}
</section>
</body>
</html>
`))
