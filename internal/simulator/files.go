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

package simulator

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Output files of completed jobs, served by the simulator itself so that every URL in a job
// answer can be fetched. They are small placeholders with the right content type (the media
// files are not playable), except the captions and transcript, which hold the job's narration,
// and the thumbnails, which are real images (thumbnails.go).
// Like the real service's output links they need no Authorization header.

// Placeholder bytes: the file signatures of each format, so that sniffers recognise them.
var (
	placeholderMP4 = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 32)...)
	placeholderMP3 = append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), make([]byte, 32)...)
)

// completedJob returns a completed, not cleaned job, or nil.
func (s *Server) completedJob(id string) *job {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[EndpointFiles]++
	j := s.jobs[id]
	if j == nil || j.status(now) != StatusCompleted ||
		(s.opts.JobRetention > 0 && !now.Before(j.ends.Add(s.opts.JobRetention))) {
		return nil
	}
	return j
}

func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	j := s.completedJob(r.PathValue("jobid"))
	if j == nil {
		http.NotFound(w, r)
		return
	}
	name := r.PathValue("name")
	p := j.plan
	var ctype string
	var body []byte
	if j.kind == kindPreview {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "scene-"), ".jpg"))
		if err != nil || !strings.HasPrefix(name, "scene-") || n < 1 || n > len(p.scenes) {
			http.NotFound(w, r)
			return
		}
		ctype, body = "image/jpeg", thumbnailJPEG(n)
	} else {
		switch name {
		case "video.mp4":
			ctype, body = "video/mp4", placeholderMP4
		case "audio.mp3":
			ctype, body = "audio/mpeg", placeholderMP3
		case "thumbnail.jpg":
			ctype, body = "image/jpeg", thumbnailJPEG(1)
		case "captions.srt":
			ctype, body = "application/x-subrip", []byte(captions(p, false))
		case "captions.vtt":
			ctype, body = "text/vtt", []byte(captions(p, true))
		case "transcript.txt":
			ctype, body = "text/plain; charset=utf-8", []byte(p.narration()+"\n")
		default:
			http.NotFound(w, r)
			return
		}
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// captions renders the scenes as SRT or WebVTT cues, one per scene.
func captions(p *jobPlan, vtt bool) string {
	var b strings.Builder
	if vtt {
		b.WriteString("WEBVTT\n\n")
	}
	at := 0.0
	for i, sc := range p.scenes {
		start, end := stamp(at, vtt), stamp(at+sc.seconds, vtt)
		at += sc.seconds
		if !vtt {
			fmt.Fprintf(&b, "%d\n", i+1)
		}
		fmt.Fprintf(&b, "%s --> %s\n%s\n\n", start, end, sc.story)
	}
	return b.String()
}

func stamp(secs float64, vtt bool) string {
	d := time.Duration(secs * float64(time.Second))
	h, m := int(d.Hours()), int(d.Minutes())%60
	sec, ms := int(d.Seconds())%60, int(d.Milliseconds())%1000
	sep := ","
	if vtt {
		sep = "."
	}
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", h, m, sec, sep, ms)
}

// handlePage serves the share and embed pages of a completed render.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	j := s.completedJob(r.PathValue("jobid"))
	if j == nil || j.kind == kindPreview {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body><video controls src=%q></video></body></html>\n",
		html.EscapeString(j.plan.videoName), s.fileURL(j, "video.mp4"))
}
