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
	"net/http"
	"strings"
	"time"
)

// Brand is a video brand ("Resources and their fields", video brand).
type Brand struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Project is a project the account owns. The document does not give project records' fields;
// the simulator lists id, name and status ("ready" or "rendering").
type Project struct {
	ID   string
	Name string
	// LibraryMusic makes the project's renders use library music, hence carry a clearance code.
	LibraryMusic bool
	// Scenes is the number of scenes of its video; zero means 3.
	Scenes int
}

type project struct {
	Project
	currentJob string // the latest render's job id
}

// DefaultBrands are the brands of a new simulator.
func DefaultBrands() []Brand {
	return []Brand{
		{ID: "3b0c5a8e-1f2d-4c6b-9a7e-5d4c3b2a1f01", Name: "Acme Corporate"},
		{ID: "7d9e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f02", Name: "Acme Social"},
	}
}

// DefaultProjects are the projects of a new simulator: one using library music, one not.
func DefaultProjects() []Project {
	return []Project{
		{ID: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a801", Name: "Quarterly update", LibraryMusic: true, Scenes: 4},
		{ID: "9a8b7c6d-5e4f-4a3b-b2c1-d0e9f8a7b602", Name: "Product tour", Scenes: 3},
	}
}

// DefaultVoices are the voice names known to a new simulator.
func DefaultVoices() []string {
	return []string{"Matthew", "Joanna", "Amy", "Brian", "Emma", "Olivia", "Joey", "Justin", "Kendra",
		"Kimberly", "Salli", "Ivy", "Aria", "Guy", "Jenny", "Davis", "Ryan", "Sonia", "Natasha", "William"}
}

func (s *Server) handleListBrands(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	brands := append([]Brand{}, s.brands...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, brands)
}

// checkBrand rejects a brand the account does not have. The document lists "brand" among what
// only the service knows; answering 400 on the field is the simulator's reading.
func (s *Server) checkBrand(req map[string]any) []FieldError {
	id, _ := req["brandId"].(string)
	name, _ := req["brandName"].(string)
	if id == "" && name == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.brands {
		if (id != "" && b.ID == id) || (name != "" && strings.EqualFold(b.Name, name)) {
			return nil
		}
	}
	if id != "" {
		return []FieldError{{Name: "brandId", Errors: fmt.Sprintf("brand %q not found", id)}}
	}
	return []FieldError{{Name: "brandName", Errors: fmt.Sprintf("brand %q not found", name)}}
}

func (s *Server) handleListProjects(w http.ResponseWriter, _ *http.Request) {
	now := s.clock.Now()
	s.mu.Lock()
	list := make([]map[string]any, 0, len(s.projects))
	for _, p := range s.projects {
		status := "ready"
		if s.renderingLocked(p, now) {
			status = "rendering"
		}
		list = append(list, map[string]any{"id": p.ID, "name": p.Name, "status": status})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": list})
}

func (s *Server) renderingLocked(p *project, now time.Time) bool {
	j := s.jobs[p.currentJob]
	return j != nil && j.kind != kindPreview && now.Before(j.ends)
}

// handleRenderProject serves POST /v2/projects/{projectid}/render: 404 for an unknown project,
// 409 while one of its renders is in progress ("States and transitions").
func (s *Server) handleRenderProject(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("projectid")
	now := s.clock.Now()
	s.mu.Lock()
	var p *project
	for _, x := range s.projects {
		if x.ID == id {
			p = x
		}
	}
	if p == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"success": false, "message": "Project not found"})
		return
	}
	if s.renderingLocked(p, now) {
		s.mu.Unlock()
		writeJSON(w, http.StatusConflict, map[string]any{"success": false, "message": "Project is already being rendered"})
		return
	}
	plan := &jobPlan{videoName: p.Name, libraryMusic: p.LibraryMusic}
	n := p.Scenes
	if n <= 0 {
		n = 3
	}
	for i := 1; i <= n; i++ {
		plan.scenes = append(plan.scenes, plannedScene{story: fmt.Sprintf("Scene %d of %s.", i, p.Name), seconds: 6})
	}
	j := s.newJobLocked(kindProjectRender, EndpointRenderProject, KeyID(r.Header.Get("Authorization")), plan, s.publicBase(r), nil)
	j.projectID = p.ID
	p.currentJob = j.id
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": map[string]any{"jobId": j.id}})
}
