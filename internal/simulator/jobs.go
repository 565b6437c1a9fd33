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
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// The job lifecycle ("States and transitions"): a job is in-progress from its submission until
// its end time, then completed or failed. Nothing runs while a job is in progress: its state is
// computed from the clock whenever it is read, which keeps thousands of jobs cheap and makes a
// FakeClock move every job at once.

type jobKind int

const (
	kindPreview jobKind = iota
	kindRender
	kindProjectRender
)

func (k jobKind) String() string {
	return [...]string{"preview", "render", "project_render"}[k]
}

// Job statuses of "States and transitions".
const (
	StatusInProgress = "in-progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Failure codes the simulator produces.
const (
	CodeTextToVideoFailed = "TEXT_TO_VIDEO_FAILED"
	CodeJobNotFound       = "JOB_NOT_FOUND"
)

type jobFailure struct{ code, message string }

type job struct {
	id        string
	kind      jobKind
	endpoint  string
	keyID     string
	projectID string
	created   time.Time
	ends      time.Time
	design    time.Duration // scaled AI storyboard design step, 0 without it
	nominal   time.Duration // unscaled duration of the work after the design step
	failure   *jobFailure
	plan      *jobPlan
	base      string // scheme and host of output URLs
	request   json.RawMessage

	webhook      string
	webhookInput json.RawMessage
	webhookSent  bool
	heapIndex    int

	clearanceCode    string
	clearanceExpires time.Time
	clearanceIssued  int
}

func (j *job) status(now time.Time) string {
	switch {
	case now.Before(j.ends):
		return StatusInProgress
	case j.failure != nil:
		return StatusFailed
	}
	return StatusCompleted
}

// scaled applies the time scale to a nominal duration.
func (s *Server) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.opts.TimeScale)
}

// newJobLocked creates and records a job; s.mu is held.
func (s *Server) newJobLocked(kind jobKind, endpoint, keyID string, plan *jobPlan, base string, raw json.RawMessage) *job {
	now := s.clock.Now()
	j := &job{
		id:           s.uuidLocked(),
		kind:         kind,
		endpoint:     endpoint,
		keyID:        keyID,
		created:      now,
		plan:         plan,
		base:         base,
		request:      raw,
		webhook:      plan.webhook,
		webhookInput: plan.webhookInput,
		heapIndex:    -1,
	}
	nominal := s.opts.PreviewDuration
	if kind != kindPreview {
		nominal = s.renderDurationLocked()
	}
	j.nominal = nominal
	if plan.aiStoryboard {
		span := s.opts.DesignDurationMax - s.opts.DesignDurationMin
		d := s.opts.DesignDurationMin
		if span > 0 {
			d += time.Duration(s.rng.Int64N(int64(span) + 1))
		}
		j.design = s.scaled(d)
	}
	total := j.design + s.scaled(nominal)
	if plan.badSpeaker != "" {
		// Voice-over fails after the design step, a third of the way into the work.
		total = j.design + s.scaled(nominal)/3
		j.failure = &jobFailure{code: CodeTextToVideoFailed,
			message: fmt.Sprintf("Invalid voice speaker %q: no such voice in the voice library", plan.badSpeaker)}
	}
	j.ends = now.Add(total)
	s.jobs[j.id] = j
	s.jobOrder = append(s.jobOrder, j.id)
	s.byKey[keyID]++
	if len(plan.webhookInput) > 0 {
		s.byInput[canonicalJSON(plan.webhookInput)]++
	}
	for _, v := range plan.premiumVoices {
		s.addedVoices[v] = true
	}
	if j.webhook != "" {
		heap.Push(&s.due, j)
	}
	return j
}

// renderDurationLocked is the unscaled duration of a new render: RenderDuration, or a draw up to
// RenderDurationMax; s.mu is held (the draw uses the seeded source).
func (s *Server) renderDurationLocked() time.Duration {
	span := s.opts.RenderDurationMax - s.opts.RenderDuration
	if span <= 0 {
		return s.opts.RenderDuration
	}
	return s.opts.RenderDuration + time.Duration(s.rng.Int64N(int64(span)+1))
}

// uuidLocked returns a version 4 UUID from the seeded source, so runs are reproducible.
func (s *Server) uuidLocked() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := s.rng.Uint64()
		for k := 0; k < 8; k++ {
			b[i+k] = byte(v >> (8 * k)) //nolint:gosec // taking the low byte is the point
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// handleSubmit serves both storyboard endpoints.
func (s *Server) handleSubmit(kind jobKind) http.HandlerFunc {
	endpoint := EndpointCreateStoryboard
	if kind == kindRender {
		endpoint = EndpointRenderStoryboard
	}
	return func(w http.ResponseWriter, r *http.Request) {
		req, raw, ferrs := s.readJSONObject(w, r)
		if ferrs == nil {
			ferrs = validateRequest(req)
		}
		if ferrs == nil {
			ferrs = s.checkBrand(req)
		}
		if len(ferrs) > 0 {
			s.log.Info("Rejected request", "endpoint", endpoint, "fields", len(ferrs), "first", ferrs[0].Name)
			write400(w, ferrs)
			return
		}
		plan := s.planFromRequest(req)
		s.mu.Lock()
		j := s.newJobLocked(kind, endpoint, KeyID(r.Header.Get("Authorization")), plan, s.publicBase(r), raw)
		if plan.saveProject {
			s.projects = append(s.projects, &project{
				Project:    Project{ID: s.uuidLocked(), Name: plan.videoName, LibraryMusic: plan.libraryMusic, Scenes: len(plan.scenes)},
				currentJob: j.id,
			})
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": map[string]any{"jobId": j.id}})
	}
}

func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("jobid")
	now := s.clock.Now()
	s.mu.Lock()
	j := s.jobs[id]
	if j != nil && s.opts.JobRetention > 0 && !now.Before(j.ends.Add(s.opts.JobRetention)) {
		j = nil // cleaned by the service
	}
	if j != nil && s.opts.ScopeJobsByKey && j.keyID != KeyID(r.Header.Get("Authorization")) {
		j = nil // another account's job
	}
	var view map[string]any
	if j != nil {
		view = s.viewLocked(j, now)
		if s.opts.ReflectAuthorization {
			reflectHeader(view, r.Header.Get("Authorization"))
		}
	}
	s.mu.Unlock()
	if j == nil {
		// "Errors": JOB_NOT_FOUND carries the code and the id; the document does not give the
		// HTTP status, the simulator uses 404.
		writeJSON(w, http.StatusNotFound, map[string]any{"success": false, "code": CodeJobNotFound, "message": "Job not found", "id": id})
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// viewLocked is the job status response ("Resources and their fields", job status) at now; it may
// issue a clearance code, hence the lock.
func (s *Server) viewLocked(j *job, now time.Time) map[string]any {
	out := map[string]any{"job_id": j.id, "success": true}
	switch j.status(now) {
	case StatusInProgress:
		elapsed := now.Sub(j.created)
		total := j.ends.Sub(j.created)
		pct := 0
		if total > 0 {
			pct = min(99, int(math.Floor(100*float64(elapsed)/float64(total))))
		}
		out["data"] = map[string]any{
			"status":                StatusInProgress,
			"renderProgress":        pct,
			"renderProgressMessage": s.progressMessage(j, elapsed, total),
			"renderState":           "RUNNING",
			"progress":              pct,
		}
	case StatusFailed:
		out["success"] = false
		out["data"] = map[string]any{"status": StatusFailed, "error_code": j.failure.code, "error_message": j.failure.message}
	default:
		out["data"] = s.completedDataLocked(j, now)
	}
	return out
}

func (s *Server) progressMessage(j *job, elapsed, total time.Duration) string {
	if elapsed < j.design {
		return "Designing the storyboard with AI"
	}
	frac := float64(elapsed-j.design) / float64(max(total-j.design, 1))
	if j.kind == kindPreview {
		if frac < 0.5 {
			return "Building the storyboard"
		}
		return "Generating scene thumbnails"
	}
	switch {
	case frac < 0.25:
		return "Generating the voice-over"
	case frac < 0.75:
		return "Rendering scenes"
	}
	return "Encoding the video"
}

func (s *Server) fileURL(j *job, name string) string {
	return j.base + "/files/" + j.id + "/" + name
}

// completedDataLocked is the data of a completed job: a storyboard for a preview, outputs for a
// render.
func (s *Server) completedDataLocked(j *job, now time.Time) map[string]any {
	p := j.plan
	data := map[string]any{"status": StatusCompleted, "progress": 100, "renderProgress": 100}
	if j.kind == kindPreview {
		scenes := make([]map[string]any, len(p.scenes))
		for i, sc := range p.scenes {
			scenes[i] = map[string]any{
				"sceneIndex": i + 1,
				"thumbnail":  s.fileURL(j, "scene-"+strconv.Itoa(i+1)+".jpg"),
				"story":      sc.story,
				"duration":   json.Number(formatSeconds(sc.seconds)),
			}
		}
		data["storyboard"] = map[string]any{"scenes": scenes, "renderParams": p.renderParams}
		data["thumbnail"] = s.fileURL(j, "scene-1.jpg")
		return data
	}
	data["videoURL"] = s.fileURL(j, "video.mp4")
	data["videoShareURL"] = j.base + "/share/" + j.id
	data["videoEmbedURL"] = j.base + "/embed/" + j.id
	data["audioURL"] = s.fileURL(j, "audio.mp3")
	data["thumbnail"] = s.fileURL(j, "thumbnail.jpg")
	data["srtFile"] = s.fileURL(j, "captions.srt")
	data["txtFile"] = s.fileURL(j, "transcript.txt")
	data["vttFile"] = s.fileURL(j, "captions.vtt")
	data["videoDuration"] = json.Number(formatSeconds(p.videoSeconds()))
	data["encodingDuration"] = json.Number(formatSeconds(math.Round(j.nominal.Seconds()*8) / 10))
	if p.aiVisuals > 0 {
		data["aiCreditsUsed"] = json.Number(strconv.FormatFloat(p.aiCredits, 'f', -1, 64))
	}
	if p.libraryMusic {
		code, exp := s.clearanceLocked(j, now)
		data["platformClearanceCode"] = code
		data["platformClearanceExpiresAt"] = exp.UTC().Format(time.RFC3339)
	}
	return data
}

func formatSeconds(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// jobHeap orders jobs with a webhook by end time.
type jobHeap []*job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(a, b int) bool { return h[a].ends.Before(h[b].ends) }
func (h jobHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].heapIndex, h[b].heapIndex = a, b
}
func (h *jobHeap) Push(x any) {
	j := x.(*job)
	j.heapIndex = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	j.heapIndex = -1
	*h = old[:len(old)-1]
	return j
}
