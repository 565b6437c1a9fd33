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

package v1alpha1

// JobStatusOf returns the job status both job kinds share (VideoStoryboard, VideoRender), or nil
// for any other object.
func JobStatusOf(obj any) *JobStatus {
	switch v := obj.(type) {
	case *VideoStoryboard:
		return &v.Status.JobStatus
	case *VideoRender:
		return &v.Status.JobStatus
	}
	return nil
}
